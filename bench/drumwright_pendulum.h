// The Drumwright paper's two pendulums (seed 003; digest seed-003-drumwright.md 9.2, 9.3), stepped
// by the dense first-order step (engine/solver/drumwright/first_order_step.h). Shared by
// tests/solver/first_order_step_test.cc (test G), tests/solver/drumwright_pendulum_test.cc and
// bench/drumwright_pendulum_bench.cc (Figs. 4 and 6).
//
// Fig. 4 (Sec. 4.4): a 2D rod in absolute coordinates q = (x, y, theta) (its center of mass and
// angle; v = q', N = I), its end pinned to the origin by the two bilateral rows of (64),
//   phi = (x, y) + R(theta) u,  u = (0, L/2) in the body frame: phi = (x - (L/2) sin theta,
//   y + (L/2) cos theta),  G = [[1, 0, -(L/2) cos theta], [0, 1, -(L/2) sin theta]],
// theta = 0 hanging down, released horizontal (theta = pi/2, x = L/2) at rest. Each step is
// (61)-(62), (53), (37), (36): SolveBilateralConstraintSpace (the paper's n x n form) or, equal to
// round-off (test F), SolveFirstOrderStep's velocity form (M + G^T W G) v1 = M v0 + h f - h G^T K
// phi0; Gd v0 omitted (digest 4, option (a)). Chosen once [OURS: the paper gives none]: a uniform
// rod, m 1 kg, L 1 m, I = m L^2 / 12 about its center, g 9.8 m/s^2, b 1 N s/m (the paper's).
// Energy: E = (1/2) v^T M v + m g y, the rigid pendulum's, without the spring's K |phi|^2 / 2: the
// force sees the linearized phi1 = phi0 + h phid1 of (62), not phi(q1), and K |phi(q1)|^2 / 2 at K
// 1e15 would stand for no energy the step can return. The rigid reference is the pendulum in
// minimal coordinates about the pin, (I + m L^2 / 4) theta'' = -m g (L/2) sin theta, by RK4.
//
// Fig. 6 (Sec. 5.4): a pendulum in minimal coordinates (theta, theta') with a soft range-of-motion
// limit theta >= 0: one unilateral row, phi = theta, G = 1, present only while theta <= 0 (the
// paper's rows at phi0 <= 0), K 1e12 N m/rad, B 0, from theta = pi/2 at rest. Chosen once [OURS]:
// a point bob, m 1 kg on a massless 1 m rod, so J = m l^2 = 1 kg m^2 and omega = sqrt(K / J) = 1e6
// rad/s (the digest's omega h = 0.01 .. 10 for h = 1e-8 .. 1e-5); g 9.8; gravity's torque -m g l
// sin theta. Duration [OURS]: the paper's whole run from pi/2 at every h, 2 s (the fall, the
// impact near t = 0.59 s, the rebound and the next fall), which at h = 1e-8 is 2e8 steps: each
// goes through the scalar form of the step, below, tested equal to SolveFirstOrderStep step by
// step (tests/solver/drumwright_pendulum_test.cc). With one row the step's program (83)-(85) has
// the closed form of test H: lam = max(0, r / (1 + w / J)), r = -K phi0 - (h K + B)(phid0 + h f /
// J), w = h^2 K + h B; then theta'1 = theta'0 + h (lam + f) / J (37), theta1 = theta0 + h theta'1
// (36). Without the row the step is semi-implicit Euler on the free pendulum.
//
// Restitution: implicit Euler's spring, entered at phi = 0 with speed v, leaves after N = pi /
// atan(omega h) steps with (1 + (omega h)^2)^(-N/2) v (digest 9.3, test I; each step scales the
// amplitude by 1 / sqrt(1 + (omega h)^2) and turns it by atan(omega h)).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>
#include <Eigen/LU>

#include "engine/solver/drumwright/first_order_step.h"

