// Drumwright's pendulums (seed 003; digest seed-003-drumwright.md 9.2, 9.3; the models and every
// chosen parameter in bench/drumwright_pendulum.h), to CSVs in DIR and Markdown tables on stdout:
//   fig4.csv        Fig. 4's rod, k 1e15, b 1, 1 s from horizontal, per h from 0.1 to 1e-4: the
//                   largest |phi| by the paper's n x n form (61)-(62), (53) and by the velocity
//                   form, E(1 s) - E(0) and the largest |E(t) - E(0)|, and the error of q(1 s)
//                   against the rigid rod (RK4 in minimal coordinates at 1e-5 s), relative to
//                   |q_ref|; the energy error against semi-implicit Euler's first-order modified
//                   energy term (h/2) c theta' sin theta (bench/drumwright_pendulum.h); slopes
//                   fitted over h 1e-3 .. 1e-4 and over the whole sweep; on stdout, the energy
//                   error over the first and the tenth second of 10 s at h 1e-2 and 1e-3;
//   fig4_trace.csv  |phi(t)|, E(t) - E(0) and E(t) - E(0) - (h/2) c theta' sin theta at h 0.1,
//                   1e-2, 1e-3, 1e-4 (n x n form), at most ~1000 rows a run;
//   fig6.csv        Fig. 6's limit pendulum, k 1e12, b 0, 2 s from theta = pi/2, h 1e-5 .. 1e-8
//                   by the scalar step: theta(t) every 2 ms (window 0) and within 20 us of the free
//                   swing's impact time every step, at most 400 rows (window 1);
//   fig6_restitution.csv  per h: the free swing's exact impact time (the elliptic quarter
//                   period), the first impact of that run (its contact steps, theta' in and
//                   out, the deepest theta), the restitution of a run started at the limit, theta
//                   = 0 with the free swing's impact speed (no entry depth), and implicit Euler's
//                   (1 + (omega h)^2)^(-N/2);
//   fig6_entry.csv  per h, the restitution of an impact whose first contact step starts at depth
//                   s h v (s 0 .. 1: where the last free step lands), at the impact speed v.
//
// Usage: build/bin/drumwright_pendulum_bench [DIR] > tables.md (DIR: docs/img/drumwright);
//        /usr/bin/python3 bench/plot_drumwright_pendulum.py DIR
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/drumwright_pendulum.h"

namespace {

using alsim::bench::BilateralForm;
using alsim::bench::LimitPendulum;
using alsim::bench::LimitState;
using alsim::bench::RodPendulum;

std::FILE* Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr)
    std::fprintf(stderr, "drumwright_pendulum_bench: cannot write %s\n", path.c_str());
  return file;
}

