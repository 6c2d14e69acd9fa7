#include "engine/solver/drumwright/conic_qp.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace alsim {
namespace {

bool AllFinite(const Eigen::VectorXd& v) {
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

// Moves u into the interior of K by u += (1 + t) e when t = IdentityShift(u) is not clearly
// negative (Vandenberghe 2010, the coneqp start).
void ShiftIntoCone(const ConeDimensions& cones, Eigen::VectorXd* u) {
  if (u->size() == 0) return;
  const double shift = IdentityShift(cones, u->data());
  if (shift >= -1e-8 * std::max(1.0, u->norm())) AddIdentity(cones, 1 + shift, u->data());
}

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

void ConicQpSolver::Resize(int num_variables, const ConeDimensions& cones) {
  cones_ = cones;
  n_ = num_variables;
  m_ = cones.rows();
  scaling_.Resize(cones);
  polish_.Resize(num_variables, cones);
  for (Eigen::VectorXd* v :
       {&x_, &px_, &gtz_, &r_x_, &dx_, &bx_, &ex_, &refine_x_, &best_x_, &polish_x_}) {
    v->setZero(n_);
  }
  for (Eigen::VectorXd* v :
       {&s_,        &z_,         &gx_,        &r_z_,    &bs_,       &u_,       &t_,  &ds_,
        &dz_,       &ds_affine_, &dz_affine_, &step_s_, &step_z_,   &bz_,      &ez_, &es_,
        &refine_s_, &refine_z_,  &best_s_,    &best_z_, &polish_s_, &polish_z_}) {
    v->setZero(m_);
  }
  scaled_g_.setZero(m_, n_);
  scaled_p_.setZero(n_, n_);
  scaled_c_.setZero(n_);
  kkt_.setZero(n_, n_);
  scaled_g_rows_.setZero(m_, n_);
  cholesky_ = Eigen::LLT<Eigen::MatrixXd>(n_);
  factor_ = Eigen::LDLT<Eigen::MatrixXd>(n_);
}

bool ConicQpSolver::Factor(const Eigen::MatrixXd& P) {
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
  // Cholesky (blocked) when it succeeds, else the pivoted LDL^T, which still factors the
  // nearly singular systems near the solution.
  cholesky_.compute(kkt_);
  use_cholesky_ = cholesky_.info() == Eigen::Success;
  if (use_cholesky_) return true;
  factor_.compute(kkt_);
  return factor_.info() == Eigen::Success;
}

void ConicQpSolver::SolveFactored(Eigen::VectorXd* v) const {
  if (use_cholesky_) {
    cholesky_.solveInPlace(*v);
  } else {
    factor_.solveInPlace(*v);
  }
}

void ConicQpSolver::SolveReduced(const Eigen::VectorXd& bx, const Eigen::VectorXd& bz,
                                 const Eigen::VectorXd& bs, Eigen::VectorXd* dx,
                                 Eigen::VectorXd* ds, Eigen::VectorXd* dz) {
  // u = lambda \ b_s, t = u - W^-1 b_z.
  JordanDivide(cones_, scaling_.lambda().data(), bs.data(), u_.data());
  scaling_.ApplyInverse(bz.data(), t_.data());
  t_ = u_ - t_;
  // (P + G~^T G~) dx = b_x - G~^T t.
  *dx = bx;
  dx->noalias() -= scaled_g_.transpose() * t_;
  SolveFactored(dx);
  // dz~ = G~ dx + t, ds~ = u - dz~.
  *dz = t_;
  dz->noalias() += scaled_g_ * *dx;
  *ds = u_ - *dz;
}

void ConicQpSolver::SolveNewton(const Eigen::MatrixXd& P, const Eigen::MatrixXd& G) {
  bx_ = -r_x_;
  bz_ = -r_z_;
  SolveReduced(bx_, bz_, bs_, &dx_, &ds_, &dz_);
  for (int refinement = 0; refinement < parameters_.refinement_steps; ++refinement) {
    // The residuals of the unreduced system in the original variables, ds = W ds~, dz = W^-1 dz~:
    // e_x = b_x - P dx - G^T dz, e_z = b_z - G dx - ds, e_s = b_s - lambda o (ds~ + dz~).
    scaling_.Apply(ds_.data(), step_s_.data());
    scaling_.ApplyInverse(dz_.data(), step_z_.data());
    ex_ = bx_;
    ex_.noalias() -= P.selfadjointView<Eigen::Lower>() * dx_;
    ex_.noalias() -= G.transpose() * step_z_;
    ez_ = bz_ - step_s_;
    ez_.noalias() -= G * dx_;
    u_ = ds_ + dz_;
    JordanProduct(cones_, scaling_.lambda().data(), u_.data(), es_.data());
    es_ = bs_ - es_;
    SolveReduced(ex_, ez_, es_, &refine_x_, &refine_s_, &refine_z_);
    dx_ += refine_x_;
    ds_ += refine_s_;
    dz_ += refine_z_;
  }
}

bool ConicQpSolver::Measure(const Eigen::MatrixXd& P, const Eigen::VectorXd& c,
                            const Eigen::MatrixXd& G, const Eigen::VectorXd& h,
                            ConicQpStatistics* stats) {
  px_.noalias() = P.selfadjointView<Eigen::Lower>() * x_;
  gx_.noalias() = G * x_;
  gtz_.noalias() = G.transpose() * z_;
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
  const double primal_scale = std::max({gx_.norm(), s_.norm(), h.norm()});
  const double dual_scale = std::max({px_.norm(), c.norm(), gtz_.norm()});
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

void ConicQpSolver::TryPolish(const Eigen::MatrixXd& P, const Eigen::VectorXd& c,
                              const Eigen::MatrixXd& G, const Eigen::VectorXd& h,
                              ConicQpStatistics* stats) {
  // A block is called inactive (or at the apex) when its multiplier (or slack) is below 1e-3 of
  // the other; the polished point may miss K or the orthant by 1e-9 of h's and z's sizes.
  if (!polish_.Polish(P, c, G, h, s_, z_, 1e-3, 1e-9, &polish_x_, &polish_s_, &polish_z_)) return;
  x_.swap(polish_x_);
  s_.swap(polish_s_);
  z_.swap(polish_z_);
  ConicQpStatistics trial = *stats;
  Measure(P, c, G, h, &trial);
  if (trial.kkt_residual <= stats->kkt_residual) {
    *stats = trial;
    stats->polished = true;
    return;
  }
  x_.swap(polish_x_);
  s_.swap(polish_s_);
  z_.swap(polish_z_);
}

ConicQpStatistics ConicQpSolver::Solve(const Eigen::MatrixXd& P, const Eigen::VectorXd& c,
                                       const Eigen::MatrixXd& G, const Eigen::VectorXd& h,
                                       const Eigen::VectorXd* primal_start) {
  if (P.rows() != n_ || P.cols() != n_ || c.size() != n_ || G.rows() != m_ || G.cols() != n_ ||
      h.size() != m_ || (primal_start != nullptr && primal_start->size() != n_)) {
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
  ConicQpStatistics stats = SolveScaled(scaled_p_, scaled_c_, G, h, primal_start);
  if (stats.status == ConicQpStatus::kSolved && parameters_.polish) {
    TryPolish(scaled_p_, scaled_c_, G, h, &stats);
  }
  z_ *= omega;
  stats.objective_scale = omega;
  stats.dual_residual *= omega;
  stats.gap *= omega;
  stats.primal_objective *= omega;
  stats.dual_objective *= omega;
  return stats;
}

ConicQpStatistics ConicQpSolver::SolveScaled(const Eigen::MatrixXd& P, const Eigen::VectorXd& c,
                                             const Eigen::MatrixXd& G, const Eigen::VectorXd& h,
                                             const Eigen::VectorXd* primal_start) {
  ConicQpStatistics stats;
  // Start: the least-squares point of [P G^T; G -I] [x; z] = [-c; h], i.e.
  // (P + G^T G) x = -c + G^T h, z = G x - h, s = -z (W = I).
  scaled_g_ = G;
  if (!Factor(P)) {
    stats.status = ConicQpStatus::kFailed;
    return stats;
  }
  x_.noalias() = G.transpose() * h;
  x_ -= c;
  SolveFactored(&x_);
  z_ = h;
  z_.noalias() -= G * x_;
  z_ = -z_;
  if (primal_start != nullptr) {
    x_ = *primal_start;
    s_ = h;
    s_.noalias() -= G * x_;
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
    if (Measure(P, c, G, h, &stats)) {
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
    // G~ = W^-1 G, column by column.
    for (int j = 0; j < n_; ++j) scaling_.ApplyInverse(G.col(j).data(), scaled_g_.col(j).data());
    if (!Factor(P)) return AtFloor(stats);
    const Eigen::VectorXd& lambda = scaling_.lambda();
    const double gap = lambda.squaredNorm();  // = s^T z
    const double mu = gap / degree;

    // Predictor: b_s = -lambda o lambda.
    JordanProduct(cones_, lambda.data(), lambda.data(), bs_.data());
    bs_ = -bs_;
    SolveNewton(P, G);
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
    SolveNewton(P, G);
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
    s_.swap(step_s_);
    z_.swap(step_z_);
  }
}

}  // namespace alsim
