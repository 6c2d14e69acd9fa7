#include "engine/solver/drumwright/active_set_polish.h"

#include <algorithm>
#include <cmath>

namespace alsim {

void ActiveSetPolish::Resize(int num_variables, const ConeDimensions& cones) {
  cones_ = cones;
  n_ = num_variables;
  m_ = cones.rows();
  if (static_cast<int>(active_.size()) < m_) active_.resize(m_);
  arena_.Seat([&](GrowOnlyArena& arena) {
    arena.Place(&p_factor_, n_, n_);
    arena.Place(&y_, n_, m_);
    arena.Place(&gram_, m_, m_);
    for (Vector* v : {&w_, &v_}) arena.Place(v, n_);
    for (Vector* v : {&rhs_, &multipliers_}) arena.Place(v, m_);
  });
  y_.setZero();
  gram_.setZero();
  for (Vector* v : {&w_, &v_, &rhs_, &multipliers_}) v->setZero();
}

bool ActiveSetPolish::Polish(const Eigen::Ref<const Eigen::MatrixXd>& P,
                             const Eigen::Ref<const Eigen::VectorXd>& c,
                             const Eigen::Ref<const Eigen::MatrixXd>& G,
                             const Eigen::Ref<const Eigen::VectorXd>& h,
                             const Eigen::Ref<const Eigen::VectorXd>& s,
                             const Eigen::Ref<const Eigen::VectorXd>& z, double delta,
                             double tolerance, Eigen::Ref<Eigen::VectorXd> x_out,
                             Eigen::Ref<Eigen::VectorXd> s_out, Eigen::Ref<Eigen::VectorXd> z_out) {
  // The active set.
  int count = 0;
  for (int i = 0; i < cones_.linear; ++i) {
    if (s[i] < z[i]) active_[count++] = i;
  }
  int offset = cones_.linear;
  for (int m : cones_.second_order) {
    const double s_norm = s.segment(offset, m).norm();
    const double z_norm = z.segment(offset, m).norm();
    if (s_norm <= delta * z_norm) {
      for (int i = 0; i < m; ++i) active_[count++] = offset + i;
    } else if (!(z_norm <= delta * s_norm)) {
      return false;  // on the curved boundary
    }
    offset += m;
  }

  // P = L L^T (Eigen's LLT kernel in place in p_factor_, without the L1 norm LLT keeps for
  // rcond()), w = -L^-1 c, Y = L^-1 G_A^T.
  p_factor_ = P;
  if (Eigen::internal::llt_inplace<double, Eigen::Lower>::blocked(p_factor_) != -1) return false;
  const auto L = p_factor_.triangularView<Eigen::Lower>();
  w_ = -c;
  L.solveInPlace(w_);
  for (int a = 0; a < count; ++a) {
    auto column = y_.col(a);
    column = G.row(active_[a]).transpose();
    L.solveInPlace(column);
  }
  // (Y^T Y) y = Y^T w - h_A, by LDL^T in the leading count x count block of gram_: Y^T Y in the
  // lower triangle, D on the diagonal, L^T in the strict upper triangle (so that every inner
  // product runs down a column).
  double largest = 0;
  for (int j = 0; j < count; ++j) {
    for (int i = j; i < count; ++i) gram_(i, j) = y_.col(i).dot(y_.col(j));
    rhs_[j] = y_.col(j).dot(w_) - h[active_[j]];
    largest = std::max(largest, gram_(j, j));
  }
  const double floor = 1e-12 * largest;
  for (int j = 0; j < count; ++j) {
    const double* uj = gram_.col(j).data();  // U(k, j) = L(j, k), k < j
    double d = gram_(j, j);
    for (int k = 0; k < j; ++k) d -= uj[k] * uj[k] * gram_(k, k);
    gram_(j, j) = d > floor ? d : 0;  // a dependent row: its multiplier is left 0
    for (int i = j + 1; i < count; ++i) {
      const double* ui = gram_.col(i).data();
      double l = gram_(i, j);
      for (int k = 0; k < j; ++k) l -= ui[k] * uj[k] * gram_(k, k);
      gram_(j, i) = gram_(j, j) > 0 ? l / gram_(j, j) : 0;
    }
  }
  for (int i = 0; i < count; ++i) {  // L u = rhs, then D v = u
    const double* ui = gram_.col(i).data();
    double u = rhs_[i];
    for (int k = 0; k < i; ++k) u -= ui[k] * multipliers_[k];
    multipliers_[i] = u;
  }
  for (int i = 0; i < count; ++i) {
    multipliers_[i] = gram_(i, i) > 0 ? multipliers_[i] / gram_(i, i) : 0;
  }
  for (int k = count - 1; k >= 0; --k) {  // L^T y = v, column by column
    const double* uk = gram_.col(k).data();
    const double yk = multipliers_[k];
    for (int i = 0; i < k; ++i) multipliers_[i] -= uk[i] * yk;
  }

  // x = L^-T (w - Y y), s = h - G x, z_A = y.
  v_ = w_;
  for (int a = 0; a < count; ++a) v_ -= multipliers_[a] * y_.col(a);
  p_factor_.adjoint().triangularView<Eigen::Upper>().solveInPlace(v_);  // LLT's matrixU()
  x_out = v_;
  s_out = h;
  s_out.noalias() -= G * v_;
  z_out.setZero();
  for (int a = 0; a < count; ++a) {
    s_out[active_[a]] = 0;
    z_out[active_[a]] = multipliers_[a];
  }

  // Feasible to `tolerance`: orthant rows clipped at 0 within it, cone blocks within it of K.
  const double s_tolerance = tolerance * std::max(1.0, h.norm());
  const double z_tolerance = tolerance * std::max(1.0, z.norm());
  for (int i = 0; i < cones_.linear; ++i) {
    if (s_out[i] < -s_tolerance || z_out[i] < -z_tolerance) return false;
    s_out[i] = std::max(0.0, s_out[i]);
    z_out[i] = std::max(0.0, z_out[i]);
  }
  offset = cones_.linear;
  for (int m : cones_.second_order) {
    const double* sb = s_out.data() + offset;
    const double* zb = z_out.data() + offset;
    double s_tail = 0, z_tail = 0;
    for (int i = 1; i < m; ++i) s_tail += sb[i] * sb[i], z_tail += zb[i] * zb[i];
    if (std::sqrt(s_tail) - sb[0] > s_tolerance || std::sqrt(z_tail) - zb[0] > z_tolerance) {
      return false;
    }
    offset += m;
  }
  return true;
}

}  // namespace alsim