bool Fig4(const std::string& dir) {
  std::FILE* csv = Open(dir + "/fig4.csv");
  std::FILE* trace = Open(dir + "/fig4_trace.csv");
  if (csv == nullptr || trace == nullptr) return false;
  const double k = 1e15, seconds = 1;
  const Eigen::Vector2d reference_angle = alsim::bench::RigidRodReference(1e-5, seconds);
  const Eigen::Vector3d reference = alsim::bench::RodAt(reference_angle[0]);
  const double e0 = RodPendulum::Energy(RodPendulum::Start(), Eigen::Vector3d::Zero());
  std::fprintf(csv,
               "h,max_phi,max_phi_velocity_form,energy_end,energy_max,energy_predicted,"
               "energy_residual,error\n");
  std::fprintf(trace, "h,t,phi,energy,energy_residual\n");
  std::printf("Fig. 4: k %.0e, b %g, %g s from horizontal\n\n", k, RodPendulum::kB, seconds);
  std::printf(
      "| h s | max abs(phi) m (n x n) | (velocity form) | E(1 s) - E(0) J | max abs(E - E0) J "
      "| (h/2) max c theta' sin theta J | max abs(E - E0 - (h/2) c theta' sin theta) J | error "
      "of q(1 s) |\n|---|---|---|---|---|---|---|---|\n");
  std::vector<double> hs, phis, energies, errors, fine_hs, fine_phis, fine_energies, fine_errors,
      fine_residuals;
  bool ok = true;
  for (const double h : {0.1, 0.05, 0.02, 0.01, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4}) {
    const bool traced = h == 0.1 || h == 1e-2 || h == 1e-3 || h == 1e-4;
    const long steps = std::lround(seconds / h), stride = std::max(1L, steps / 1000);
    long n = 0;
    double energy_max = 0, residual_max = 0;
    const alsim::bench::RodPendulumRun run = alsim::bench::RunRodPendulum(
        k, h, seconds, BilateralForm::kConstraintSpace,
        [&](double t, const Eigen::Vector3d& q, const Eigen::Vector3d& v) {
          const double change = RodPendulum::Energy(q, v) - e0;
          const double residual = change - alsim::bench::RodModifiedEnergyTerm(q, v, h);
          energy_max = std::max(energy_max, std::abs(change));
          residual_max = std::max(residual_max, std::abs(residual));
          if (traced && (++n % stride == 0 || n == 1)) {
            std::fprintf(trace, "%g,%.10g,%.8g,%.8g,%.8g\n", h, t, RodPendulum::Phi(q).norm(),
                         change, residual);
          }
        });
    const alsim::bench::RodPendulumRun velocity_form =
        alsim::bench::RunRodPendulum(k, h, seconds, BilateralForm::kVelocity);
    if (!run.ok || !velocity_form.ok) {
      std::printf("| %g | a step's solve failed | | | | |\n", h);
      ok = false;
      continue;
    }
    const double energy_end = RodPendulum::Energy(run.q, run.v) - e0;
    const double error = (run.q - reference).norm() / reference.norm();
    const double predicted = h / 2 * alsim::bench::RodModifiedEnergyPeak();
    std::fprintf(csv, "%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", h, run.max_phi,
                 velocity_form.max_phi, energy_end, energy_max, predicted, residual_max, error);
    std::printf("| %g | %.3e | %.3e | %.3e | %.3e | %.3e | %.2e | %.3e |\n", h, run.max_phi,
                velocity_form.max_phi, energy_end, energy_max, predicted, residual_max, error);
    hs.push_back(h);
    phis.push_back(run.max_phi);
    energies.push_back(energy_max);
    errors.push_back(error);
    if (h <= 1e-3) {
      fine_hs.push_back(h);
      fine_phis.push_back(run.max_phi);
      fine_energies.push_back(energy_max);
      fine_errors.push_back(error);
      fine_residuals.push_back(residual_max);
    }
  }
  using alsim::bench::LogLogSlope;
  std::printf(
      "\nSlopes (log-log least squares), h 1e-3 .. 1e-4 / 0.1 .. 1e-4: max abs(phi) %.3f / %.3f, "
      "max abs(E - E0) %.3f / %.3f, error %.3f / %.3f; the residual after (h/2) c theta' sin "
      "theta %.3f (h 1e-3 .. 1e-4)\n\n",
      LogLogSlope(fine_hs, fine_phis), LogLogSlope(hs, phis), LogLogSlope(fine_hs, fine_energies),
      LogLogSlope(hs, energies), LogLogSlope(fine_hs, fine_errors), LogLogSlope(hs, errors),
      LogLogSlope(fine_hs, fine_residuals));
  // Drift: the energy error over the first and the tenth second of a 10 s run.
  std::printf("| h s | max abs(E - E0), 0-1 s | 9-10 s | E(10 s) - E(0) |\n|---|---|---|---|\n");
  for (const double h : {1e-2, 1e-3}) {
    double first = 0, tenth = 0, last = 0;
    const alsim::bench::RodPendulumRun run = alsim::bench::RunRodPendulum(
        k, h, 10 * seconds, BilateralForm::kConstraintSpace,
        [&](double t, const Eigen::Vector3d& q, const Eigen::Vector3d& v) {
          last = RodPendulum::Energy(q, v) - e0;
          if (t <= 1 + h / 2) first = std::max(first, std::abs(last));
          if (t > 9 + h / 2) tenth = std::max(tenth, std::abs(last));
        });
    ok = ok && run.ok;
    std::printf("| %g | %.3e | %.3e | %.3e |\n", h, first, tenth, last);
  }
  std::printf("\n");
  return ok && std::fclose(csv) == 0 && std::fclose(trace) == 0;
}

