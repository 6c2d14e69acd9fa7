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

#include "engine/solver/drumwright/symmetric_cone.h"

namespace alsim {

class ActiveSetPolish {
 public:
  // Sizes the workspace (allocates); Polish then allocates nothing.
  void Resize(int num_variables, const ConeDimensions& cones);

  // The polished (x, s, z) from the interior-point answer (s, z), or false when the active set is
  // not linear (a cone block on its curved boundary), P does not factor, or the polished point
  // is not feasible to `tolerance` (relative to the sizes of h and z).
  bool Polish(const Eigen::MatrixXd& P, const Eigen::VectorXd& c, const Eigen::MatrixXd& G,
              const Eigen::VectorXd& h, const Eigen::VectorXd& s, const Eigen::VectorXd& z,
              double delta, double tolerance, Eigen::VectorXd* x_out, Eigen::VectorXd* s_out,
              Eigen::VectorXd* z_out);

 private:
  ConeDimensions cones_;
  int n_ = 0, m_ = 0;
  Eigen::LLT<Eigen::MatrixXd> p_factor_;
  Eigen::VectorXi active_;  // the active rows, first `count` entries
  Eigen::MatrixXd y_;       // n x m: L^-1 G_A^T in its first `count` columns
  Eigen::MatrixXd gram_;    // m x m: Y^T Y, then its LDL^T, in the leading block
  Eigen::VectorXd w_, v_, rhs_, multipliers_;
};

}  // namespace alsim
