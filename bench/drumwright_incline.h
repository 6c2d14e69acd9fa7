// The Drumwright paper's box on an incline (Sec. 6.4, Fig. 9; digest seed-003-drumwright.md
// 9.5) as a translating 1 kg body on four Hertz feet, stepped by the dense first-order step
// (engine/solver/drumwright/first_order_step.h). Shared by tests/solver/first_order_step_test.cc
// (test J) and bench/drumwright_incline_bench.cc (Fig. 9).
//
// Frame: x down the slope, z the incline's normal. The box's feet are coincident in G (a
// translating body: the four contacts give the same rows, rank 3), each a Hertz contact
// (E* 1e11 Pa, r 0.01 m) by the linearized row of bench/drumwright_hertz.h (K_n = (3/2) E*
// sqrt(r d0) on phi_n = -(2/3) d0, G_n the unit normal), B_n 1 (the paper's "guess"), tangents
// K_r = 0 and B_r = 1e6 / h, zeta = zeta_h / h (the paper's 1 / h at zeta_h = 1). The body starts
// at rest at its Hertz depth under m g cos(angle). A contact is a row only while d > 0.
// While the cone binds the step's lam_n is max(spring law, inflated) (first_order_step.h): for
// the four coincident feet (lam_n, lam_t each the same on every foot, sums N and T = mu N) the
// objective zeta N^2 / 8 + T^2 / 8 + 2 (a4 T / 4 - c)^2 gives
//   N = 4 a4 mu c / (zeta + mu^2 (1 + a4^2)),  a4 = 1 + 4 h B_r / m,  c = B_r (v_t + h f_t / m),
// about 4 c / (a4 mu) = m (v_t + h f_t / m) / (h mu) unless zeta >> mu^2 a4^2 (2.5e12 at mu 0.375).
#pragma once

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

#include "bench/drumwright_hertz.h"
#include "engine/solver/drumwright/first_order_step.h"

namespace alsim::bench {

struct InclineParameters {
  double mass = 1;                                   // kg
  double gravity = 9.8;                              // m/s^2
  double angle = 15 * 3.14159265358979323846 / 180;  // rad
  double modulus = 1e11;                             // E*, Pa
  double radius = 0.01;                              // m, each foot
  double h = 0.01;                                   // s
  double zeta_h = 1;                                 // zeta h
  int feet = 4;
};

struct InclineRun {
  bool ok = true;
  double x = 0;             // m down the slope at the end
  double speed = 0;         // m/s down the slope at the end
  double normal = 0;        // N, the feet's normal forces summed, last step
  double depth = 0;         // m, at the end
  double max_normal = 0;    // N, the largest summed normal force of any step
  double first_normal = 0;  // N, the summed normal force of the first step
  double max_lift = 0;      // m, the largest height of the feet above the incline (hops)
  int failed_step = -1;     // the step whose program failed (ok false)
};

inline InclineRun SlideOnIncline(const InclineParameters& s, double mu, int steps) {
  const Eigen::Vector3d gravity(s.mass * s.gravity * std::sin(s.angle), 0,
                                -s.mass * s.gravity * std::cos(s.angle));
  // Rest: the feet carry m g cos(angle) / feet each at Hertz's depth.
  Eigen::Vector3d position(0, 0, -HertzDepth(-gravity.z() / s.feet, s.modulus, s.radius));
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  InclineRun run;
  for (int n = 0; n < steps; ++n) {
    FirstOrderProblem p;
    p.mass = s.mass * Eigen::Matrix3d::Identity();
    p.velocity = velocity;
    p.force = gravity;
    p.h = s.h;
    p.zeta = s.zeta_h / s.h;
    const double depth = -position.z();
    const int feet = depth > 0 ? s.feet : 0;
    p.jacobian = Eigen::MatrixXd::Zero(3 * feet, 3);
    for (int f = 0; f < feet; ++f) {
      p.rows.push_back(HertzNormalRow(depth, s.modulus, s.radius, 1, mu));
      p.rows.push_back(FrictionRow(s.h));
      p.rows.push_back(FrictionRow(s.h));
      p.jacobian(3 * f, 2) = 1;
      p.jacobian(3 * f + 1, 0) = 1;
      p.jacobian(3 * f + 2, 1) = 1;
    }
    const FirstOrderResult r = SolveFirstOrderStep(p);
    if (!r.ok) {
      run.ok = false;
      run.failed_step = n;
      return run;
    }
    velocity = r.velocity;
    position += s.h * velocity;
    run.max_lift = std::max(run.max_lift, position.z());
    run.normal = 0;
    for (int f = 0; f < feet; ++f) run.normal += r.lambda[3 * f];
    run.max_normal = std::max(run.max_normal, run.normal);
    if (n == 0) run.first_normal = run.normal;
  }
  run.x = position.x();
  run.speed = velocity.x();
  run.depth = -position.z();
  return run;
}

// The first step's summed normal force from rest while the cone binds (header comment):
// max(m g cos, 4 a4 mu c / (zeta + mu^2 (1 + a4^2))), c = B_r h g sin, for the four feet.
inline double InflatedFirstNormal(const InclineParameters& s, double mu) {
  const double b_r = 1e6 / s.h, zeta = s.zeta_h / s.h;
  const double a4 = 1 + s.feet * s.h * b_r / s.mass, c = b_r * s.h * s.gravity * std::sin(s.angle);
  const double law = s.mass * s.gravity * std::cos(s.angle);
  if (mu * law >= s.mass * s.gravity * std::sin(s.angle)) return law;  // the cone does not bind
  return std::max(law, s.feet * a4 * mu * c / (zeta + mu * mu * (1 + a4 * a4)));
}

// Coulomb's distance for the same semi-implicit stepping: a = g (sin - mu cos) while it slides
// (mu < tan(angle)), x = a T (T + h) / 2 after T = steps h; 0 when friction holds it.
inline double CoulombDistance(const InclineParameters& s, double mu, int steps) {
  const double a = s.gravity * (std::sin(s.angle) - mu * std::cos(s.angle));
  if (!(a > 0)) return 0;
  const double t = steps * s.h;
  return a * t * (t + s.h) / 2;
}

}  // namespace alsim::bench