bool Fig6(const std::string& dir) {
  std::FILE* csv = Open(dir + "/fig6.csv");
  std::FILE* table = Open(dir + "/fig6_restitution.csv");
  if (csv == nullptr || table == nullptr) return false;
  const double seconds = 2, impact_time = LimitPendulum::ImpactTime();
  std::fprintf(csv, "h,t,theta,rate,lambda,window\n");
  std::fprintf(table,
               "h,omega_h,t_exact,t_in,rate_in,rate_out,contact_steps,min_theta,restitution,"
               "restitution_at_limit,formula\n");
  std::printf(
      "Fig. 6: k %.0e, b %g, J %g, %g s from pi/2; free-swing impact at %.6f s, %.6f "
      "rad/s\n\n",
      LimitPendulum::kK, LimitPendulum::kB, LimitPendulum::kJ, seconds, impact_time,
      LimitPendulum::ImpactSpeed());
  std::printf(
      "| h s | omega h | first contact s | steps in contact | deepest theta rad | e (run) | e "
      "(from theta = 0) | (1 + (omega h)^2)^(-N/2) |\n|---|---|---|---|---|---|---|---|\n");
  for (const double h : {1e-5, 1e-6, 1e-7, 1e-8}) {
    const long stride = std::lround(2e-3 / h);
    const long window_stride = std::max(1L, std::lround(40e-6 / h / 400));
    long n = 0;
    const alsim::bench::Impact impact = alsim::bench::RunLimitPendulum(
        LimitState{}, h, seconds, [&](double t, const LimitState& s) {
          const bool window = std::abs(t - impact_time) <= 20e-6;
          ++n;
          if (n % stride == 0 || (window && n % window_stride == 0)) {
            std::fprintf(csv, "%g,%.12g,%.8g,%.8g,%.8g,%d\n", h, t, s.theta, s.rate, s.lambda,
                         window ? 1 : 0);
          }
        });
    // The same impact entered exactly at the limit.
    LimitState at_limit;
    at_limit.theta = 0;
    at_limit.rate = -LimitPendulum::ImpactSpeed();
    const alsim::bench::Impact clean = alsim::bench::RunLimitPendulum(
        at_limit, h, 20e-6 + 10 * h, [](double, const LimitState&) {});
    const double omega_h = LimitPendulum::Omega() * h;
    const double formula = alsim::bench::ImplicitEulerRestitution(omega_h);
    const double e = impact.Restitution(), e_clean = clean.Restitution();
    std::fprintf(table, "%g,%.17g,%.17g,%.17g,%.17g,%.17g,%ld,%.17g,%.17g,%.17g,%.17g\n", h,
                 omega_h, impact_time, impact.t_in, impact.rate_in, impact.rate_out,
                 impact.contact_steps, impact.min_theta, e, e_clean, formula);
    std::printf("| %g | %g | %.7f | %ld | %.3e | %.4f | %.4f | %.4f |\n", h, omega_h, impact.t_in,
                impact.contact_steps, impact.min_theta, e, e_clean, formula);
  }
  std::printf("\n");
  // The entry depth: the first step in contact starts at theta = -s h v (0 <= s <= 1: where the
  // last free step landed), theta' = -v.
  std::FILE* entry = Open(dir + "/fig6_entry.csv");
  if (entry == nullptr) return false;
  std::fprintf(entry, "h,omega_h,fraction,restitution\n");
  std::printf("| h s | e over entry depths 0 .. h v (min, max) |\n|---|---|\n");
  for (const double h : {1e-5, 1e-6, 1e-7, 1e-8}) {
    double low = 1e300, high = 0;
    for (int i = 0; i <= 100; ++i) {
      LimitState s;
      s.rate = -LimitPendulum::ImpactSpeed();
      s.theta = i / 100.0 * h * s.rate;
      const alsim::bench::Impact impact =
          alsim::bench::RunLimitPendulum(s, h, 20e-6 + 10 * h, [](double, const LimitState&) {});
      const double e = impact.Restitution();
      low = std::min(low, e);
      high = std::max(high, e);
      std::fprintf(entry, "%.17g,%.17g,%.17g,%.17g\n", h, LimitPendulum::Omega() * h, i / 100.0, e);
    }
    std::printf("| %g | %.4f .. %.4f |\n", h, low, high);
  }
  std::printf("\n");
  return std::fclose(csv) == 0 && std::fclose(table) == 0 && std::fclose(entry) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "docs/img/drumwright";
  const bool fig4 = Fig4(dir);
  const bool fig6 = Fig6(dir);
  return fig4 && fig6 ? 0 : 1;
}