namespace alsim::bench {

constexpr double kPi = 3.14159265358979323846;

// ---- Fig. 4: the rod in absolute coordinates ----

struct RodPendulum {
  static constexpr double kM = 1, kL = 1, kI = kM * kL * kL / 12, kG = 9.8, kB = 1;
  static Eigen::Vector2d Phi(const Eigen::Vector3d& q) {
    return Eigen::Vector2d(q.x() - kL / 2 * std::sin(q.z()), q.y() + kL / 2 * std::cos(q.z()));
  }
  static Eigen::Matrix<double, 2, 3> Jacobian(const Eigen::Vector3d& q) {
    Eigen::Matrix<double, 2, 3> g;
    g << 1, 0, -kL / 2 * std::cos(q.z()), 0, 1, -kL / 2 * std::sin(q.z());
    return g;
  }
  // Gd v = d/dt(G) v = (L/2 sin theta, -L/2 cos theta) theta'^2: the rows' phi'' at rest.
  static Eigen::Vector2d VelocityProduct(const Eigen::Vector3d& q, const Eigen::Vector3d& v) {
    const double rate2 = v.z() * v.z();
    return Eigen::Vector2d(kL / 2 * std::sin(q.z()) * rate2, -kL / 2 * std::cos(q.z()) * rate2);
  }
  static Eigen::Vector3d Start() { return Eigen::Vector3d(kL / 2, 0, kPi / 2); }
  // (1/2) v^T M v + m g y, J.
  static double Energy(const Eigen::Vector3d& q, const Eigen::Vector3d& v) {
    return 0.5 * kM * (v.x() * v.x() + v.y() * v.y()) + 0.5 * kI * v.z() * v.z() + kM * kG * q.y();
  }
};

enum class BilateralForm {
  kVelocity,         // SolveFirstOrderStep: (M + G^T W G) v1 = M v0 + h f - h G^T K phi0
  kConstraintSpace,  // SolveBilateralConstraintSpace: the paper's (61)-(62), (53), (37)
};

// The step's system at (q, v): M = diag(m, m, I), f = (0, -m g, 0), the two rows of (64); with
// `velocity_product` their Gd v0 as well (first_order_step.h).
inline FirstOrderProblem RodPendulumProblem(const Eigen::Vector3d& q, const Eigen::Vector3d& v,
                                            double k, double h, bool velocity_product = false) {
  FirstOrderProblem p;
  p.mass = Eigen::Vector3d(RodPendulum::kM, RodPendulum::kM, RodPendulum::kI).asDiagonal();
  p.velocity = v;
  p.force = Eigen::Vector3d(0, -RodPendulum::kM * RodPendulum::kG, 0);
  p.h = h;
  p.jacobian = RodPendulum::Jacobian(q);
  p.velocity_product = velocity_product;
  const Eigen::Vector2d phi = RodPendulum::Phi(q), gdv = RodPendulum::VelocityProduct(q, v);
  for (int r = 0; r < 2; ++r) {
    SpringRow row;
    row.phi0 = phi[r];
    row.stiffness = k;
    row.damping = RodPendulum::kB;
    row.acceleration = gdv[r];
    p.rows.push_back(row);
  }
  return p;
}

// One step from (q, v): v1 into *v, q0 + h v1 into *q (36)-(37); false if the solve failed.
inline bool RodPendulumStep(Eigen::Vector3d* q, Eigen::Vector3d* v, double k, double h,
                            BilateralForm form = BilateralForm::kVelocity) {
  const FirstOrderProblem p = RodPendulumProblem(*q, *v, k, h);
  const FirstOrderResult result =
      form == BilateralForm::kVelocity ? SolveFirstOrderStep(p) : SolveBilateralConstraintSpace(p);
  if (!result.ok) return false;
  *v = result.velocity;
  *q += h * *v;
  return true;
}

struct RodPendulumRun {
  bool ok = true;
  Eigen::Vector3d q, v;
  double max_phi = 0;  // the largest |phi(q)| after any step, m
};

// round(seconds / h) steps from the horizontal release; observe(t, q, v) after each step.
template <class Observer>
RodPendulumRun RunRodPendulum(double k, double h, double seconds, BilateralForm form,
                              Observer&& observe) {
  RodPendulumRun run;
  run.q = RodPendulum::Start();
  run.v = Eigen::Vector3d::Zero();
  const long steps = std::lround(seconds / h);
  for (long n = 0; n < steps; ++n) {
    if (!RodPendulumStep(&run.q, &run.v, k, h, form)) {
      run.ok = false;
      return run;
    }
    run.max_phi = std::max(run.max_phi, RodPendulum::Phi(run.q).norm());
    observe((n + 1) * h, run.q, run.v);
  }
  return run;
}

inline RodPendulumRun RunRodPendulum(double k, double h, double seconds,
                                     BilateralForm form = BilateralForm::kVelocity) {
  return RunRodPendulum(k, h, seconds, form,
                        [](double, const Eigen::Vector3d&, const Eigen::Vector3d&) {});
}

// The compliant model m q'' = G^T lam + f, lam = -k phi - b phid ((16)-(18), Gd v omitted), or
// with `velocity_product` lam = -k phi - b phid - Mhat Gd v ((15), Mhat = (G M^-1 G^T)^-1), q at
// `seconds` by classical RK4 at step h from the same release.
inline Eigen::Vector3d CompliantRodReference(double k, double h, double seconds,
                                             bool velocity_product = false) {
  const Eigen::Vector3d inverse_mass(1 / RodPendulum::kM, 1 / RodPendulum::kM, 1 / RodPendulum::kI);
  const auto acceleration = [&](const Eigen::Vector3d& q, const Eigen::Vector3d& v) {
    const Eigen::Matrix<double, 2, 3> g = RodPendulum::Jacobian(q);
    Eigen::Vector2d lambda = -k * RodPendulum::Phi(q) - RodPendulum::kB * (g * v);
    if (velocity_product) {
      const Eigen::Matrix2d mhat = (g * inverse_mass.asDiagonal() * g.transpose()).inverse();
      lambda -= mhat * RodPendulum::VelocityProduct(q, v);
    }
    const Eigen::Vector3d force =
        g.transpose() * lambda + Eigen::Vector3d(0, -RodPendulum::kM * RodPendulum::kG, 0);
    return Eigen::Vector3d(inverse_mass.cwiseProduct(force));
  };
  Eigen::Vector3d q = RodPendulum::Start(), v = Eigen::Vector3d::Zero();
  const long steps = std::lround(seconds / h);
  for (long n = 0; n < steps; ++n) {
    const Eigen::Vector3d a1 = acceleration(q, v), q1 = v;
    const Eigen::Vector3d a2 = acceleration(q + h / 2 * q1, v + h / 2 * a1), q2 = v + h / 2 * a1;
    const Eigen::Vector3d a3 = acceleration(q + h / 2 * q2, v + h / 2 * a2), q3 = v + h / 2 * a2;
    const Eigen::Vector3d a4 = acceleration(q + h * q3, v + h * a3), q4 = v + h * a3;
    q += h / 6 * (q1 + 2 * q2 + 2 * q3 + q4);
    v += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
  }
  return q;
}

// The rigid rod about the pin, (theta, theta') at `seconds` by RK4 at step h from (pi/2, 0).
inline Eigen::Vector2d RigidRodReference(double h, double seconds) {
  constexpr double c = RodPendulum::kM * RodPendulum::kG * RodPendulum::kL / 2 /
                       (RodPendulum::kI + RodPendulum::kM * RodPendulum::kL * RodPendulum::kL / 4);
  const auto rate = [](const Eigen::Vector2d& y) {
    return Eigen::Vector2d(y[1], -c * std::sin(y[0]));
  };
  Eigen::Vector2d y(kPi / 2, 0);
  const long steps = std::lround(seconds / h);
  for (long n = 0; n < steps; ++n) {
    const Eigen::Vector2d k1 = rate(y), k2 = rate(y + h / 2 * k1), k3 = rate(y + h / 2 * k2),
                          k4 = rate(y + h * k3);
    y += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
  }
  return y;
}

// The rigid rod's absolute coordinates at angle theta: its center of mass at R(theta) (0, -L/2).
inline Eigen::Vector3d RodAt(double theta) {
  return Eigen::Vector3d(RodPendulum::kL / 2 * std::sin(theta),
                         -RodPendulum::kL / 2 * std::cos(theta), theta);
}

// Semi-implicit Euler's modified energy on the rigid rod: its first-order term (h/2) theta' c
// sin theta, c = m g L / 2, at most (h/2) times this along the exact swing from horizontal, where
// (J_p / 2) theta'^2 = c cos theta (J_p = I + m L^2 / 4): c sqrt(2 c / J_p) sin theta sqrt(cos
// theta), largest at cos theta = 1 / sqrt(3).
inline double RodModifiedEnergyPeak() {
  const double c = RodPendulum::kM * RodPendulum::kG * RodPendulum::kL / 2;
  const double j = RodPendulum::kI + RodPendulum::kM * RodPendulum::kL * RodPendulum::kL / 4;
  const double cosine = 1 / std::sqrt(3.0);
  return c * std::sqrt(2 * c / j) * std::sqrt(1 - cosine * cosine) * std::sqrt(cosine);
}

// (h/2) theta' c sin theta at (q, v).
inline double RodModifiedEnergyTerm(const Eigen::Vector3d& q, const Eigen::Vector3d& v, double h) {
  return h / 2 * v.z() * RodPendulum::kM * RodPendulum::kG * RodPendulum::kL / 2 * std::sin(q.z());
}

// The least-squares slope of log(y) on log(h).
inline double LogLogSlope(const std::vector<double>& hs, const std::vector<double>& ys) {
  const double n = static_cast<double>(hs.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < hs.size(); ++i) {
    mx += std::log(hs[i]) / n;
    my += std::log(ys[i]) / n;
  }
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < hs.size(); ++i) {
    sxy += (std::log(hs[i]) - mx) * (std::log(ys[i]) - my);
    sxx += (std::log(hs[i]) - mx) * (std::log(hs[i]) - mx);
  }
  return sxy / sxx;
}

