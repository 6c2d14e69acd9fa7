// One island's augmented-Lagrangian surrogate at the current outer iterate, the part of
// Algorithm 1 that every inner solve shares (CANAL's exact Newton on h, and the two Newton
// baselines of Table II, engine/solver/canal/newton_baselines.h). With the outer multipliers
// lambda^l (u^l = -lambda^l) and the per-row bias e~ held fixed, the inner problem is the root of
//   r(v) = A v - b - sum_i J_i^T T_i(x_i(v)),   x_i(v) = lambda^l_i - beta_i (J_i v + e~_i)
// over the island's dofs: eq. (21) when T is CANAL's (the proximal cone projection and e~ the
// lagged De Saxce shift; cone_operators.h CanalConstraintImpulse), eq. (19) when T is the strict
// operator of eq. (17) and e~ = e (StrictConstraintImpulse). Its derivative is
//   dr/dv = A + sum_i beta_i J_i^T D_i J_i,   D_i = dT_i/dx_i                      (eq. 24)
// which is symmetric positive definite for CANAL's T and not symmetric for the strict one. The
// paper has one beta; here constraint i has its own beta_i = beta s_i (CanalPenalty: s_i = 1, or
// its effective mass), so r is the gradient of h with psi_i / beta_i in place of psi_i / beta
// (eq. 22), and every equation keeps its form with beta_i.
//
// AlIsland is a view: CanalSolver owns the storage (island-local dof arrays, per-row arrays
// indexed by Constraint::row_adr, A's upper triangle in H's pattern) and fills the pointers for
// one island; the evaluations below write only that island's entries, so islands run in
// parallel. Every sum runs in a fixed order (constraint order, then dof order), so results do
// not depend on the thread count.
#pragma once

#include <algorithm>
#include <cmath>

#include "engine/data/constraint_set.h"
#include "engine/solver/island_schedule.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/solver_options.h"
#include "engine/solver/stop_test.h"

namespace alsim {

struct AlIsland {
  // ---- the island (set once per solve)
  const ConstraintSet* set = nullptr;
  const JointSpaceJacobian* jacobian = nullptr;
  const int* local_dof = nullptr;    // per global dof: its index among the island's dofs
  const int* constraints = nullptr;  // the island's constraints
  int num_constraints = 0;
  int n = 0;                          // the island's dofs
  const int* column_start = nullptr;  // A's upper triangle as compressed columns (n + 1)
  const int* row_index = nullptr;     // per stored entry
  const double* mass = nullptr;       // per stored entry: A
  const double* rhs = nullptr;        // b, per island dof
  bool strict = false;                // T: StrictConstraintImpulse (eq. 19), else CANAL's (21)
  double newton_threshold = 0;        // the inner tolerance on ||r||, N s
  // ---- the outer iterate (set by the outer loop)
  double beta = 0;                        // the outer loop's penalty (kg, or relative)
  const double* penalty_scale = nullptr;  // s_i per constraint index: beta_i = beta s_i
  const double* outer_impulse = nullptr;  // lambda^l, per row
  const double* shifted_bias = nullptr;   // e~ (0 on soft rows: their k e enters T), per row
  // ---- written by Evaluate, per row (at 3 row_adr for derivative: c.dim x c.dim row-major)
  double* argument = nullptr;      // x
  double* impulse = nullptr;       // lambda = T(x)
  double* row_velocity = nullptr;  // J v
  double* derivative = nullptr;    // D = dT/dx
  double* rounding = nullptr;      // per constraint, at its first row: r's rounding scale
  // ---- written by Residual
  double rounding_floor = 0;  // the size of r's rounding error at the last Residual, N s

  // body(c) for every constraint c of the island, in parallel once the island is large.
  template <class Body>
  void ForConstraints(const Body& body) const {
    IslandParallelFor(num_constraints, kIslandParallelConstraints, kIslandConstraintsPerTask,
                      [&](int s) { body(constraints[s]); });
  }
  // J_c x (c.dim values) for x over the island's dofs.
  void Apply(int c, const double* x, double* out) const;
  // out -= sum_i J_i^T y_i, y_i the rows of `rows` (constraint order).
  void SubtractGather(const double* rows, double* out) const;
  // y = A x over the island (the stored upper triangle, symmetric).
  void MultiplyMass(const double* x, double* y) const;
  // beta_i of constraint c.
  double Penalty(int c) const { return beta * penalty_scale[c]; }
  // x, lambda = T(x), J v, the rounding scales and (with_derivative) D at `velocity`.
  void Evaluate(const double* velocity, bool with_derivative);
  // r = A v - b - J^T lambda (lambda from the last Evaluate, at the same v) into `residual`, A v
  // into `product`; sets rounding_floor and returns ||r||.
  double Residual(const double* velocity, double* residual, double* product);
  // The inner loop's stop: ||r|| below the threshold, or below r's own rounding error (which
  // grows with beta: a threshold under it cannot be met).
  double Tolerance() const { return std::max(newton_threshold, rounding_floor); }
};

// The Euclidean norm of x[0..size), summed in order.
inline double IslandNorm(const double* x, int size) {
  double sum = 0;
  for (int k = 0; k < size; ++k) sum += x[k] * x[k];
  return std::sqrt(sum);
}

// What one inner solve (one outer iteration's lines 6-14 of Algorithm 1) did.
struct InnerSolveResult {
  int steps = 0;             // inner iterations (Newton or trust-region steps, rejected included)
  double residual = 0;       // ||r|| at the final velocity, N s
  double tolerance = 0;      // AlIsland::Tolerance() there
  bool broken = false;       // a factorization met a non-finite matrix: the input is broken
  bool out_of_time = false;  // the deadline or the interrupt stopped it
  // Met the tolerance; an inner solve that ends otherwise (step cap, no progress possible) and
  // was not stopped by the clock is a failure of Table II.
  bool converged() const { return residual < tolerance; }
};

}  // namespace alsim
