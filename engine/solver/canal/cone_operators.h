// The per-constraint operators of CANAL (Sec. V of the SubADMM/CANAL paper; digest
// seed-004-subadmm-canal.md sections 4.4 and 5.4) and their derivatives, in alsim's row order
// (normal, tangent1, tangent2) where the paper writes (t1, t2, n).
//
// CANAL's inner problem (eq. 21) maps the argument x_i = lambda~*_i = lambda_i^l - beta (J_i v_hat
// + e~_i) of each constraint to its impulse lambda_i = T_i(x_i), with
//   contact:  the PROXIMAL (Euclidean) projection onto the friction cone C = {||y_t|| <= mu y_n}
//             (not the strict operator of eq. 17: Prop. 3 needs lambda^T (lambda - x) = 0),
//   limit:    max(x, 0)                                       (eq. 14),
//   equality: x                                               (T = identity, digest 2.2),
//   soft:     clamp((b x - beta k e) / (b + beta), lower, upper)  (eq. 15 with u = -lambda^l and
//             x = lambda^l - beta J v_hat, i.e. no bias in x: k e enters here; alsim clamps the
//             impulse to the servo's force range),
//   friction: clamp(x, -f h, f h), the projection onto the box of a dry friction row (a closed
//             convex set: the AL step of a hard row with impulse set K is Pi_K, eq. 14's max(x, 0)
//             for K = [0, inf); a box is the joint-space analogue of the friction disk).
// Every T_i is the gradient of a convex potential psi_i (CanalConstraintPotential), so that
// h(v_hat) = 1/2 v^T A v - b^T v + sum_i psi_i(x_i(v)) / beta is the convex potential of eq. (22),
// grad h = r of eq. (21), and its Hessian A + beta sum_i J_i^T D_i J_i (eq. 24) uses the symmetric
// D_i = dT_i/dx_i in [0, I].
#pragma once

#include "engine/data/constraint_set.h"
#include "engine/math/types.h"

namespace alsim {

// The Euclidean projection onto C = {||y_t|| <= mu y_n} of x = (x_n, x_t1, x_t2), s = ||x_t||
// (digest 4.4):
//   stick (s <= mu x_n):       x
//   open  (mu s <= -x_n):      0            (x in the polar cone -C*)
//   slip  (otherwise):         y_n = (x_n + mu s) / (1 + mu^2),  y_t = mu y_n x_t / s
// When `jacobian` is not null it receives dy/dx, the corrected symmetric eq. (23) (digest 5.4):
//   0 (open), I (stick), and in slip, with x^_t = x_t / s and P = I_2 - x^_t x^_t^T,
//   1/(1 + mu^2) [ 1           mu x^_t^T                 ]
//                [ mu x^_t     mu^2 I_2 + (mu x_n / s) P ]
// whose eigenvalues lie in [0, 1] (mu x_n / s > -mu^2 in slip).
Vec3 ProximalConeProjection(const Vec3& x, double mu, Mat3* jacobian = nullptr);

// The derivative of the strict operator of eq. (17) (StrictConeProjection in
// engine/solver/impulse_update.h), digest 4.3: 0 (open), I (stick), and in slip
//   d y_n / d x_n = 1, d y_n / d x_t = 0, d y_t / d x_n = mu x^_t, d y_t / d x_t = (mu x_n / s) P,
// not symmetric: the plain semismooth-Newton baselines of Table II use it.
Mat3 StrictConeJacobian(const Vec3& x, double mu);

// lambda_i = T_i(x_i) of constraint c at penalty beta (see the file comment), c.dim values from
// x; when `jacobian` is not null, D_i = dT_i/dx_i row-major (c.dim x c.dim): the cone's eq. (23)
// for a contact, 1 or 0 for a limit (x > 0 or not), the identity for an equality, and
// b / (b + beta) for a soft row inside its range, 0 when clamped, and 1 for a friction row inside
// its box, 0 outside.
void CanalConstraintImpulse(const Constraint& c, double beta, const double* x, double* lambda,
                            double* jacobian);

// lambda_i = T_i(x_i) of eq. (19), the plain surrogate of the Newton baselines of Table II: the
// STRICT operator of eq. (17) on a contact (its D_i = StrictConeJacobian, not symmetric in slip),
// and CanalConstraintImpulse's maps (14), (15) and the identity on every other row.
void StrictConstraintImpulse(const Constraint& c, double beta, const double* x, double* lambda,
                             double* jacobian);

// psi_i(x_i), the convex potential whose gradient is T_i (so that sum_i psi_i / beta is the
// constraint part of h, eq. 22): 1/2 ||Pi_C(x)||^2 for a contact (its gradient is Pi_C(x) by
// Moreau's decomposition), 1/2 max(x, 0)^2 for a limit, 1/2 ||x||^2 for an equality, and for a
// soft row the integral of its clamped affine map (quadratic inside the range, linear outside), for
// a friction row 1/2 x^2 - 1/2 dist(x, box)^2.
double CanalConstraintPotential(const Constraint& c, double beta, const double* x);

}  // namespace alsim
