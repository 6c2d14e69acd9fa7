// The closed-form per-constraint operators of the SubADMM paper (Sec. IV-C, eqs. 14-17 and their
// split forms 36-38), shared by every solver and by the accuracy metric.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "engine/data/constraint_set.h"
#include "engine/math/types.h"

namespace alsim {

// The strict operator of eq. (17) on x = (x_n, x_t1, x_t2): the normal part is projected on
// [0, inf) first and never changed by the tangential clamp onto the disk of radius mu lambda_n.
//   open  (x_n <= 0):                lambda = 0
//   stick (||x_t|| <= mu x_n):       lambda = x
//   slip  (otherwise):               lambda = (x_n, mu x_n x_t / ||x_t||)
inline Vec3 StrictConeProjection(const Vec3& x, double mu) {
  if (x[0] <= 0) return Vec3::Zero();
  const double tangent = std::sqrt(x[1] * x[1] + x[2] * x[2]);  // hypot's overflow care is slow
  const double limit = mu * x[0];
  if (tangent <= limit) return x;
  const double scale = limit / tangent;
  return Vec3(x[0], scale * x[1], scale * x[2]);
}

// The friction part of a contact with torsional / rolling rows (condim 4, 6): the projection of
// x (n rows) onto the ellipsoid E = {y : sum_j (y_j / mu_j)^2 <= r^2} in the metric
// sum_j w_j (y_j - x_j)^2, written to y:
//   y_j = x_j a_j / (a_j + t),  a_j = w_j mu_j^2,
// with t = 0 when x is in E, else the root t > 0 of q(t) = r, q(t)^2 = sum_j (x_j / mu_j)^2
// a_j^2 / (a_j + t)^2 (the Lagrange condition of the constrained minimum). q(t) is the norm of
// (H + t I)^{-1} g with H = diag(a), g_j = a_j x_j / mu_j: the trust-region secular equation, so
// 1/q(t) is concave and increasing and Newton's method on 1/q(t) - 1/r from t = 0 climbs to the
// root monotonically (exact in one step when all a_j are equal: the radial scaling). A row with
// mu_j = 0 carries no friction (y_j = 0).
// Why the exact projection, not the scaled one: scaling the rows by 1/mu_j maps E to a ball, and
// projecting there and scaling back is the radial scaling x r / ||M^-1 x||, which keeps the
// direction of x. Its fixed points lambda = P(lambda - s v) have the friction opposite to the
// slip velocity v, while maximal dissipation (MuJoCo's convex problem, and eq. 17's isotropic
// case) needs -v in the normal cone of E at lambda, i.e. lambda_j proportional to -mu_j^2 v_j:
// the two differ as soon as slip mixes rows of different mu (sliding and spinning at once). The
// projection in the metric w has fixed points with -w .* (x - lambda) in the normal cone, which is
// maximal dissipation when the step on row j is s / w_j (w = 1 for the ADMM solvers' uniform
// step; PGS's per-row diagonal steps pass w = their diagonal).
inline void ProjectOntoFrictionEllipsoid(const double* x, const double* mu, const double* w, int n,
                                         double r, double* y) {
  double outside = 0;  // sum_j (x_j / mu_j)^2 over the rows with friction
  for (int j = 0; j < n; ++j) {
    if (mu[j] > 0) outside += (x[j] / mu[j]) * (x[j] / mu[j]);
  }
  if (outside <= r * r) {  // inside (the frictionless rows, separable in the metric, go to 0)
    for (int j = 0; j < n; ++j) y[j] = mu[j] > 0 ? x[j] : 0.0;
    return;
  }
  double a[6];
  for (int j = 0; j < n; ++j) a[j] = w[j] * mu[j] * mu[j];
  const double inverse_r = 1.0 / r;
  double t = 0;
  for (int iteration = 0; iteration < 64; ++iteration) {
    double q2 = 0, slope = 0;  // q(t)^2 and its derivative / -2
    for (int j = 0; j < n; ++j) {
      if (mu[j] <= 0) continue;
      const double s = a[j] / (a[j] + t);
      const double term = (x[j] / mu[j]) * (x[j] / mu[j]) * s * s;
      q2 += term;
      slope += term / (a[j] + t);
    }
    const double q = std::sqrt(q2);
    // h = 1/q - 1/r, h' = slope / q^3 (> 0)
    const double next = t - (1.0 / q - inverse_r) * q2 * q / slope;
    if (!(next > t)) break;  // at the root up to rounding (the iterates only increase)
    const double step = next - t;
    t = next;
    if (step <= 1e-15 * t) break;
  }
  for (int j = 0; j < n; ++j) y[j] = mu[j] > 0 ? x[j] * a[j] / (a[j] + t) : 0.0;
}

// The strict operator of eq. (17) for a contact of dim 4 or 6: lambda_n = max(x_n, 0), and the
// friction rows (tangent1, tangent2, torsion[, rolling1, rolling2]) the Euclidean projection of
// theirs onto the ellipsoid of radius lambda_n with mu = (mu, mu, mu_torsion[, mu_rolling,
// mu_rolling]) (ProjectOntoFrictionEllipsoid with w = 1, or `weight` when not null).
inline void StrictEllipticConeProjection(const Constraint& c, int dim, const double* x, double* y,
                                         const double* weight = nullptr) {
  if (x[0] <= 0) {
    for (int r = 0; r < dim; ++r) y[r] = 0;
    return;
  }
  y[0] = x[0];
  const double mu[5] = {c.friction, c.friction, c.friction_torsion, c.friction_rolling,
                        c.friction_rolling};
  const double ones[5] = {1, 1, 1, 1, 1};
  ProjectOntoFrictionEllipsoid(x + 1, mu, weight != nullptr ? weight : ones, dim - 1, x[0], y + 1);
}

// The constants of constraint c's update at penalty beta (beta_i of one island), computed once
// per penalty change so that the iterations divide nothing.
struct PenaltyTerms {
  double beta = 0;          // beta_i
  double inverse_beta = 0;  // 1 / beta_i
  double step = 0;          // beta_i / |Z_i|
  double soft_inverse = 0;  // soft rows: 1 / (b |Z_i| + beta_i)
};

inline PenaltyTerms MakePenaltyTerms(const Constraint& c, double beta, int blocks) {
  PenaltyTerms terms;
  terms.beta = beta;
  terms.inverse_beta = 1.0 / beta;
  terms.step = beta / blocks;
  if (c.type == ConstraintType::kSoft) terms.soft_inverse = 1.0 / (c.soft_damping * blocks + beta);
  return terms;
}

// UpdateImpulse (below) for a constraint of one row (a joint limit, a servo, a dry friction row, a
// one-row equality; a contact always has three), on scalars; UpdateImpulse's one-row cases call it.
inline double UpdateImpulseOfOneRow(const Constraint& c, double velocity, double bias,
                                    double lambda, const PenaltyTerms& terms, int blocks) {
  switch (c.type) {
    case ConstraintType::kLimit:
      return std::max(0.0, lambda - terms.step * (velocity + bias));
    case ConstraintType::kSoft: {
      const double sum_y = terms.beta * velocity - blocks * lambda;
      const double value =
          -(c.soft_damping * sum_y + terms.beta * c.soft_bias) * terms.soft_inverse;
      return std::min(c.lambda_upper, std::max(c.lambda_lower, value));
    }
    case ConstraintType::kFriction:  // the hard step projected on the box [-f h, f h]
      return std::min(c.lambda_upper,
                      std::max(c.lambda_lower, lambda - terms.step * (velocity + bias)));
    case ConstraintType::kEquality:
    case ConstraintType::kContact:  // not of one row
      break;
  }
  return lambda - terms.step * (velocity + bias);
}

// The impulse update of constraint c with |Z_i| = `blocks` slack blocks and penalty beta, in the
// compact form u = -lambda (digest 6.4, from eqs. 36-39):
//   hard, contact: lambda' = T(lambda - (beta / |Z|) (J v + e))      T = max(., 0) or eq. (17),
//                  the identity for equalities, the clamp to [-f h, f h] for dry friction
//   soft:          lambda' = -(b sum_j y_j + beta k e) / (b |Z| + beta),  sum_j y_j =
//                  beta J v - |Z| lambda (eq. 37), then clamped to the soft impulse range
// `velocity` is J_i v = sum_j J_ij v_j (dim), `bias` e_i (dim), `lambda` the current impulse.
// With beta = 1 and blocks = 1 this is the map whose fixed points solve eq. (13); the accuracy
// metric of Sec. VII measures its residual. `dim` is c.dim.
inline void UpdateImpulse(const Constraint& c, const double* velocity, const double* bias,
                          const double* lambda, const PenaltyTerms& terms, int blocks,
                          double* lambda_out, int dim) {
  const double step = terms.step;
  switch (c.type) {
    case ConstraintType::kContact: {
      if (dim > 3) {  // torsional / rolling rows (never taken by the fixed-size dim-3 callers)
        double x[6];
        for (int r = 0; r < dim; ++r) x[r] = lambda[r] - step * (velocity[r] + bias[r]);
        StrictEllipticConeProjection(c, dim, x, lambda_out);
        return;
      }
      const Vec3 x(lambda[0] - step * (velocity[0] + bias[0]),
                   lambda[1] - step * (velocity[1] + bias[1]),
                   lambda[2] - step * (velocity[2] + bias[2]));
      const Vec3 projected = StrictConeProjection(x, c.friction);
      lambda_out[0] = projected[0];
      lambda_out[1] = projected[1];
      lambda_out[2] = projected[2];
      return;
    }
    case ConstraintType::kLimit:
    case ConstraintType::kSoft:
    case ConstraintType::kFriction:
      lambda_out[0] = UpdateImpulseOfOneRow(c, velocity[0], bias[0], lambda[0], terms, blocks);
      return;
    case ConstraintType::kEquality:  // no projection: the impulse may take any value
      for (int r = 0; r < dim; ++r) lambda_out[r] = lambda[r] - step * (velocity[r] + bias[r]);
      return;
  }
}

// The same with dim = c.dim. (The form above takes dim from callers that know it at compile
// time, so that the compiler sees which rows are read and keeps the row arrays short.)
inline void UpdateImpulse(const Constraint& c, const double* velocity, const double* bias,
                          const double* lambda, const PenaltyTerms& terms, int blocks,
                          double* lambda_out) {
  UpdateImpulse(c, velocity, bias, lambda, terms, blocks, lambda_out, c.dim);
}

inline void UpdateImpulse(const Constraint& c, const double* velocity, const double* bias,
                          const double* lambda, double beta, int blocks, double* lambda_out) {
  UpdateImpulse(c, velocity, bias, lambda, MakePenaltyTerms(c, beta, blocks), blocks, lambda_out);
}

// The whole constraint step of the ADMM solvers (Algorithm 2, lines 10-11) for constraint c with
// `blocks` slack blocks, over-relaxed by `alpha` (SolverOptions::relaxation; 1 is the paper's):
//   h_ij = alpha J_ij v_j + (1 - alpha) z_ij                      (relaxed block velocities)
//   lambda_i' = UpdateImpulse(sum_j h_ij, lambda_i, beta_i)       (eqs. 36-38, 39)
//   z_ij' = h_ij + (lambda_i' - lambda_i) / beta_i                (the slack each block keeps)
// block_velocity[k] holds J_ij v_j (k < blocks <= kMaxConstraintBlocks), z[k] the slack block
// (updated in place), lambda the impulse
// (updated), terms the constraint's MakePenaltyTerms(c, beta_i, blocks). slack_change[k] receives
// z_ij' - z_ij for the dual residual. Returns the square of this constraint's share of theta_p (eq.
// 42), max_j ||J_ij v_j - z_ij'||^2: callers take one square root per island, not one per
// constraint. kBlocks and kDim, when positive, fix `blocks` and c.dim at compile time so that the
// common shapes (a joint row, a contact on one or two bodies) run without loops; 0 leaves them to
// run time. RelaxedConstraintUpdate below picks the shape.
template <int kBlocks, int kDim>
inline double RelaxedConstraintUpdateOfShape(const Constraint& c, int blocks_at_run_time,
                                             const double (*block_velocity)[6], double* const* z,
                                             const double* bias, double* lambda,
                                             const PenaltyTerms& terms, double alpha,
                                             double (*slack_change)[6]) {
  const int blocks = kBlocks > 0 ? kBlocks : blocks_at_run_time;
  if constexpr (kDim == 1) {  // a joint row: the same steps on scalars, no six-row arrays
    double relaxed[kBlocks > 0 ? kBlocks : kMaxConstraintBlocks];
    double velocity = 0;
    for (int k = 0; k < blocks; ++k) {
      relaxed[k] = alpha * block_velocity[k][0] + (1 - alpha) * z[k][0];
      velocity += relaxed[k];
    }
    const double updated = UpdateImpulseOfOneRow(c, velocity, bias[0], lambda[0], terms, blocks);
    const double change = (updated - lambda[0]) * terms.inverse_beta;
    double primal2 = 0;
    for (int k = 0; k < blocks; ++k) {
      const double slack = relaxed[k] + change;
      slack_change[k][0] = slack - z[k][0];
      z[k][0] = slack;
      const double gap = block_velocity[k][0] - slack;
      primal2 = k == 0 ? gap * gap : std::max(primal2, gap * gap);
    }
    lambda[0] = updated;
    return primal2;
  }
  const int dim = kDim > 0 ? kDim : c.dim;
  double relaxed[kBlocks > 0 ? kBlocks : kMaxConstraintBlocks][6];
  double velocity[6] = {0, 0, 0, 0, 0, 0};
  for (int k = 0; k < blocks; ++k) {
    for (int r = 0; r < dim; ++r) {
      relaxed[k][r] = alpha * block_velocity[k][r] + (1 - alpha) * z[k][r];
      velocity[r] += relaxed[k][r];
    }
  }
  double updated[6] = {0, 0, 0, 0, 0, 0};
  UpdateImpulse(c, velocity, bias, lambda, terms, blocks, updated, dim);
  double primal2[kBlocks > 0 ? kBlocks : kMaxConstraintBlocks] = {};
  for (int r = 0; r < dim; ++r) {
    const double change = (updated[r] - lambda[r]) * terms.inverse_beta;
    for (int k = 0; k < blocks; ++k) {
      const double slack = relaxed[k][r] + change;
      slack_change[k][r] = slack - z[k][r];
      z[k][r] = slack;
      const double gap = block_velocity[k][r] - slack;
      primal2[k] += gap * gap;
    }
    lambda[r] = updated[r];
  }
  double largest = primal2[0];
  for (int k = 1; k < blocks; ++k) largest = std::max(largest, primal2[k]);
  return largest;
}

// Calls kernel(std::integral_constant<int, kBlocks>{}, std::integral_constant<int, kDim>{}) with
// the shape of a constraint with `blocks` slack blocks and `dim` rows fixed at compile time for the
// common ones (a joint row, a contact on one body or two) and (0, 0), "read them at run time", for
// the rest, so that per-constraint loops unroll where it matters.
template <class Kernel>
decltype(auto) WithConstraintShape(int blocks, int dim, const Kernel& kernel) {
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  using Three = std::integral_constant<int, 3>;
  using RunTime = std::integral_constant<int, 0>;
  if (blocks == 1 && dim == 1) return kernel(One{}, One{});
  if (blocks == 1 && dim == 3) return kernel(One{}, Three{});
  if (blocks == 2 && dim == 3) return kernel(Two{}, Three{});
  return kernel(RunTime{}, RunTime{});
}

inline double RelaxedConstraintUpdate(const Constraint& c, int blocks,
                                      const double (*block_velocity)[6], double* const* z,
                                      const double* bias, double* lambda, const PenaltyTerms& terms,
                                      double alpha, double (*slack_change)[6]) {
  return WithConstraintShape(blocks, c.dim, [&](auto shape_blocks, auto shape_dim) {
    return RelaxedConstraintUpdateOfShape<decltype(shape_blocks)::value,
                                          decltype(shape_dim)::value>(
        c, blocks, block_velocity, z, bias, lambda, terms, alpha, slack_change);
  });
}

}  // namespace alsim
