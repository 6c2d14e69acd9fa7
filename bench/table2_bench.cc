// Table II of the SubADMM/CANAL paper (Sec. VII-D; digest seed-004-subadmm-canal.md 8.4): CANAL
// against the two plain semismooth-Newton baselines inside the same AL loop (canal-trdogleg,
// canal-dampedsn; engine/solver/canal/newton_baselines.h), single-step cases of 10 AL loops each,
// printed as a Markdown table: Newton steps over the 10 loops, failures, final residual.
//
// The cases: the scene (default scenes/heavy_on_light.xml, a 5 kg box on a 0.1 kg box) settles
// from rest for --settle-steps steps with CANAL (tolerance 1e-10), which leaves a resting state
// and its warm-start impulses; each case restores that state and then, drawn from a
// std::mt19937_64 seeded with --seed:
//   --cases-kind wrench (the default, as the paper's random external wrenches on its dish pile):
//     a random external force and torque on every free body, Data::xfrc_applied, with
//     bench/wrench_cases.h's distribution [OURS] (force N(0, (s_f m g)^2) and torque
//     N(0, (s_t m g r)^2) per world axis, r the body's radius of gyration; --force-scale s_f and
//     --torque-scale s_t, default 0.5);
//   --cases-kind velocity: a random velocity of every free body instead (qvel, MuJoCo's layout:
//     linear in the world frame, angular in the body frame), per body [OURS]:
//       horizontal linear velocity  N(0, 0.05^2) m/s per axis (the heavy box's friction stops
//                                   mu g h = 0.02 m/s in one step: mostly slip),
//       vertical linear velocity    N(0, 0.01^2) m/s,
//       angular velocity            N(0, 0.5^2) rad/s per axis (spin and tilt: corners slide in
//                                   different directions or lift off).
// Every solver then takes one step from the same state and the same case with max_iterations 10
// and tolerance 0 (all 10 AL loops run, as in the paper, without Anderson extrapolation), one
// thread; the baselines without their fallback to CANAL (CanalParameters::baselines.
// canal_fallback), so that their loops run on through their failures as the paper's do.
//
// Columns: Newton steps = inner steps summed over the 10 loops (TRDogleg: trial steps, rejected
// included; DampedSN: directions, each with its backtracking), mean per case; failed loops = inner
// loops that ended short of the inner tolerance (CANAL's, ||r|| < 1e-10 max(1, ||b||) or r's
// rounding floor) within 50 steps or that could not reduce the merit any more, over all loops;
// cases with a failure = cases with at least one failed loop; residual = -log10 of the Sec. VII
// accuracy metric (SolverStatistics::contact_residual, the paper's "Residual [-log]"), mean and
// median over cases, and of the final AL residual ||J v - z||, mean; solve ms = mean wall time of
// the step's solve (one thread).
//
// Usage: table2_bench [--cases N] [--seed S] [--scene FILE] [--settle-steps K] [--tolerance X]
//                     [--cases-kind wrench|velocity] [--force-scale X] [--torque-scale X]
//                     [--penalty uniform|effective-mass] [--verbose]
//   --tolerance X  the AL stop test instead of 0 (then a case may stop before its 10th loop: the
//                  schedule (27) then no longer raises beta on round-off noise once converged)
//   --penalty P    the AL penalty of all three: uniform (the default, the paper's single beta0 =
//                  1e4 kg) or effective-mass (CanalPenalty, canal_parameters.h)
//   --verbose prints each case's figures for every solver, and each of its AL loops, before the
//             table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/wrench_cases.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/canal/canal_solver.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

constexpr int kLoops = 10;
constexpr double kLinearSigma = 0.05;    // m/s, horizontal
constexpr double kVerticalSigma = 0.01;  // m/s
constexpr double kAngularSigma = 0.5;    // rad/s

double Figure(const SolverStatistics& stats, const char* name) {
  for (int f = 0; f < stats.num_figures; ++f) {
    if (std::strcmp(stats.figures[f].name, name) == 0) return stats.figures[f].value;
  }
  return 0;
}

double MinusLog(double x) { return -std::log10(std::max(x, 1e-17)); }

struct Totals {
  double newton_steps = 0;
  double loops = 0;
  double failed_loops = 0;
  double failed_cases = 0;
  double minus_log_residual = 0;
  std::vector<double> minus_logs;  // per case, for the median
  double minus_log_al = 0;
  double solve_ms = 0;
  int diverged = 0;
};

struct CaseKind {
  bool wrench = true;  // else velocity
  double force_scale = 0.5;
  double torque_scale = 0.5;
};

