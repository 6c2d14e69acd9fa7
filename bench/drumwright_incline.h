// The Drumwright paper's box on an incline (Sec. 6.4, Fig. 9; digest seed-003-drumwright.md
// 9.5) as a translating 1 kg body on four Hertz feet, stepped by the dense first-order step
// (engine/solver/drumwright/first_order_step.h). Shared by tests/solver/first_order_step_test.cc
// (test J) and bench/drumwright_incline_bench.cc (Fig. 9).
//
// Frame: x down the slope, z the incline's normal. The box's feet are coincident in G (a
// translating body: the four contacts give the same rows, rank 3), each a contact of Hertz
// stiffness K_n = E* sqrt(r) with phi_n = -d^(3/2) (erratum 8) and G_n the unit normal [OURS:
// the paper allows the exact derivative too], B_n 1 (the paper's "guess"), tangents K_r = 0 and
// B_r = 1e6 / h, zeta = zeta_h / h (the paper's 1 / h at zeta_h = 1). The body starts at rest at
// its Hertz depth under m g cos(angle). A contact is a row only while d > 0 (phi <= 0).
#pragma once

#include <algorithm>
#include <cmath>

#include <Eigen/Core>

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
  double x = 0;           // m down the slope at the end
  double speed = 0;       // m/s down the slope at the end
  double normal = 0;      // N, the feet's normal forces summed, last step
  double depth = 0;       // m, at the end
  double max_normal = 0;  // N, the largest summed normal force of any step
};

inline InclineRun SlideOnIncline(const InclineParameters& s, double mu, int steps) {
  const double stiffness = s.modulus * std::sqrt(s.radius);
  const Eigen::Vector3d gravity(s.mass * s.gravity * std::sin(s.angle), 0,
                                -s.mass * s.gravity * std::cos(s.angle));
  // Rest: the feet carry m g cos(angle) at K d^(3/2) each.
  Eigen::Vector3d position(0, 0, -std::pow(-gravity.z() / s.feet / stiffness, 2.0 / 3.0));
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
      SpringRow normal, tangent;
      normal.type = SpringRowClass::kNormal;
      normal.phi0 = -std::pow(depth, 1.5);
      normal.stiffness = stiffness;
      normal.damping = 1;
      normal.friction = mu;
      tangent.type = SpringRowClass::kTangent;
      tangent.damping = 1e6 / s.h;
      p.rows.insert(p.rows.end(), {normal, tangent, tangent});
      p.jacobian(3 * f, 2) = 1;
      p.jacobian(3 * f + 1, 0) = 1;
      p.jacobian(3 * f + 2, 1) = 1;
    }
    const FirstOrderResult r = SolveFirstOrderStep(p);
    if (!r.ok) {
      run.ok = false;
      return run;
    }
    velocity = r.velocity;
    position += s.h * velocity;
    run.normal = 0;
    for (int f = 0; f < feet; ++f) run.normal += r.lambda[3 * f];
    run.max_normal = std::max(run.max_normal, run.normal);
  }
  run.x = position.x();
  run.speed = velocity.x();
  run.depth = -position.z();
  return run;
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