// ---- Fig. 6: the minimal-coordinate pendulum on a soft limit ----

struct LimitPendulum {
  static constexpr double kM = 1, kL = 1, kJ = kM * kL * kL, kG = 9.8, kK = 1e12, kB = 0;
  static constexpr double kTheta0 = kPi / 2;
  static double Torque(double theta) { return -kM * kG * kL * std::sin(theta); }
  // The free swing's speed at theta = 0 from rest at pi/2: J w^2 / 2 = m g l (energy).
  static double ImpactSpeed() { return std::sqrt(2 * kM * kG * kL / kJ); }
  // The free swing's time from pi/2 to 0: a quarter period, sqrt(J / (m g l)) K(1/2) (the
  // complete elliptic integral of the first kind at parameter sin^2(pi/4), by the AGM).
  static double ImpactTime() {
    double a = 1, b = std::sqrt(0.5);
    for (int i = 0; i < 8; ++i) {
      const double mean = (a + b) / 2;
      b = std::sqrt(a * b);
      a = mean;
    }
    return std::sqrt(kJ / (kM * kG * kL)) * kPi / (2 * a);
  }
  static double Omega() { return std::sqrt(kK / kJ); }
};

struct LimitState {
  double theta = LimitPendulum::kTheta0, rate = 0;  // rad, rad/s
  double lambda = 0;                                // the limit's torque in the last step, N m
};

