// The active-set polish of an interior-point answer of the conic QP (conic_qp.h): guess which
// constraints hold with equality from the converged (s, z), solve the equality-constrained QP
//   min 1/2 x^T P x + c^T x  s.t.  G_A x = h_A
// exactly, and hand back the point only if it is primal and dual feasible (the caller keeps it
// only if its KKT measure is no worse). The interior point stops with every slack and multiplier
// positive; where a constraint is degenerate (bound and multiplier both zero at the answer: the
// QP (83)'s lam_i >= 0 rows of an inactive unilateral constraint, c = 0) its value is only
// O(sqrt(gap)), and the polish returns the exact zero.
//   orthant row i:  active if s_i < z_i (either guess is right for a degenerate row);
//   cone block:     inactive if ||z|| <= delta ||s|| (z = 0), at the apex if ||s|| <= delta ||z||
//                   (s = 0, all its rows active); otherwise the block is on the cone's curved
//                   boundary, which no linear equality describes, and there is no polish.
// With P = L L^T and Y = L^-1 G_A^T, w = -L^-1 c (range-space method):
//   (Y^T Y) y = Y^T w - h_A,   x = L^-T (w - Y y),   z_A = y,  z = 0 elsewhere,  s = h - G x,
// Y^T Y = G_A P^-1 G_A^T factored by LDL^T without pivoting, in row order; a pivot below
// 1e-12 of the largest diagonal (a dependent row, e.g. redundant contacts) gets y_i = 0.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <vector>

#include "engine/solver/drumwright/symmetric_cone.h"

namespace alsim {

class ActiveSetPolish {
 public:
  ActiveSetPolish() = default;
  ActiveSetPolish(const ActiveSetPolish&) = delete;
  ActiveSetPolish& operator=(const ActiveSetPolish&) = delete;
  ActiveSetPolish(ActiveSetPolish&&) = default;

  // Sizes the workspace, grow-only: allocates only when its n x n, n x m and m x m storage
  // exceeds the largest before; Polish then allocates nothing.
  void Resize(int num_variables, const ConeDimensions& cones);

  // The polished (x, s, z) from the interior-point answer (s, z), or false when the active set is
  // not linear (a cone block on its curved boundary), P does not factor, or the polished point
  // is not feasible to `tolerance` (relative to the sizes of h and z). P and G may be blocks of
  // larger matrices; no argument is copied.
  bool Polish(const Eigen::Ref<const Eigen::MatrixXd>& P,
              const Eigen::Ref<const Eigen::VectorXd>& c,
              const Eigen::Ref<const Eigen::MatrixXd>& G,
              const Eigen::Ref<const Eigen::VectorXd>& h,
              const Eigen::Ref<const Eigen::VectorXd>& s,
              const Eigen::Ref<const Eigen::VectorXd>& z, double delta, double tolerance,
              Eigen::Ref<Eigen::VectorXd> x_out, Eigen::Ref<Eigen::VectorXd> s_out,
              Eigen::Ref<Eigen::VectorXd> z_out);

 private:
  using Vector = ArenaVector;
  using Matrix = ArenaMatrix;
  ConeDimensions cones_;
  int n_ = 0, m_ = 0;
  GrowOnlyArena arena_;
  Matrix p_factor_{nullptr, 0, 0};  // n x n: P, then its Cholesky factor L in place
  std::vector<int> active_;         // the active rows, first `count` entries (grow-only)
  Matrix y_{nullptr, 0, 0};         // n x m: L^-1 G_A^T in its first `count` columns
  Matrix gram_{nullptr, 0, 0};      // m x m: Y^T Y, then its LDL^T, in the leading block
  Vector w_{nullptr, 0}, v_{nullptr, 0}, rhs_{nullptr, 0}, multipliers_{nullptr, 0};
};

}  // namespace alsim