int Run(const std::string& scene, int cases, unsigned long long seed, int settle_steps,
        double tolerance, const CaseKind& kind, CanalPenalty penalty, bool verbose) {
  const ModelImport imported = ImportModelFromFile(scene);
  if (!imported) {
    std::fprintf(stderr, "table2_bench: %s\n", imported.error.c_str());
    return 1;
  }
  const Model& m = *imported.model;
  // The resting state.
  Data rest(m);
  if (!bench::Settle(m, rest, SolverType::kCanal, 30, 1e-10, settle_steps)) return 1;
  const std::string snapshot = SaveStateSnapshot(m, rest);
  const std::vector<int> free_bodies = bench::FreeBodies(m);
  std::vector<int> free_dofs;  // the first dof of every free joint
  for (int j = 0; j < m.njnt; ++j) {
    if (m.jnt_type[j] == JointType::kFree) free_dofs.push_back(m.jnt_dof_adr[j]);
  }

  const SolverType types[] = {SolverType::kCanal, SolverType::kCanalTrDogleg,
                              SolverType::kCanalDampedSn};
  const char* names[] = {"CANAL", "TRDogleg", "DampedSN"};
  Totals totals[3];
  std::vector<Data> data;
  for (int t = 0; t < 3; ++t) data.emplace_back(m);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0, 1);
  double contacts = 0;
  std::vector<double> qvel;
  std::vector<Vec6> wrenches;
  RunWithThreads(1, [&] {
    for (int c = 0; c < cases; ++c) {
      if (kind.wrench) {
        bench::DrawWrenches(m, free_bodies, kind.force_scale, kind.torque_scale, rng, wrenches);
      } else {
        qvel.assign(m.nv, 0.0);
        for (const int dof : free_dofs) {
          qvel[dof] = kLinearSigma * normal(rng);
          qvel[dof + 1] = kLinearSigma * normal(rng);
          qvel[dof + 2] = kVerticalSigma * normal(rng);
          for (int k = 3; k < 6; ++k) qvel[dof + k] = kAngularSigma * normal(rng);
        }
      }
      for (int t = 0; t < 3; ++t) {
        Data& d = data[t];
        std::string error;
        if (!RestoreStateSnapshot(m, snapshot, d, &error)) {
          std::fprintf(stderr, "table2_bench: %s\n", error.c_str());
          std::exit(1);
        }
        if (kind.wrench) {
          d.xfrc_applied = wrenches;
        } else {
          d.qvel = qvel;
        }
        if (verbose && EnsureSolver(m, d, types[t])) {
          static_cast<CanalSolver&>(*d.solver).set_record_history(true);
        }
        StepOptions options;
        options.solver.type = types[t];
        options.solver.max_iterations = kLoops;
        options.solver.tolerance = tolerance;
        options.solver.canal.penalty = penalty;
        options.solver.canal.anderson_memory = 0;  // the paper's plain outer loop
        // The paper's loop through the baselines' failures, their last iterates measured.
        options.solver.canal.baselines.canal_fallback = false;
        Totals& total = totals[t];
        if (Step(m, d, options) != StepStatus::kOk) {
          ++total.diverged;
          continue;
        }
        if (verbose) {  // each loop of island 0
          const CanalSolver& solver = static_cast<const CanalSolver&>(*d.solver);
          for (const CanalOuterRecord& record : solver.history()) {
            std::printf("    loop: %2d steps%s, |r| %.2e, AL %.2e + %.2e, beta %.0e\n",
                        record.newton_steps, record.inner_failure ? " (failed)" : "",
                        record.newton_residual, record.al_residual, record.desaxce_change,
                        record.beta);
          }
        }
        const SolverStatistics& stats = d.solver_statistics;
        const double failures = Figure(stats, "inner_failures");
        total.newton_steps += Figure(stats, "newton_steps");
        total.loops += Figure(stats, "outer_iterations");
        total.failed_loops += failures;
        total.failed_cases += failures > 0 ? 1 : 0;
        total.minus_log_residual += MinusLog(stats.contact_residual);
        total.minus_logs.push_back(MinusLog(stats.contact_residual));
        total.minus_log_al += MinusLog(Figure(stats, "al_residual"));
        total.solve_ms += 1e3 * stats.solve_seconds;
        if (t == 0) contacts += stats.contacts;
        if (verbose) {
          std::printf(
              "case %3d %-9s steps %3.0f failures %2.0f residual %.2e al %.2e newton %.2e\n", c,
              names[t], Figure(stats, "newton_steps"), failures, stats.contact_residual,
              Figure(stats, "al_residual"), Figure(stats, "newton_residual"));
        }
      }
    }
  });

  std::printf(
      "### Table II: %d cases of %d AL loops (tolerance %g), %s (nv %d, %.1f contacts "
      "per case)\n\n",
      cases, kLoops, tolerance, scene.c_str(), m.nv, contacts / cases);
  if (kind.wrench) {
    std::printf(
        "seed %llu, %d settling steps; wrenches per free body and world axis: force N(0, (%g m "
        "g)^2), torque N(0, (%g m g r)^2), r the radius of gyration\n\n",
        seed, settle_steps, kind.force_scale, kind.torque_scale);
  } else {
    std::printf(
        "seed %llu, %d settling steps; velocities per body: N(0, %g^2) m/s horizontal, "
        "N(0, %g^2) m/s vertical, N(0, %g^2) rad/s angular\n\n",
        seed, settle_steps, kLinearSigma, kVerticalSigma, kAngularSigma);
  }
  std::printf(
      "| solver | Newton steps per case | failed loops %% | cases with a failure %% | "
      "residual [-log10] | median residual [-log10] | AL residual [-log10] | solve ms | "
      "diverged |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int t = 0; t < 3; ++t) {
    const Totals& total = totals[t];
    const double n = std::max(1, cases - total.diverged);
    std::vector<double> sorted = total.minus_logs;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted.empty() ? 0 : sorted[sorted.size() / 2];
    std::printf("| %s | %.2f | %.2f | %.1f | %.3f | %.3f | %.3f | %.3f | %d |\n", names[t],
                total.newton_steps / n, 100 * total.failed_loops / std::max(1.0, total.loops),
                100 * total.failed_cases / n, total.minus_log_residual / n, median,
                total.minus_log_al / n, total.solve_ms / n, total.diverged);
  }
  std::printf(
      "\nPaper (dish piling): CANAL 30.55 steps, 0 %% failures, 8.2231; TRDogleg 118.8, "
      "1.2 %%, 8.5693; DampedSN 246.9, 1.1 %%, 8.5644.\n");
  return 0;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: table2_bench [--cases N] [--seed S] [--scene FILE] [--settle-steps K]\n"
      "                    [--tolerance X] [--cases-kind wrench|velocity] [--force-scale X]\n"
      "                    [--torque-scale X] [--penalty uniform|effective-mass] [--verbose]\n";
  alsim::CaseKind kind;
  std::string scene = std::string(ALSIM_SCENES_DIR) + "/heavy_on_light.xml";
  int cases = 100, settle_steps = 240;
  unsigned long long seed = 1;
  bool verbose = false;
  double tolerance = 0;
  alsim::CanalPenalty penalty = alsim::CanalPenalty::kUniform;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--cases" && i + 1 < argc) {
      cases = std::atoi(argv[++i]);
    } else if (arg == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--scene" && i + 1 < argc) {
      scene = argv[++i];
    } else if (arg == "--tolerance" && i + 1 < argc) {
      tolerance = std::atof(argv[++i]);
    } else if (arg == "--cases-kind" && i + 1 < argc) {
      const std::string value = argv[++i];
      if (value != "wrench" && value != "velocity") {
        std::fprintf(stderr, "table2_bench: --cases-kind is wrench or velocity\n%s", usage);
        return 2;
      }
      kind.wrench = value == "wrench";
    } else if (arg == "--force-scale" && i + 1 < argc) {
      kind.force_scale = std::atof(argv[++i]);
    } else if (arg == "--torque-scale" && i + 1 < argc) {
      kind.torque_scale = std::atof(argv[++i]);
    } else if (arg == "--penalty" && i + 1 < argc) {
      if (!alsim::ParseCanalPenaltyName(argv[++i], &penalty)) {
        std::fprintf(stderr, "table2_bench: --penalty is uniform or effective-mass\n%s", usage);
        return 2;
      }
    } else if (arg == "--verbose") {
      verbose = true;
    } else if (arg == "--settle-steps" && i + 1 < argc) {
      settle_steps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "table2_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (cases < 1 || settle_steps < 0 || !(tolerance >= 0) || !(kind.force_scale >= 0) ||
      !(kind.torque_scale >= 0)) {
    std::fprintf(stderr,
                 "table2_bench: --cases must be at least 1, --settle-steps, --tolerance and the "
                 "scales at least 0\n%s",
                 usage);
    return 2;
  }
  return alsim::Run(scene, cases, seed, settle_steps, tolerance, kind, penalty, verbose);
}