// The step's system at (theta, theta'): the limit row only while theta <= 0.
inline FirstOrderProblem LimitPendulumProblem(const LimitState& s, double h) {
  FirstOrderProblem p;
  p.mass = Eigen::MatrixXd::Constant(1, 1, LimitPendulum::kJ);
  p.velocity = Eigen::VectorXd::Constant(1, s.rate);
  p.force = Eigen::VectorXd::Constant(1, LimitPendulum::Torque(s.theta));
  p.h = h;
  const bool active = s.theta <= 0;
  p.jacobian = Eigen::MatrixXd::Constant(active ? 1 : 0, 1, 1.0);
  if (active) {
    SpringRow row;
    row.type = SpringRowClass::kUnilateral;
    row.phi0 = s.theta;
    row.stiffness = LimitPendulum::kK;
    row.damping = LimitPendulum::kB;
    p.rows = {row};
  }
  return p;
}

// The step by SolveFirstOrderStep (the interior-point program for the row); false if it failed.
inline bool LimitStepDense(LimitState* s, double h) {
  const FirstOrderResult r = SolveFirstOrderStep(LimitPendulumProblem(*s, h));
  if (!r.ok) return false;
  s->lambda = r.lambda.size() > 0 ? r.lambda[0] : 0.0;
  s->rate = r.velocity[0];
  s->theta += h * s->rate;
  return true;
}

