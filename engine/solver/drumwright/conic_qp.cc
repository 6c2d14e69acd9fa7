#include "engine/solver/drumwright/conic_qp.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <utility>

namespace alsim {
namespace {

bool AllFinite(const Eigen::Ref<const Eigen::VectorXd>& v) {
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

// Moves u into the interior of K by u += (1 + t) e when t = IdentityShift(u) is not clearly
// negative (Vandenberghe 2010, the coneqp start).
void ShiftIntoCone(const ConeDimensions& cones, ArenaVector* u) {
  if (u->size() == 0) return;
  const double shift = IdentityShift(cones, u->data());
  if (shift >= -1e-8 * std::max(1.0, u->norm())) AddIdentity(cones, 1 + shift, u->data());
}

// Swaps two views (not their entries), as VectorXd::swap trades buffers; the storage stays in
// the arena.
void SwapViews(ArenaVector* a, ArenaVector* b) {
  double* const data = a->data();
  const Eigen::Index size = a->size();
  new (a) ArenaVector(b->data(), b->size());
  new (b) ArenaVector(data, size);
}

// Eigen::LLT<Ref<MatrixXd>>'s in-place factor of the lower triangle (its kernel, so the same
// bits) on the arena's view itself, without the L1 norm LLT keeps for rcond(); false as LLT's
// NumericalIssue.
bool CholeskyInPlace(ArenaMatrix* a) {
  return Eigen::internal::llt_inplace<double, Eigen::Lower>::blocked(*a) == -1;
}

// What Eigen's in-place LDL^T and LU kernels use of an Eigen::Transpositions, over the caller's
// grow-only storage (Eigen's Map<Transpositions> holds its indices const).
struct Pivots {
  using StorageIndex = int;
  int* data;
  Eigen::Index count;
  int& coeffRef(Eigen::Index i) { return data[i]; }
  Eigen::Index size() const { return count; }
  void setIdentity() {
    for (Eigen::Index i = 0; i < count; ++i) data[i] = static_cast<int>(i);
  }
};

}  // namespace

const char* ConicQpStatusName(ConicQpStatus status) {
  switch (status) {
    case ConicQpStatus::kSolved:
      return "solved";
    case ConicQpStatus::kMaxIterations:
      return "max_iterations";
    case ConicQpStatus::kFailed:
      return "failed";
    case ConicQpStatus::kInvalidInput:
      return "invalid_input";
  }
  return "unknown";
}

void GrowOnlyLdlt::Resize(int n) {
  n_ = n;
  if (static_cast<int>(transpositions_.size()) < n) transpositions_.resize(n);
  arena_.Seat([&](GrowOnlyArena& arena) {
    arena.Place(&matrix_, n, n);
    arena.Place(&temporary_, n);
  });
}

bool GrowOnlyLdlt::Compute(const Eigen::Ref<const Eigen::MatrixXd>& a) {
  // LDLT::compute without its L1 norm (for rcond(), not needed here).
  matrix_ = a;
  Pivots transpositions{transpositions_.data(), n_};
  Eigen::internal::SignMatrix sign = Eigen::internal::ZeroSign;
  return Eigen::internal::ldlt_inplace<Eigen::Lower>::unblocked(matrix_, transpositions, temporary_,
                                                                sign);
}

void GrowOnlyLdlt::SolveInPlace(Eigen::Ref<Eigen::VectorXd> b) const {
  // LDLT::_solve_impl: b = P^T L^-T D^+ L^-1 P b, the transpositions applied first to last, then
  // last to first.
  for (int k = 0; k < n_; ++k) std::swap(b[k], b[transpositions_[k]]);
  matrix_.triangularView<Eigen::UnitLower>().solveInPlace(b);
  const double tolerance = std::numeric_limits<double>::min();
  for (int i = 0; i < n_; ++i) {
    const double d = matrix_(i, i);
    b[i] = std::abs(d) > tolerance ? b[i] / d : 0.0;
  }
  matrix_.triangularView<Eigen::UnitLower>().transpose().solveInPlace(b);
  for (int k = n_ - 1; k >= 0; --k) std::swap(b[k], b[transpositions_[k]]);
}

void GrowOnlyLu::Resize(int n) {
  n_ = n;
  if (static_cast<int>(transpositions_.size()) < n) transpositions_.resize(n);
  arena_.Seat([&](GrowOnlyArena& arena) { arena.Place(&lu_, n, n); });
}

void GrowOnlyLu::Compute(const Eigen::Ref<const Eigen::MatrixXd>& a) {
  // PartialPivLU::compute without its L1 norm and determinant sign.
  lu_ = a;
  Pivots transpositions{transpositions_.data(), n_};
  int count = 0;
  Eigen::internal::partial_lu_inplace(lu_, transpositions, count);
}

void GrowOnlyLu::Solve(const Eigen::Ref<const Eigen::VectorXd>& b,
                       Eigen::Ref<Eigen::VectorXd> x) const {
  // PartialPivLU::_solve_impl: x = U^-1 L^-1 P b, P's row swaps first to last.
  if (x.data() != b.data()) x = b;
  for (int k = 0; k < n_; ++k) std::swap(x[k], x[transpositions_[k]]);
  lu_.triangularView<Eigen::UnitLower>().solveInPlace(x);
  lu_.triangularView<Eigen::Upper>().solveInPlace(x);
}

void ConicQpSolver::Seat(bool dense) {
  const int n = n_, m = m_, r = rank_;
  const int dense_n = dense ? n : 0, dense_m = dense ? m : 0;
  const int low_n = dense ? 0 : n, low_m = dense ? 0 : m, low_r = dense ? 0 : r;
  arena_.Seat([&](GrowOnlyArena& arena) {
    for (Vector* v : {&x_, &px_, &gtz_, &r_x_, &dx_, &bx_, &ex_, &refine_x_, &best_x_, &polish_x_,
                      &scaled_c_, &work_n_}) {
      arena.Place(v, n);
    }
    for (Vector* v : {&s_,      &z_,      &gx_,       &r_z_,       &bs_,        &u_,
                      &t_,      &ds_,     &dz_,       &ds_affine_, &dz_affine_, &step_s_,
                      &step_z_, &bz_,     &ez_,       &es_,        &refine_s_,  &refine_z_,
                      &best_s_, &best_z_, &polish_s_, &polish_z_,  &work_m_,    &work_m2_}) {
      arena.Place(v, m);
    }
    // Dense: no structured vector; diagonal plus low rank: no n x n matrix.
    arena.Place(&scaled_g_, dense_m, dense_n);
    arena.Place(&scaled_p_, dense_n, dense_n);
    arena.Place(&kkt_, dense_n, dense_n);
    arena.Place(&scaled_g_rows_, dense_m, dense_n);
    arena.Place(&cholesky_, dense_n, dense_n);
    for (Vector* v : {&scaled_p_diagonal_, &inv_delta_, &coupling_, &woodbury_q_, &woodbury_l_}) {
      arena.Place(v, low_n);
    }
    for (Vector* v : {&structured_h_, &row_weight_, &ones_}) arena.Place(v, low_m);
    arena.Place(&capacitance_, 2 * low_r, 2 * low_r);
    arena.Place(&rank_r_, low_r);
    for (Vector* v : {&rank_rhs_, &capacitance_scale_, &rank_xi_}) arena.Place(v, 2 * low_r);
  });
}

void ConicQpSolver::ResizeCommon(int num_variables, const ConeDimensions& cones, bool dense) {
  cones_ = cones;  // the vector's copy keeps its capacity
  n_ = num_variables;
  m_ = cones.rows();
  scaling_.Resize(cones);
  Seat(dense);
  for (Vector* v : {&x_, &px_, &gtz_, &r_x_, &dx_, &bx_, &ex_, &refine_x_, &best_x_, &polish_x_,
                    &scaled_c_, &work_n_}) {
    v->setZero();
  }
  for (Vector* v : {&s_,      &z_,      &gx_,       &r_z_,       &bs_,        &u_,
                    &t_,      &ds_,     &dz_,       &ds_affine_, &dz_affine_, &step_s_,
                    &step_z_, &bz_,     &ez_,       &es_,        &refine_s_,  &refine_z_,
                    &best_s_, &best_z_, &polish_s_, &polish_z_,  &work_m_,    &work_m2_}) {
    v->setZero();
  }
}

void ConicQpSolver::Resize(int num_variables, const ConeDimensions& cones) {
  rank_ = 0;
  ResizeCommon(num_variables, cones, true);
  layout_ = Layout::kDense;
  polish_.Resize(num_variables, cones);
  factor_.Resize(num_variables);
  for (Matrix* a : {&scaled_g_, &scaled_p_, &kkt_, &cholesky_}) a->setZero();
  scaled_g_rows_.setZero();
}

void ConicQpSolver::ResizeDiagonalLowRank(int num_variables, int rank, bool nonnegative) {
  ConeDimensions cones;  // no cone blocks: its vector stays empty, allocating nothing
  cones.linear = (nonnegative ? 2 : 1) * num_variables;
  rank_ = rank;
  ResizeCommon(num_variables, cones, false);
  layout_ = Layout::kDiagonalLowRank;
  nonnegative_ = nonnegative;
  for (Vector* v : {&scaled_p_diagonal_, &inv_delta_, &coupling_, &woodbury_q_, &woodbury_l_}) {
    v->setZero();
  }
  for (Vector* v : {&structured_h_, &row_weight_}) v->setZero();
  ones_.setOnes();
  capacitance_.setZero();
  capacitance_lu_.Resize(2 * rank);
  rank_r_.setZero();
  rank_rhs_.setZero();
  capacitance_scale_.setOnes();
  rank_xi_.setZero();
}

bool ConicQpSolver::Factor(const Matrix& P) {
  // P + G~^T G~, lower triangle, in tiles of kTile x kTile: each entry starts at P(i, j) and adds
  // G~(r, i) G~(r, j) in row order r = 0, 1, ... (a fixed order whatever the vector width); a
  // zero G~(r, i) (the selection rows x_u >= 0, lam >= 0) adds nothing and is skipped.
  constexpr int kTile = 32;
  double tile[kTile][kTile];
  scaled_g_rows_ = scaled_g_;
  for (int j0 = 0; j0 < n_; j0 += kTile) {
    const int jn = std::min(kTile, n_ - j0);
    for (int i0 = j0; i0 < n_; i0 += kTile) {
      const int in = std::min(kTile, n_ - i0);
      for (int ii = 0; ii < in; ++ii) {
        for (int jj = 0; jj < jn; ++jj) tile[ii][jj] = P(i0 + ii, j0 + jj);
      }
      for (int r = 0; r < m_; ++r) {
        const double* row = scaled_g_rows_.row(r).data();
        for (int ii = 0; ii < in; ++ii) {
          const double gi = row[i0 + ii];
          if (gi == 0) continue;
          for (int jj = 0; jj < jn; ++jj) tile[ii][jj] += gi * row[j0 + jj];
        }
      }
      for (int ii = 0; ii < in; ++ii) {
        for (int jj = 0; jj < jn && j0 + jj <= i0 + ii; ++jj) {
          kkt_(i0 + ii, j0 + jj) = tile[ii][jj];
          kkt_(j0 + jj, i0 + ii) = tile[ii][jj];
        }
      }
    }
  }
  // Cholesky (Eigen's blocked LLT, in place in cholesky_) when it succeeds, else the pivoted
  // LDL^T, which still factors the nearly singular systems near the solution.
  cholesky_ = kkt_;
  use_cholesky_ = CholeskyInPlace(&cholesky_);
  if (use_cholesky_) return true;
  return factor_.Compute(kkt_);
}

bool ConicQpSolver::FactorDiagonalLowRank() {
  // delta_i = p_i + g2_i + a_i^2 g1_i and S's blocks (header comment), each sum over the rows in
  // order; S_21 = S_12^T.
  const DiagonalLowRankQp& qp = *structured_;
  const int r = rank_;
  capacitance_.setZero();
  for (int k = 0; k < r; ++k) capacitance_(k, r + k) = 1;
  for (int i = 0; i < n_; ++i) {
    const double a = qp.a_diagonal[i];
    const double g1 = row_weight_[i];
    const double base = scaled_p_diagonal_[i] + (nonnegative_ ? row_weight_[n_ + i] : 0.0);
    const double delta = base + a * a * g1;
    if (!(delta > 0) || !std::isfinite(delta)) return false;
    const double inv = 1 / delta;
    const double couple = a * g1 * inv;
    const double weight = g1 * base * inv;  // g1 - a^2 g1^2 / delta, without the difference
    inv_delta_[i] = inv;
    coupling_[i] = couple;
    for (int k = 0; k < r; ++k) {
      const double uk = qp.u(i, k), vk = qp.v(i, k);
      for (int l = 0; l < r; ++l) {
        capacitance_(k, l) -= weight * uk * qp.u(i, l);
        capacitance_(k, r + l) += couple * uk * qp.v(i, l);
        capacitance_(r + k, r + l) += inv * vk * qp.v(i, l);
      }
    }
  }
  for (int k = 0; k < r; ++k) {
    for (int l = 0; l < r; ++l) capacitance_(r + l, k) = capacitance_(k, r + l);
  }
  if (!capacitance_.allFinite()) return false;
  // Symmetric equilibration E S E, E = diag(|S_kk|^-1/2): U's columns carry W (up to O(hB))
  // and V's do not, so S's blocks differ by many orders; the LU is of the balanced matrix.
  for (int k = 0; k < 2 * r; ++k) {
    const double d = std::abs(capacitance_(k, k));
    capacitance_scale_[k] = d > 0 ? 1 / std::sqrt(d) : 1.0;
  }
  capacitance_ = capacitance_scale_.asDiagonal() * capacitance_ * capacitance_scale_.asDiagonal();
  if (r > 0) capacitance_lu_.Compute(capacitance_);
  return true;
}

bool ConicQpSolver::FactorNewton(bool start) {
  if (layout_ == Layout::kDiagonalLowRank) {
    // g = W^-2 e: W = I at the start, W = diag(d) on the orthant otherwise.
    if (start) {
      row_weight_.setOnes();
    } else {
      scaling_.ApplyInverse(ones_.data(), row_weight_.data());
      row_weight_ = row_weight_.cwiseProduct(row_weight_);
    }
    return FactorDiagonalLowRank();
  }
  const Eigen::Ref<const Eigen::MatrixXd>& G = *dense_g_;
  if (start) {
    scaled_g_ = G;
  } else {
    // G~ = W^-1 G, column by column.
    for (int j = 0; j < n_; ++j) scaling_.ApplyInverse(G.col(j).data(), scaled_g_.col(j).data());
  }
  return Factor(scaled_p_);
}

void ConicQpSolver::SolveFactored(Vector* v) {
  if (layout_ == Layout::kDiagonalLowRank) {
    // Woodbury: q = Delta^-1 v, S xi = [U^T (a g1 q); V^T q], v = q - Delta^-1 L xi.
    const DiagonalLowRankQp& qp = *structured_;
    const int r = rank_;
    woodbury_q_ = v->cwiseProduct(inv_delta_);
    if (r == 0) {
      *v = woodbury_q_;
      return;
    }
    woodbury_l_ = v->cwiseProduct(coupling_);
    rank_rhs_.head(r).noalias() = qp.u.transpose() * woodbury_l_;
    rank_rhs_.tail(r).noalias() = qp.v.transpose() * woodbury_q_;
    rank_rhs_ = rank_rhs_.cwiseProduct(capacitance_scale_);
    capacitance_lu_.Solve(rank_rhs_, rank_xi_);
    rank_xi_ = rank_xi_.cwiseProduct(capacitance_scale_);
    woodbury_l_.noalias() = qp.u * rank_xi_.head(r);
    *v = woodbury_q_ - coupling_.cwiseProduct(woodbury_l_);
    woodbury_l_.noalias() = qp.v * rank_xi_.tail(r);
    *v -= inv_delta_.cwiseProduct(woodbury_l_);
    return;
  }
  if (use_cholesky_) {
    // LLT::solveInPlace: L^-T L^-1 v.
    cholesky_.triangularView<Eigen::Lower>().solveInPlace(*v);
    cholesky_.adjoint().triangularView<Eigen::Upper>().solveInPlace(*v);
  } else {
    factor_.SolveInPlace(*v);
  }
}

void ConicQpSolver::SolveReduced(const Vector& bx, const Vector& bz, const Vector& bs, Vector* dx,
                                 Vector* ds, Vector* dz) {
  // u = lambda \ b_s, t = u - W^-1 b_z.
  JordanDivide(cones_, scaling_.lambda().data(), bs.data(), u_.data());
  scaling_.ApplyInverse(bz.data(), t_.data());
  t_ = u_ - t_;
  if (layout_ == Layout::kDiagonalLowRank) {
    // The same with G~ = W^-1 G applied as products: G~^T t = G^T (W^-1 t), G~ dx = W^-1 (G dx).
    scaling_.ApplyInverse(t_.data(), work_m2_.data());
    *dx = bx;
    SubtractGt(work_m2_, dx);
    SolveFactored(dx);
    ProductG(*dx, &work_m2_);
    scaling_.ApplyInverse(work_m2_.data(), dz->data());
    *dz += t_;
    *ds = u_ - *dz;
    return;
  }
  // (P + G~^T G~) dx = b_x - G~^T t.
  *dx = bx;
  dx->noalias() -= scaled_g_.transpose() * t_;
  SolveFactored(dx);
  // dz~ = G~ dx + t, ds~ = u - dz~.
  *dz = t_;
  dz->noalias() += scaled_g_ * *dx;
  *ds = u_ - *dz;
}

void ConicQpSolver::ProductP(const Vector& x, Vector* out) const {
  if (layout_ == Layout::kDiagonalLowRank) {
    *out = scaled_p_diagonal_.cwiseProduct(x);
  } else {
    out->noalias() = scaled_p_.selfadjointView<Eigen::Lower>() * x;
  }
}

void ConicQpSolver::ProductG(const Vector& x, Vector* out) {
  if (layout_ != Layout::kDiagonalLowRank) {
    out->noalias() = *dense_g_ * x;
    return;
  }
  // G x = [-(a o x + U (V^T x)); -x].
  const DiagonalLowRankQp& qp = *structured_;
  rank_r_.noalias() = qp.v.transpose() * x;
  out->head(n_) = qp.a_diagonal.cwiseProduct(x);
  out->head(n_).noalias() += qp.u * rank_r_;
  out->head(n_) = -out->head(n_);
  if (nonnegative_) out->tail(n_) = -x;
}

void ConicQpSolver::SubtractG(const Vector& x, Vector* out) {
  if (layout_ != Layout::kDiagonalLowRank) {
    out->noalias() -= *dense_g_ * x;
    return;
  }
  ProductG(x, &work_m_);
  *out -= work_m_;
}

void ConicQpSolver::SubtractGt(const ConstVector& z, Vector* out) {
  if (layout_ != Layout::kDiagonalLowRank) {
    out->noalias() -= dense_g_->transpose() * z;
    return;
  }
  // G^T z = -(a o z_1 + V (U^T z_1)) - z_2.
  const DiagonalLowRankQp& qp = *structured_;
  rank_r_.noalias() = qp.u.transpose() * z.head(n_);
  *out += qp.a_diagonal.cwiseProduct(z.head(n_));
  out->noalias() += qp.v * rank_r_;
  if (nonnegative_) *out += z.tail(n_);
}

void ConicQpSolver::SolveNewton() {
  bx_ = -r_x_;
  bz_ = -r_z_;
  SolveReduced(bx_, bz_, bs_, &dx_, &ds_, &dz_);
  const int steps = layout_ == Layout::kDiagonalLowRank ? parameters_.woodbury_refinement_steps
                                                        : parameters_.refinement_steps;
  for (int refinement = 0; refinement < steps; ++refinement) {
    // The residuals of the unreduced system in the original variables, ds = W ds~, dz = W^-1 dz~:
    // e_x = b_x - P dx - G^T dz, e_z = b_z - G dx - ds, e_s = b_s - lambda o (ds~ + dz~).
    scaling_.Apply(ds_.data(), step_s_.data());
    scaling_.ApplyInverse(dz_.data(), step_z_.data());
    ProductP(dx_, &ex_);
    ex_ = bx_ - ex_;
    SubtractGt(step_z_, &ex_);
    ez_ = bz_ - step_s_;
    SubtractG(dx_, &ez_);
    u_ = ds_ + dz_;
    JordanProduct(cones_, scaling_.lambda().data(), u_.data(), es_.data());
    es_ = bs_ - es_;
    SolveReduced(ex_, ez_, es_, &refine_x_, &refine_s_, &refine_z_);
    dx_ += refine_x_;
    ds_ += refine_s_;
    dz_ += refine_z_;
  }
}

bool ConicQpSolver::Measure(const Vector& c, const ConstVector& h, ConicQpStatistics* stats) {
  ProductP(x_, &px_);
  ProductG(x_, &gx_);
  gtz_.setZero();
  SubtractGt(z_, &gtz_);
  gtz_ = -gtz_;
  r_x_ = px_ + c + gtz_;
  r_z_ = gx_ + s_ - h;
  const double gap = s_.dot(z_);
  const double primal = 0.5 * x_.dot(px_) + c.dot(x_);
  const double dual = primal + z_.dot(gx_) - z_.dot(h);
  stats->primal_residual = r_z_.norm();
  stats->dual_residual = r_x_.norm();
  stats->gap = gap;
  stats->primal_objective = primal;
  stats->dual_objective = dual;
  // On the structured layout G x and G^T z are sums of pieces (a o x and U V^T x; a o z_1 and
  // V U^T z_1) that may cancel, and their rounding is relative to the pieces: they join the
  // scales, as the terms of r_x and r_z do.
  double pieces_x = 0, pieces_z = 0;
  if (layout_ == Layout::kDiagonalLowRank) {
    const DiagonalLowRankQp& qp = *structured_;
    rank_r_.noalias() = qp.v.transpose() * x_;
    work_n_.noalias() = qp.u * rank_r_;
    pieces_x = std::max(work_n_.norm(), qp.a_diagonal.cwiseProduct(x_).norm());
    rank_r_.noalias() = qp.u.transpose() * z_.head(n_);
    work_n_.noalias() = qp.v * rank_r_;
    pieces_z = std::max(work_n_.norm(), qp.a_diagonal.cwiseProduct(z_.head(n_)).norm());
  }
  const double primal_scale = std::max({gx_.norm(), s_.norm(), h.norm(), pieces_x});
  const double dual_scale = std::max({px_.norm(), c.norm(), gtz_.norm(), pieces_z});
  const double gap_scale = std::max({std::abs(primal), std::abs(dual), 1e-300});
  stats->kkt_residual =
      std::max({stats->primal_residual / (1 + primal_scale),
                stats->dual_residual / (1 + dual_scale), std::abs(gap) / (1 + gap_scale)});
  const ConicQpParameters& p = parameters_;
  return stats->primal_residual <= p.feasibility_absolute + p.feasibility_relative * primal_scale &&
         stats->dual_residual <= p.feasibility_absolute + p.feasibility_relative * dual_scale &&
         gap <= p.gap_absolute + p.gap_relative * gap_scale;
}

void ConicQpSolver::KeepIfBest(const ConicQpStatistics& stats) {
  if (stats.kkt_residual >= best_.kkt_residual) return;
  best_ = stats;
  best_x_ = x_;
  best_s_ = s_;
  best_z_ = z_;
}

ConicQpStatistics ConicQpSolver::RestoreBest(ConicQpStatistics stats) {
  if (best_.kkt_residual < stats.kkt_residual) {
    const int iterations = stats.iterations;
    stats = best_;
    stats.iterations = iterations;
    x_ = best_x_;
    s_ = best_s_;
    z_ = best_z_;
  }
  return stats;
}

ConicQpStatistics ConicQpSolver::AtFloor(ConicQpStatistics stats) {
  stats = RestoreBest(stats);
  stats.at_floor = true;
  stats.status = stats.kkt_residual <= parameters_.acceptable_kkt_residual ? ConicQpStatus::kSolved
                                                                           : ConicQpStatus::kFailed;
  return stats;
}

bool ConicQpSolver::PolishDiagonalLowRank(const ConstVector& h) {
  // The equality QP on the active set (header comment): S1 the active rows of A x >= b, S2 those
  // of x >= 0 (row i active when s_i < z_i), S1 and S2 disjoint, a_i != 0 on S1; unknowns
  // eta = U_S1^T y and mu = V^T x in the 2r x 2r system, then x, y and z_2 row by row.
  const DiagonalLowRankQp& qp = *structured_;
  const int r = rank_;
  const Vector& p = scaled_p_diagonal_;
  capacitance_.setIdentity();
  for (int i = 0; i < n_; ++i) {
    const bool row = s_[i] < z_[i];
    const bool bound = nonnegative_ && s_[n_ + i] < z_[n_ + i];
    if (row && (bound || qp.a_diagonal[i] == 0)) return false;
    if (bound) continue;
    if (row) {
      // x_i = (b_i - u_i^T mu) / a_i, y_i = (p_i x_i + c_i - v_i^T eta) / a_i.
      const double a = qp.a_diagonal[i];
      const double pa = p[i] / (a * a);
      for (int k = 0; k < r; ++k) {
        const double uk = qp.u(i, k), vk = qp.v(i, k);
        for (int l = 0; l < r; ++l) {
          capacitance_(k, r + l) += pa * uk * qp.u(i, l);
          capacitance_(k, l) += uk * qp.v(i, l) / a;
          capacitance_(r + k, r + l) += vk * qp.u(i, l) / a;
        }
      }
    } else {
      // x_i = (v_i^T eta - c_i) / p_i.
      for (int k = 0; k < r; ++k) {
        const double vk = qp.v(i, k);
        for (int l = 0; l < r; ++l) capacitance_(r + k, l) -= vk * qp.v(i, l) / p[i];
      }
    }
  }
  if (!capacitance_.allFinite()) return false;
  if (r > 0) capacitance_lu_.Compute(capacitance_);
  if (!PolishSolve(qp.b, scaled_c_, &polish_x_, &polish_z_)) return false;
  // Iterative refinement on the equality QP's residuals: b_S1 - A_S1 x and the stationarity
  // P x + c + G^T z (x_i = (b_i - u_i^T mu) / a_i loses digits where a_i is small).
  for (int refinement = 0; refinement < parameters_.refinement_steps; ++refinement) {
    ProductG(polish_x_, &work_m2_);
    bx_ = qp.b + work_m2_.head(n_);
    ex_ = p.cwiseProduct(polish_x_) + scaled_c_;
    refine_z_ = -polish_z_;
    SubtractGt(refine_z_, &ex_);
    if (!PolishSolve(bx_, ex_, &refine_x_, &refine_z_)) return false;
    polish_x_ += refine_x_;
    polish_z_ += refine_z_;
  }
  // s = h - G x; the point stands if it misses the orthant by at most 1e-9 of h's and z's sizes.
  ProductG(polish_x_, &polish_s_);
  polish_s_ = h - polish_s_;
  const double tolerance =
      1e-9 * std::max({1.0, h.lpNorm<Eigen::Infinity>(), polish_z_.lpNorm<Eigen::Infinity>()});
  return polish_s_.allFinite() && polish_z_.allFinite() &&
         (m_ == 0 || (polish_s_.minCoeff() >= -tolerance && polish_z_.minCoeff() >= -tolerance));
}

bool ConicQpSolver::PolishSolve(const ConstVector& b, const ConstVector& c, Vector* x, Vector* z) {
  // The right side of the 2r x 2r system (header comment), its solve, and x, y, z_2 by rows.
  const DiagonalLowRankQp& qp = *structured_;
  const int r = rank_;
  const Vector& p = scaled_p_diagonal_;
  rank_rhs_.setZero();
  for (int i = 0; i < n_; ++i) {
    const bool row = s_[i] < z_[i];
    const bool bound = nonnegative_ && s_[n_ + i] < z_[n_ + i];
    if (bound) continue;
    if (row) {
      const double a = qp.a_diagonal[i];
      const double pa = p[i] / (a * a);
      for (int k = 0; k < r; ++k) {
        rank_rhs_[k] += qp.u(i, k) * (pa * b[i] + c[i] / a);
        rank_rhs_[r + k] += qp.v(i, k) * b[i] / a;
      }
    } else {
      for (int k = 0; k < r; ++k) rank_rhs_[r + k] -= qp.v(i, k) * c[i] / p[i];
    }
  }
  if (!rank_rhs_.allFinite()) return false;
  if (r > 0) capacitance_lu_.Solve(rank_rhs_, rank_xi_);
  if (!rank_xi_.allFinite()) return false;
  const auto eta = rank_xi_.head(r);
  const auto mu = rank_xi_.tail(r);
  z->setZero();
  for (int i = 0; i < n_; ++i) {
    const bool row = s_[i] < z_[i];
    const bool bound = nonnegative_ && s_[n_ + i] < z_[n_ + i];
    const double v_eta = qp.v.row(i).dot(eta);
    if (bound) {
      (*x)[i] = 0;
      (*z)[n_ + i] = c[i] - v_eta;
    } else if (row) {
      const double a = qp.a_diagonal[i];
      (*x)[i] = (b[i] - qp.u.row(i).dot(mu)) / a;
      (*z)[i] = (p[i] * (*x)[i] + c[i] - v_eta) / a;
    } else {
      (*x)[i] = (v_eta - c[i]) / p[i];
    }
  }
  return true;
}

void ConicQpSolver::SwapPolished() {
  SwapViews(&x_, &polish_x_);
  SwapViews(&s_, &polish_s_);
  SwapViews(&z_, &polish_z_);
}

void ConicQpSolver::TryPolish(const Vector& c, const ConstVector& h, ConicQpStatistics* stats) {
  // A block is called inactive (or at the apex) when its multiplier (or slack) is below 1e-3 of
  // the other; the polished point may miss K or the orthant by 1e-9 of h's and z's sizes.
  if (layout_ == Layout::kDiagonalLowRank) {
    if (!PolishDiagonalLowRank(h)) return;
  } else if (!polish_.Polish(scaled_p_, c, *dense_g_, h, s_, z_, 1e-3, 1e-9, polish_x_, polish_s_,
                             polish_z_)) {
    return;
  }
  SwapPolished();
  ConicQpStatistics trial = *stats;
  Measure(c, h, &trial);
  if (trial.kkt_residual <= stats->kkt_residual) {
    *stats = trial;
    stats->polished = true;
    return;
  }
  SwapPolished();
}

ConicQpStatistics ConicQpSolver::Unscale(double omega, ConicQpStatistics stats) {
  z_ *= omega;
  stats.objective_scale = omega;
  stats.dual_residual *= omega;
  stats.gap *= omega;
  stats.primal_objective *= omega;
  stats.dual_objective *= omega;
  return stats;
}

ConicQpStatistics ConicQpSolver::Solve(const Eigen::Ref<const Eigen::MatrixXd>& P,
                                       const Eigen::Ref<const Eigen::VectorXd>& c,
                                       const Eigen::Ref<const Eigen::MatrixXd>& G,
                                       const Eigen::Ref<const Eigen::VectorXd>& h,
                                       const Eigen::VectorXd* primal_start) {
  if (layout_ != Layout::kDense || P.rows() != n_ || P.cols() != n_ || c.size() != n_ ||
      G.rows() != m_ || G.cols() != n_ || h.size() != m_ ||
      (primal_start != nullptr && primal_start->size() != n_)) {
    ConicQpStatistics stats;
    stats.status = ConicQpStatus::kInvalidInput;
    return stats;
  }
  // The objective divided by omega = max_i P_ii (1 when P's diagonal is 0): the same minimizer,
  // duals z / omega, so that the start's z = G x - h has the scale of the multipliers.
  double omega = 0;
  for (int i = 0; i < n_; ++i) omega = std::max(omega, P(i, i));
  if (!(omega > 0) || !std::isfinite(omega)) omega = 1;
  scaled_p_ = P / omega;
  scaled_c_ = c / omega;
  dense_g_ = &G;
  ConicQpStatistics stats = SolveScaled(scaled_c_, h, primal_start);
  if (stats.status == ConicQpStatus::kSolved && parameters_.polish) {
    TryPolish(scaled_c_, h, &stats);
  }
  dense_g_ = nullptr;
  return Unscale(omega, stats);
}

ConicQpStatistics ConicQpSolver::SolveDiagonalLowRank(const DiagonalLowRankQp& qp,
                                                      const Eigen::VectorXd* primal_start) {
  const auto sized = [&](const Eigen::Ref<const Eigen::MatrixXd>& M) {
    return M.rows() == n_ && M.cols() == rank_;
  };
  if (layout_ != Layout::kDiagonalLowRank || qp.nonnegative != nonnegative_ || qp.p.size() != n_ ||
      qp.c.size() != n_ || qp.a_diagonal.size() != n_ || qp.b.size() != n_ || !sized(qp.u) ||
      !sized(qp.v) || (primal_start != nullptr && primal_start->size() != n_)) {
    ConicQpStatistics stats;
    stats.status = ConicQpStatus::kInvalidInput;
    return stats;
  }
  double omega = 0;
  for (int i = 0; i < n_; ++i) omega = std::max(omega, qp.p[i]);
  if (!(omega > 0) || !std::isfinite(omega)) omega = 1;
  scaled_p_diagonal_ = qp.p / omega;
  scaled_c_ = qp.c / omega;
  structured_h_.head(n_) = -qp.b;
  if (nonnegative_) structured_h_.tail(n_).setZero();
  structured_ = &qp;
  ConicQpStatistics stats = SolveScaled(scaled_c_, structured_h_, primal_start);
  if (stats.status == ConicQpStatus::kSolved && parameters_.polish) {
    TryPolish(scaled_c_, structured_h_, &stats);
  }
  structured_ = nullptr;
  return Unscale(omega, stats);
}

ConicQpStatistics ConicQpSolver::SolveScaled(const Vector& c, const ConstVector& h,
                                             const Eigen::VectorXd* primal_start) {
  ConicQpStatistics stats;
  // Start: the least-squares point of [P G^T; G -I] [x; z] = [-c; h], i.e.
  // (P + G^T G) x = -c + G^T h, z = G x - h, s = -z (W = I).
  if (!FactorNewton(true)) {
    stats.status = ConicQpStatus::kFailed;
    return stats;
  }
  x_.setZero();
  SubtractGt(h, &x_);
  x_ = -x_;
  x_ -= c;
  SolveFactored(&x_);
  z_ = h;
  SubtractG(x_, &z_);
  z_ = -z_;
  if (primal_start != nullptr) {
    x_ = *primal_start;
    s_ = h;
    SubtractG(x_, &s_);
  } else {
    s_ = -z_;
  }
  ShiftIntoCone(cones_, &s_);
  ShiftIntoCone(cones_, &z_);

  best_ = ConicQpStatistics();
  best_.kkt_residual = std::numeric_limits<double>::infinity();
  const int degree = std::max(1, cones_.degree());
  const double fraction = parameters_.step_fraction;
  for (int iteration = 0;; ++iteration) {
    stats.iterations = iteration;
    if (Measure(c, h, &stats)) {
      stats.status = ConicQpStatus::kSolved;
      return stats;
    }
    KeepIfBest(stats);
    // Rounding has taken over once the measure climbs far above the best one seen.
    if (stats.kkt_residual > parameters_.divergence_factor * best_.kkt_residual) {
      return AtFloor(stats);
    }
    if (iteration == parameters_.max_iterations) {
      stats = RestoreBest(stats);
      stats.status = ConicQpStatus::kMaxIterations;
      return stats;
    }
    if (!scaling_.Compute(s_.data(), z_.data())) return AtFloor(stats);
    if (!FactorNewton(false)) return AtFloor(stats);
    const ConstVector lambda = scaling_.lambda();
    const double gap = lambda.squaredNorm();  // = s^T z
    const double mu = gap / degree;

    // Predictor: b_s = -lambda o lambda.
    JordanProduct(cones_, lambda.data(), lambda.data(), bs_.data());
    bs_ = -bs_;
    SolveNewton();
    ds_affine_ = ds_;
    dz_affine_ = dz_;
    const double affine_step = std::min({1.0, MaxStep(cones_, lambda.data(), ds_.data()),
                                         MaxStep(cones_, lambda.data(), dz_.data())});
    double affine_gap = 0;
    for (int r = 0; r < m_; ++r) {
      affine_gap += (lambda[r] + affine_step * ds_[r]) * (lambda[r] + affine_step * dz_[r]);
    }
    const double ratio = gap > 0 ? std::clamp(affine_gap / gap, 0.0, 1.0) : 0.0;
    const double sigma = ratio * ratio * ratio;

    // Corrector: b_s = -lambda o lambda - ds~_a o dz~_a + sigma mu e.
    JordanProduct(cones_, lambda.data(), lambda.data(), bs_.data());
    JordanProduct(cones_, ds_affine_.data(), dz_affine_.data(), u_.data());
    bs_ = -bs_ - u_;
    AddIdentity(cones_, sigma * mu, bs_.data());
    SolveNewton();
    const double to_boundary = std::min(MaxStep(cones_, lambda.data(), ds_.data()),
                                        MaxStep(cones_, lambda.data(), dz_.data()));
    const double step = std::min(1.0, fraction * to_boundary);
    if (!(step > 0) || !AllFinite(dx_) || !AllFinite(ds_) || !AllFinite(dz_)) {
      return AtFloor(stats);
    }
    // s + step W ds~ and z + step W^-1 dz~, kept only while both stay interior to K: in exact
    // arithmetic they do (step < MaxStep), in rounding they may not once s_i or z_i is tiny.
    scaling_.Apply(ds_.data(), step_s_.data());
    scaling_.ApplyInverse(dz_.data(), step_z_.data());
    step_s_ *= step;
    step_s_ += s_;
    step_z_ *= step;
    step_z_ += z_;
    if (m_ > 0 && (!(IdentityShift(cones_, step_s_.data()) < 0) ||
                   !(IdentityShift(cones_, step_z_.data()) < 0))) {
      return AtFloor(stats);
    }
    x_ += step * dx_;
    SwapViews(&s_, &step_s_);
    SwapViews(&z_, &step_z_);
  }
}

void ProjectOntoCone(const ConeDimensions& cones, Eigen::Ref<Eigen::VectorXd> s) {
  for (int i = 0; i < cones.linear; ++i) s[i] = std::max(s[i], 0.0);
  int i = cones.linear;
  for (const int size : cones.second_order) {
    const double t = s[i];
    const double norm = s.segment(i + 1, size - 1).norm();
    if (norm <= -t) {
      s.segment(i, size).setZero();
    } else if (norm > t) {
      const double a = 0.5 * (t + norm);
      s[i] = a;
      s.segment(i + 1, size - 1) *= a / norm;
    }
    i += size;
  }
}

void ConicQpAdmm::Resize(int num_variables, const ConeDimensions& cones) {
  cones_ = cones;  // the vector's copy keeps its capacity
  n_ = num_variables;
  m_ = cones.rows();
  arena_.Seat([&](GrowOnlyArena& arena) {
    arena.Place(&gram_, n_, n_);
    arena.Place(&factor_, n_, n_);
    for (Vector* v : {&x_, &work_n_}) arena.Place(v, n_);
    for (Vector* v : {&s_, &u_, &previous_s_, &residual_, &gx_, &work_m_}) arena.Place(v, m_);
  });
  x_.setZero();
}

bool ConicQpAdmm::Factor(const Eigen::Ref<const Eigen::MatrixXd>& P, double sigma, double rho) {
  factor_ = P + sigma * Eigen::MatrixXd::Identity(n_, n_) + rho * gram_;
  return CholeskyInPlace(&factor_);
}

bool ConicQpAdmm::Solve(const Eigen::Ref<const Eigen::MatrixXd>& P,
                        const Eigen::Ref<const Eigen::VectorXd>& c,
                        const Eigen::Ref<const Eigen::MatrixXd>& G,
                        const Eigen::Ref<const Eigen::VectorXd>& h, int max_iterations,
                        double tolerance, int* iterations) {
  *iterations = 0;
  if (P.rows() != n_ || P.cols() != n_ || c.size() != n_ || G.rows() != m_ || G.cols() != n_ ||
      h.size() != m_) {
    return false;
  }
  const double sigma = 1e-6;
  double rho = 1;
  s_.setZero();
  u_.setZero();
  x_.setZero();
  gram_.noalias() = G.transpose() * G;
  Factor(P, sigma, rho);
  const auto L = factor_.triangularView<Eigen::Lower>();
  for (int k = 1; k <= max_iterations; ++k) {
    // x = (P + sigma I + rho G^T G)^-1 (sigma x - c - rho G^T (s - h + u)), as LLT::solve.
    work_m_ = s_ - h + u_;
    x_ = sigma * x_ - c;
    x_.noalias() -= rho * G.transpose() * work_m_;
    L.solveInPlace(x_);
    factor_.adjoint().triangularView<Eigen::Upper>().solveInPlace(x_);
    previous_s_ = s_;
    gx_.noalias() = G * x_;
    s_ = h - gx_ - u_;
    ProjectOntoCone(cones_, s_);
    residual_ = gx_ + s_ - h;
    u_ += residual_;
    const double primal = residual_.lpNorm<Eigen::Infinity>();
    work_m_ = s_ - previous_s_;
    work_n_.noalias() = G.transpose() * work_m_;
    const double dual = rho * work_n_.lpNorm<Eigen::Infinity>();
    const double primal_scale =
        std::max({gx_.lpNorm<Eigen::Infinity>(), s_.lpNorm<Eigen::Infinity>(),
                  h.lpNorm<Eigen::Infinity>(), 1.0});
    work_n_.noalias() = P * x_;
    const double px = work_n_.lpNorm<Eigen::Infinity>();
    work_n_.noalias() = G.transpose() * u_;
    const double dual_scale =
        std::max({px, c.lpNorm<Eigen::Infinity>(), rho * work_n_.lpNorm<Eigen::Infinity>(), 1.0});
    if (primal <= tolerance * primal_scale && dual <= tolerance * dual_scale) {
      *iterations = k;
      return true;
    }
    if (k % 50 == 0 && primal > 0 && dual > 0) {
      const double ratio = std::sqrt((primal / primal_scale) / (dual / dual_scale));
      if (ratio > 5 || ratio < 0.2) {
        rho *= ratio;
        u_ /= ratio;  // u is the scaled dual y / rho
        Factor(P, sigma, rho);
      }
    }
  }
  *iterations = max_iterations;
  return false;
}

bool SolveConicQpByAdmm(const Eigen::Ref<const Eigen::MatrixXd>& p,
                        const Eigen::Ref<const Eigen::VectorXd>& c,
                        const Eigen::Ref<const Eigen::MatrixXd>& g,
                        const Eigen::Ref<const Eigen::VectorXd>& h, const ConeDimensions& cones,
                        int max_iterations, double tolerance, Eigen::VectorXd* x, int* iterations) {
  ConicQpAdmm admm;
  admm.Resize(static_cast<int>(p.rows()), cones);
  const bool converged = admm.Solve(p, c, g, h, max_iterations, tolerance, iterations);
  *x = admm.x();
  return converged;
}

}  // namespace alsim
