// The Hertz contact row of Drumwright's examples (seed 003, Secs. 6.4-6.5; digest
// seed-003-drumwright.md 9.5-9.6) for the dense first-order step
// (engine/solver/drumwright/first_order_step.h), shared by the incline (Fig. 9,
// bench/drumwright_incline.h) and the sphere stack (Fig. 10, bench/drumwright_stack.h).
//
// Hertz (121): f(d) = E* sqrt(r d^3) at depth d. The paper writes it as a spring, K_n = E* sqrt(r)
// (122) on phi_n = -d^(3/2) (123, with erratum 8's sign), and leaves G_n open. The step integrates
// phi1 = phi0 + h G_n v1 and applies G_n^T lam, lam = -K phi1 - B phid1 (37), (53), so:
// - G_n the unit normal (lam in N, as the cone mu lam_n >= |lam_t| and the weight zeta lam_n^2
//   need): phi (m^1.5) is advanced by h times a velocity (m/s). The rest force K d^(3/2) is
//   Hertz's, but the implicit stiffness along the normal is K = E* sqrt(r) N/m (10^10 for the
//   paper's feet) where Hertz's is f'(d) = (3/2) E* sqrt(r d) (9.2e6 N/m at the box's rest depth),
//   and a depth error e is restored at the rate of e^(3/2) / h: a landing's millimetres of overlap
//   persist for many steps.
// - G_n = d phi / dq = (3/2) d^(1/2) n (the exact derivative): G^T lam = (3/2) E* sqrt(r) d^2 is
//   not Hertz's force, lam is in N / m^(1/2) (the cone compares it with newtons), and the row
//   vanishes at first touch.
// - [OURS] the linearized row: G_n the unit normal, evaluated at q0 like every K of the step
//   (digest 8.1),
//     K_n = f'(d0) = (3/2) E* sqrt(r d0),   phi_n = -f(d0) / f'(d0) = -(2/3) d0,
//   so that lam = -K_n phi1 - B_n phid1 = f(d0) + f'(d0) (d1 - d0) - B_n phid1 (d1 = d0 - h phid1)
//   is Hertz's force to first order in the step, in newtons, with its true stiffness. It is the
//   exact-derivative row divided by (3/2) d0^(1/2) (the same dynamics, lam in N) and the same
//   rest depth d = (f / (E* sqrt(r)))^(2/3) as the paper's row.
// A contact is a row only while d0 > 0 (phi <= 0; the paper has no speculative rows), so it is
// first seen at a depth d0 up to the approach speed times h. In the stiff limit (h^2 K_n >> the
// contact's mass) the linearized row moves d to its linear model's rest, d0 - f(d0) / f'(d0) =
// d0 / 3, in one step: the overlap is pushed out at up to the approach speed. The paper's row
// moves phi, so d, by -phi0 = d0^(3/2) per step: a landing is nearly plastic, and its overlap
// stays for many steps. HertzRow::kPaper keeps the paper's row for that comparison (Fig. 10).
#pragma once

#include <cmath>

#include "engine/solver/drumwright/first_order_step.h"

namespace alsim::bench {

enum class HertzRow {
  kLinearized,  // K_n = (3/2) E* sqrt(r d0) on phi_n = -(2/3) d0 (header comment)
  kPaper,       // K_n = E* sqrt(r) on phi_n = -d0^(3/2) (122)-(123), for comparison
};

// The normal row of a Hertz contact at depth d0 > 0 (header comment): E* (Pa), r the effective
// radius (m), B_n (N s/m), mu; G_n the unit normal either way.
inline SpringRow HertzNormalRow(double depth, double modulus, double radius, double damping,
                                double friction, HertzRow kind = HertzRow::kLinearized) {
  SpringRow row;
  row.type = SpringRowClass::kNormal;
  if (kind == HertzRow::kLinearized) {
    row.stiffness = 1.5 * modulus * std::sqrt(radius * depth);
    row.phi0 = -2.0 / 3.0 * depth;
  } else {
    row.stiffness = modulus * std::sqrt(radius);
    row.phi0 = -depth * std::sqrt(depth);
  }
  row.damping = damping;
  row.friction = friction;
  return row;
}

// Hertz's force E* sqrt(r d^3) and its static depth under a load W: d = (W / (E* sqrt(r)))^(2/3).
inline double HertzForce(double depth, double modulus, double radius) {
  return modulus * std::sqrt(radius * depth * depth * depth);
}
inline double HertzDepth(double load, double modulus, double radius) {
  return std::pow(load / (modulus * std::sqrt(radius)), 2.0 / 3.0);
}

// A memoryless friction row (K_t = 0, digest 9.5): B_t = 1e6 / h, the paper's.
inline SpringRow FrictionRow(double h) {
  SpringRow row;
  row.type = SpringRowClass::kTangent;
  row.damping = 1e6 / h;
  return row;
}

}  // namespace alsim::bench