// The same step by the closed form of the one-row program (test H).
inline void LimitStep(LimitState* s, double h) {
  const double f = LimitPendulum::Torque(s->theta);
  s->lambda = 0;
  if (s->theta <= 0) {
    constexpr double k = LimitPendulum::kK, b = LimitPendulum::kB, j = LimitPendulum::kJ;
    const double r = -k * s->theta - (h * k + b) * (s->rate + h * f / j);
    s->lambda = std::max(0.0, r / (1 + (h * h * k + h * b) / j));
  }
  s->rate += h * (s->lambda + f) / LimitPendulum::kJ;
  s->theta += h * s->rate;
}

// implicit Euler's restitution on an undamped spring at omega h (digest 9.3).
inline double ImplicitEulerRestitution(double omega_h) {
  const double n = kPi / std::atan(omega_h);
  return std::pow(1 + omega_h * omega_h, -n / 2);
}

// One impact: the first contact (the first step that ends at theta <= 0) and the lift-off (the
// first step after it that ends at theta > 0).
struct Impact {
  bool found = false;
  double t_in = 0, rate_in = 0;    // the end of the first step in contact, and its theta'
  double t_out = 0, rate_out = 0;  // the end of the lift-off step, and its theta'
  long contact_steps = 0;          // steps ending at theta <= 0
  double min_theta = 0;            // the deepest theta, rad
  double Restitution() const { return rate_out / -rate_in; }
};

// Finds the first impact in a sequence of states (the start included).
struct ImpactTracker {
  Impact impact;
  bool in_contact = false, done = false;
  void Observe(double t, const LimitState& s) {
    if (done) return;
    if (s.theta <= 0) {
      if (!in_contact) {
        in_contact = true;
        impact.found = true;
        impact.t_in = t;
        impact.rate_in = s.rate;
      }
      ++impact.contact_steps;
      impact.min_theta = std::min(impact.min_theta, s.theta);
    } else if (in_contact) {
      impact.t_out = t;
      impact.rate_out = s.rate;
      done = true;
    }
  }
};

// round(seconds / h) scalar steps from `start`; observe(t, state) after each; the first impact.
template <class Observer>
Impact RunLimitPendulum(LimitState start, double h, double seconds, Observer&& observe) {
  ImpactTracker tracker;
  tracker.Observe(0, start);
  const long steps = std::lround(seconds / h);
  for (long n = 0; n < steps; ++n) {
    LimitStep(&start, h);
    const double t = (n + 1) * h;
    tracker.Observe(t, start);
    observe(t, start);
  }
  return tracker.impact;
}

}  // namespace alsim::bench
