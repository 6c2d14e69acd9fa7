#include "engine/solver/drumwright/first_order_step.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Cholesky>
#include <Eigen/LU>

namespace alsim {
namespace {

// SolveConicQpByAdmm's budget: iterations, and its relative stop (first_order_step.h).
constexpr int kAdmmIterations = 20000;
constexpr double kAdmmTolerance = 1e-10;

// h^2 K + h B of row i.
double Compliance(const SpringRow& row, double h) {
  return h * h * row.stiffness + h * row.damping;
}

// A problem of unilateral rows only goes through the diagonal-plus-low-rank path of the conic QP
// once it has at least this many rows per dof (the elastic foundation's 100 or 900 rows over 6
// dofs): there an iteration costs O(n nv^2) instead of the dense O(n^3).
constexpr int kLowRankRowsPerDof = 4;

// Grow-only sizing: *m keeps its storage unless a dimension must grow.
void Grow(Eigen::MatrixXd* m, Eigen::Index rows, Eigen::Index cols) {
  if (m->rows() >= rows && m->cols() >= cols) return;
  m->resize(std::max(rows, m->rows()), std::max(cols, m->cols()));
}
void Grow(Eigen::VectorXd* v, Eigen::Index size) {
  if (v->size() < size) v->resize(size);
}

// The pivoted Cholesky of MinimumNormSolve stops at a pivot at or below this fraction of S's
// largest diagonal: S = G M^-1 G^T of a robot's rows spans many orders (light links beside heavy
// ones), and a rank taken at n eps max S_ii keeps directions whose tiny pivots turn Mhat Gd v0
// into forces far beyond the springs' (spring_linkage_biped then diverged).
constexpr double kMinimumNormRank = 1e-8;

// y = S^+ b for S (n x n, symmetric positive semidefinite; destroyed) by the pivoted Cholesky of
// the header: P^T S P = L L^T to rank r, S^+ b = P L (L^T L)^-2 L^T P^T b. `gram` holds at least
// n x n, `work` n, `pivot` n. Returns r.
int MinimumNormSolve(Eigen::Block<Eigen::MatrixXd> s, Eigen::VectorXd::SegmentReturnType b,
                     Eigen::Block<Eigen::MatrixXd> gram, Eigen::VectorXd::SegmentReturnType work,
                     std::vector<int>* pivot) {
  const int n = static_cast<int>(s.rows());
  double largest = 0;
  for (int i = 0; i < n; ++i) largest = std::max(largest, s(i, i));
  const double floor = kMinimumNormRank * largest;
  for (int i = 0; i < n; ++i) (*pivot)[i] = i;
  // Right-looking, on the lower triangle: column k of L replaces column k of s.
  int rank = 0;
  for (int k = 0; k < n; ++k) {
    int best = k;
    for (int i = k + 1; i < n; ++i) {
      if (s(i, i) > s(best, best)) best = i;
    }
    if (!(s(best, best) > floor)) break;
    if (best != k) {  // the symmetric swap of k and best in the lower triangle
      std::swap((*pivot)[k], (*pivot)[best]);
      for (int j = 0; j < k; ++j) std::swap(s(k, j), s(best, j));
      std::swap(s(k, k), s(best, best));
      for (int i = k + 1; i < best; ++i) std::swap(s(i, k), s(best, i));
      for (int i = best + 1; i < n; ++i) std::swap(s(i, k), s(i, best));
    }
    const double d = std::sqrt(s(k, k));
    s(k, k) = d;
    for (int i = k + 1; i < n; ++i) s(i, k) /= d;
    for (int j = k + 1; j < n; ++j) {
      for (int i = j; i < n; ++i) s(i, j) -= s(i, k) * s(j, k);
    }
    rank = k + 1;
  }
  // w = L^T P^T b (r), T = L^T L (r x r), then T^-2 w, then P L (T^-2 w).
  for (int k = 0; k < rank; ++k) {
    double sum = 0;
    for (int i = k; i < n; ++i) sum += s(i, k) * b[(*pivot)[i]];
    work[k] = sum;
  }
  for (int a = 0; a < rank; ++a) {
    for (int c = 0; c <= a; ++c) {
      double sum = 0;
      for (int i = a; i < n; ++i) sum += s(i, a) * s(i, c);
      gram(a, c) = sum;
    }
  }
  if (rank > 0) {
    auto t = gram.topLeftCorner(rank, rank);
    const Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> factor(t);
    auto w = work.head(rank);
    factor.solveInPlace(w);
    factor.solveInPlace(w);
  }
  b.setZero();
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    for (int k = 0; k < std::min(i + 1, rank); ++k) sum += s(i, k) * work[k];
    b[(*pivot)[i]] = sum;
  }
  return rank;
}

}  // namespace

void FirstOrderStepSolver::Reset(int nv, int num_rows, double h, double zeta,
                                 bool velocity_product) {
  nv_ = nv;
  num_rows_ = num_rows;
  h_ = h;
  zeta_ = zeta > 0 ? zeta : 1 / h;
  velocity_product_ = velocity_product;
  Grow(&mass_, nv, nv);
  Grow(&jacobian_, num_rows, nv);
  Grow(&velocity_, nv);
  Grow(&force_, nv);
  rows_.assign(num_rows, SpringRow{});
  mass().setZero();
  jacobian().setZero();
  velocity().setZero();
  force().setZero();
}

void FirstOrderStepSolver::KeepRows(const std::vector<char>& keep) {
  int kept = 0;
  for (int k = 0; k < num_rows_; ++k) {
    if (!keep[k]) continue;
    rows_[kept] = rows_[k];
    if (kept != k) jacobian_.row(kept).head(nv_) = jacobian_.row(k).head(nv_);
    ++kept;
  }
  num_rows_ = kept;
  rows_.resize(kept);
}

// h > 0, and every normal row is followed by exactly two tangent rows (and no tangent row stands
// elsewhere).
bool FirstOrderStepSolver::WellFormed() const {
  if (!(h_ > 0)) return false;
  for (int i = 0; i < num_rows_; ++i) {
    const SpringRowClass type = rows_[i].type;
    if (type == SpringRowClass::kNormal) {
      if (i + 2 >= num_rows_) return false;
      if (rows_[i + 1].type != SpringRowClass::kTangent ||
          rows_[i + 2].type != SpringRowClass::kTangent || !(rows_[i].friction >= 0)) {
        return false;
      }
      i += 2;
    } else if (type == SpringRowClass::kTangent) {
      return false;
    }
  }
  return true;
}

void FirstOrderStepSolver::VelocityProductOffsets() {
  const int n = num_rows_, nv = nv_;
  for (int i = 0; i < n; ++i) offset_[i] = Compliance(rows_[i], h_) * rows_[i].acceleration;
  bool any = false;
  for (int i = 0; i < n; ++i) any = any || rows_[i].acceleration != 0;
  if (!any) return;
  // M^-1 through its own factor (the bilateral rows' M_eff is not the paper's M).
  auto mass_copy = mass_copy_.topLeftCorner(nv, nv);
  mass_copy = mass();
  mass_factor_.emplace(mass_copy);
  if (mass_factor_->info() != Eigen::Success) return;
  // The classes b, u, n, r, s; a frictionless contact's tangents carry no force, but their
  // offsets are unused then.
  const std::vector<int>* classes[] = {&bilateral_, &unilateral_, &normals_, &first_tangents_,
                                       &second_tangents_};
  for (const std::vector<int>* rows : classes) {
    const int m = static_cast<int>(rows->size());
    if (m == 0) continue;
    bool nonzero = false;
    for (const int i : *rows) nonzero = nonzero || rows_[i].acceleration != 0;
    if (!nonzero) continue;
    auto y = class_response_.topLeftCorner(nv, m);  // M^-1 G_x^T
    for (int k = 0; k < m; ++k) y.col(k) = jacobian_.row((*rows)[k]).head(nv).transpose();
    mass_factor_->solveInPlace(y);
    auto s = class_delassus_.topLeftCorner(m, m);  // S_x = G_x M^-1 G_x^T
    for (int k = 0; k < m; ++k) {
      for (int j = 0; j < m; ++j) s(j, k) = jacobian_.row((*rows)[j]).head(nv).dot(y.col(k));
    }
    auto b = class_rhs_.head(m);
    for (int k = 0; k < m; ++k) b[k] = rows_[(*rows)[k]].acceleration;
    statistics_.velocity_product_rank +=
        MinimumNormSolve(s, b, class_gram_.topLeftCorner(m, m), class_work_.head(m), &pivot_);
    for (int k = 0; k < m; ++k) offset_[(*rows)[k]] += b[k];
  }
}

bool FirstOrderStepSolver::Solve() {
  statistics_ = FirstOrderStatistics{};
  if (!WellFormed()) return false;
  const double h = h_;
  const int n = num_rows_, nv = nv_;

  // Row indices by class: b, and lam* in the order (n, r, s, u) of (162). A contact without
  // friction has no cone and no tangent impulse: its normal acts as a unilateral row of class n.
  for (std::vector<int>* v : {&bilateral_, &normals_, &first_tangents_, &second_tangents_,
                              &unilateral_, &cone_contacts_, &star_}) {
    v->clear();
    v->reserve(n);
  }
  for (int i = 0; i < n; ++i) {
    const SpringRow& row = rows_[i];
    switch (row.type) {
      case SpringRowClass::kBilateral:
        bilateral_.push_back(i);
        break;
      case SpringRowClass::kUnilateral:
        unilateral_.push_back(i);
        break;
      case SpringRowClass::kNormal:
        if (row.friction > 0) {
          cone_contacts_.push_back(static_cast<int>(normals_.size()));
          first_tangents_.push_back(i + 1);
          second_tangents_.push_back(i + 2);
        }
        normals_.push_back(i);
        i += 2;
        break;
      case SpringRowClass::kTangent:
        break;
    }
  }
  star_.insert(star_.end(), normals_.begin(), normals_.end());
  star_.insert(star_.end(), first_tangents_.begin(), first_tangents_.end());
  star_.insert(star_.end(), second_tangents_.begin(), second_tangents_.end());
  star_.insert(star_.end(), unilateral_.begin(), unilateral_.end());
  const int m = static_cast<int>(star_.size());

  // Every intermediate at its size (grow-only).
  Grow(&effective_, nv, nv);
  Grow(&mass_copy_, nv, nv);
  Grow(&response_, nv, n);
  Grow(&g_star_, n, nv);
  Grow(&delassus_, n, n);
  Grow(&hessian_, n, n);
  Grow(&g_matrix_, 2 * n, n);
  Grow(&low_rank_u_, n, nv);
  Grow(&class_response_, nv, n);
  Grow(&class_delassus_, n, n);
  Grow(&class_gram_, n, n);
  for (Eigen::VectorXd* v : {&momentum_, &free_velocity_, &velocity_out_}) Grow(v, nv);
  for (Eigen::VectorXd* v :
       {&row_velocity_, &linear_, &unit_, &a_, &star_impulse_, &offset_, &class_rhs_, &class_work_,
        &low_rank_p_, &low_rank_c_, &low_rank_a_, &low_rank_b_, &lambda_, &row_rate_}) {
    Grow(v, n);
  }
  Grow(&h_vector_, 2 * n);
  if (static_cast<int>(pivot_.size()) < n) pivot_.resize(n);
  cones_.second_order.reserve(n);

  // The velocity product's offsets o (header), else 0: every K phi0 below is K phi0 + o.
  offset_.head(n).setZero();
  if (velocity_product_) VelocityProductOffsets();

  // M_eff = M + G_b^T W_b G_b and v_c = M_eff^-1 (M v0 + h f - h G_b^T (K_b phi0_b + o_b)).
  auto effective = effective_.topLeftCorner(nv, nv);
  effective = mass();
  auto momentum = momentum_.head(nv);
  momentum.noalias() = mass() * velocity();
  momentum += h * force();
  for (const int i : bilateral_) {
    const SpringRow& row = rows_[i];
    const double w = Compliance(row, h);
    for (int b = 0; b < nv; ++b) {  // column b of (w g^T) g; a zero entry of g adds nothing
      const double gb = jacobian_(i, b);
      if (gb == 0) continue;
      for (int a = 0; a < nv; ++a) effective(a, b) += gb * (w * jacobian_(i, a));
    }
    const double push = h * row.stiffness * row.phi0 + h * offset_[i];
    for (int a = 0; a < nv; ++a) momentum[a] -= push * jacobian_(i, a);
  }
  factor_.emplace(effective);
  if (factor_->info() != Eigen::Success) return false;
  auto free_velocity = free_velocity_.head(nv);  // v_c
  free_velocity = momentum;
  factor_->solveInPlace(free_velocity);

  auto star_impulse = star_impulse_.head(m);
  star_impulse.setZero();
  bool low_rank =
      m == n && static_cast<int>(unilateral_.size()) == m && m >= kLowRankRowsPerDof * nv && m > 0;
  for (int i = 0; i < n && low_rank; ++i) low_rank = Compliance(rows_[i], h) > 0;
  // Unilateral rows only, star = 0..n-1 in order: the structured path; where its program fails
  // (the Woodbury solve's rounding, conic_qp.h), the dense path solves the same program.
  statistics_.low_rank = low_rank && SolveLowRank();
  if (!statistics_.low_rank && m > 0 && !SolveDense()) return false;

  // v1 = v_c + h Lam G*^T lam*, lam_b = -(K_b phi0_b + o_b) - (h K_b + B_b) G_b v1.
  auto velocity_out = velocity_out_.head(nv);
  velocity_out = free_velocity;
  if (m > 0) velocity_out.noalias() += h * response_.topLeftCorner(nv, m) * star_impulse;
  auto lambda = lambda_.head(n);
  lambda.setZero();
  for (int k = 0; k < m; ++k) lambda[star_[k]] = star_impulse[k];
  auto rate = row_rate_.head(n);
  rate.noalias() = jacobian() * velocity_out;
  if (velocity_product_) {
    for (int i = 0; i < n; ++i) rate[i] += h * rows_[i].acceleration;
  }
  for (const int i : bilateral_) {
    const SpringRow& row = rows_[i];
    lambda[i] = -row.stiffness * row.phi0 - offset_[i] -
                (h * row.stiffness + row.damping) * jacobian_.row(i).head(nv).dot(velocity_out);
  }
  statistics_.ok = true;
  return true;
}

// The QP (83)-(85) of unilateral rows (no bilateral rows, so Lam = M^-1) with (84) divided by W
// (conic_qp.h): min zeta/2 |lam|^2 s.t. (W^-1 + G M^-1 G^T) lam >= W^-1 q, lam >= 0, q = -(K phi0
// + o) - (h K + B) G v_c; a = W^-1, U = G M^-1, V = G, so A = diag(a) + U V^T is never formed.
// The same program as the dense path's rows lam_k + W_k (G M^-1 G^T lam)_k >= q_k, each divided
// by W_k > 0. Leaves lam in star_impulse_ and M^-1 G^T in response_.
bool FirstOrderStepSolver::SolveLowRank() {
  const int n = num_rows_, nv = nv_;
  const double h = h_;
  auto row_velocity = row_velocity_.head(n);  // G v_c
  row_velocity.noalias() = jacobian() * free_velocity_.head(nv);
  auto p = low_rank_p_.head(n), c = low_rank_c_.head(n), a = low_rank_a_.head(n),
       b = low_rank_b_.head(n);
  p.setConstant(zeta_);
  c.setZero();
  for (int k = 0; k < n; ++k) {
    const SpringRow& row = rows_[k];
    const double w = Compliance(row, h);
    a[k] = 1 / w;
    b[k] = (-row.stiffness * row.phi0 - offset_[k] -
            (h * row.stiffness + row.damping) * row_velocity[k]) /
           w;
  }
  auto response = response_.topLeftCorner(nv, n);  // M^-1 G^T (nv x n)
  response = jacobian().transpose();
  factor_->solveInPlace(response);
  auto u = low_rank_u_.topLeftCorner(n, nv);
  u = response.transpose();
  const DiagonalLowRankQp qp(p, c, a, u, jacobian(), b, true);
  program_.ResizeDiagonalLowRank(n, nv, true);
  statistics_.program = program_.SolveDiagonalLowRank(qp);
  statistics_.solved_program = true;
  if (statistics_.program.status != ConicQpStatus::kSolved) return false;
  star_impulse_.head(n) = program_.x();
  return true;
}

bool FirstOrderStepSolver::SolveDense() {
  const int m = static_cast<int>(star_.size()), nv = nv_;
  const double h = h_, zeta = zeta_;
  auto g_star = g_star_.topLeftCorner(m, nv);
  for (int k = 0; k < m; ++k) g_star.row(k) = jacobian_.row(star_[k]).head(nv);
  auto response = response_.topLeftCorner(nv, m);  // Lam G*^T
  response = g_star.transpose();
  factor_->solveInPlace(response);
  auto delassus = delassus_.topLeftCorner(m, m);  // G* Lam G*^T
  delassus.noalias() = g_star * response;
  auto row_velocity = row_velocity_.head(m);  // G* v_c
  row_velocity.noalias() = g_star * free_velocity_.head(nv);

  // H and g of (183)-(184): diag(zeta, 1, 1, zeta) plus a_k a_k^T per tangent row k, a_k =
  // e_k + W_k (G* Lam G*^T)_k (the row of P_t + E_t), and g = sum_k a_k d_k.
  const int num_normals = static_cast<int>(normals_.size());
  const int num_tangents = static_cast<int>(first_tangents_.size());
  auto hessian = hessian_.topLeftCorner(m, m);
  auto linear = linear_.head(m);
  auto a = a_.head(m);
  hessian.setZero();
  linear.setZero();
  for (int k = 0; k < m; ++k) {
    const bool tangent = k >= num_normals && k < num_normals + 2 * num_tangents;
    hessian(k, k) += tangent ? 1.0 : zeta;
    if (!tangent) continue;
    const SpringRow& row = rows_[star_[k]];
    a = Compliance(row, h) * delassus.row(k).transpose();
    a[k] += 1;
    const double d = row.stiffness * row.phi0 + offset_[star_[k]] +
                     (h * row.stiffness + row.damping) * row_velocity[k];
    hessian.noalias() += a * a.transpose();
    linear += d * a;
  }

  // Constraints G x + s = h_vec, s in R+^l x (Q^3)^contacts: the spring laws of the n and u
  // rows (-(e_k + W_k D_k) x <= -q_k), lam_u >= 0, then each cone -(mu x_n, x_r, x_s) + s = 0.
  const int num_unilateral = static_cast<int>(unilateral_.size());
  const int num_laws = num_normals + num_unilateral;
  const int num_cones = static_cast<int>(cone_contacts_.size());
  const int rows = num_laws + num_unilateral + 3 * num_cones;
  auto g_matrix = g_matrix_.topLeftCorner(rows, m);
  auto h_vector = h_vector_.head(rows);
  g_matrix.setZero();
  h_vector.setZero();
  int r = 0;
  for (int k = 0; k < m; ++k) {
    const bool law = k < num_normals || k >= num_normals + 2 * num_tangents;
    if (!law) continue;
    const SpringRow& row = rows_[star_[k]];
    g_matrix.row(r) = -Compliance(row, h) * delassus.row(k);
    g_matrix(r, k) -= 1;
    h_vector[r] = row.stiffness * row.phi0 + offset_[star_[k]] +
                  (h * row.stiffness + row.damping) * row_velocity[k];
    ++r;
  }
  for (int k = num_normals + 2 * num_tangents; k < m; ++k) g_matrix(r++, k) = -1;
  cones_.linear = num_laws + num_unilateral;
  cones_.second_order.clear();
  for (int c = 0; c < num_cones; ++c) {
    const int i = cone_contacts_[c];
    g_matrix(r, i) = -rows_[normals_[i]].friction;
    g_matrix(r + 1, num_normals + c) = -1;
    g_matrix(r + 2, num_normals + num_tangents + c) = -1;
    r += 3;
    cones_.second_order.push_back(3);
  }
  // Equilibrated (header comment): lam* = D y with D = diag(H_kk^-1/2), each cone block of
  // G D divided by its norm.
  auto unit = unit_.head(m);  // D
  unit = hessian.diagonal().cwiseSqrt().cwiseInverse();
  for (int j = 0; j < m; ++j) {
    for (int i = 0; i < m; ++i) hessian(i, j) = unit[i] * hessian(i, j) * unit[j];
  }
  linear = unit.cwiseProduct(linear);
  for (int j = 0; j < m; ++j) g_matrix.col(j) *= unit[j];
  for (int i = cones_.linear; i < rows; i += 3) {
    const double norm = g_matrix.middleRows(i, 3).norm();
    g_matrix.middleRows(i, 3) /= norm;
  }
  program_.Resize(m, cones_);
  statistics_.program = program_.Solve(hessian, linear, g_matrix, h_vector);
  statistics_.solved_program = true;
  // Should it fail: the second try with every orthant row (the laws and lam_u >= 0) of unit
  // length; the third with y = scale y' as well, scale = max(|h|_inf, |c|_inf), so that the
  // answer is O(1). Stiff rows over light dofs (a joint limit of 1e8 N m/rad on a link of
  // 1e-2 kg m^2: W_k D_k ~ 1e6, impulses of 1e6 N s) leave the first program's Newton systems at
  // the floor of rounding. Both blur what the first resolves (the stopping rule is relative to
  // the smaller rows, and the scaled program's tolerances to O(1) values), so they come after.
  double scale = 1;
  for (int attempt = 1; attempt < 3 && statistics_.program.status != ConicQpStatus::kSolved;
       ++attempt) {
    if (attempt == 1) {
      for (int i = 0; i < cones_.linear; ++i) {
        const double norm = g_matrix.row(i).norm();
        g_matrix.row(i) /= norm;
        h_vector[i] /= norm;
      }
    } else {
      scale = std::max(h_vector.lpNorm<Eigen::Infinity>(), linear.lpNorm<Eigen::Infinity>());
      if (!(scale > 0)) scale = 1;
      h_vector /= scale;
      linear /= scale;
    }
    const int iterations = statistics_.program.iterations;
    statistics_.program = program_.Solve(hessian, linear, g_matrix, h_vector);
    statistics_.program.iterations += iterations;
    statistics_.retries = attempt;
  }
  auto star_impulse = star_impulse_.head(m);
  if (statistics_.program.status == ConicQpStatus::kSolved) {
    star_impulse = scale * unit.cwiseProduct(program_.x());
    return true;
  }
  // The last resort: ADMM (SolveConicQpByAdmm's method, conic_qp.h).
  statistics_.admm = true;
  admm_.Resize(m, cones_);
  if (!admm_.Solve(hessian, linear, g_matrix, h_vector, kAdmmIterations, kAdmmTolerance,
                   &statistics_.admm_iterations)) {
    return false;
  }
  star_impulse = scale * unit.cwiseProduct(admm_.x());
  return true;
}

FirstOrderResult SolveFirstOrderStep(const FirstOrderProblem& p,
                                     const ConicQpParameters& parameters) {
  FirstOrderResult result;
  const Eigen::Index nv = p.mass.rows();
  if (p.mass.cols() != nv || p.velocity.size() != nv || p.force.size() != nv) return result;
  if (p.jacobian.cols() != nv) return result;
  if (p.jacobian.rows() != static_cast<Eigen::Index>(p.rows.size())) return result;
  FirstOrderStepSolver solver(parameters);
  solver.Reset(static_cast<int>(nv), static_cast<int>(p.rows.size()), p.h, p.zeta,
               p.velocity_product);
  solver.mass() = p.mass;
  solver.velocity() = p.velocity;
  solver.force() = p.force;
  solver.jacobian() = p.jacobian;
  for (int k = 0; k < solver.num_rows(); ++k) solver.row(k) = p.rows[k];
  const bool ok = solver.Solve();
  static_cast<FirstOrderStatistics&>(result) = solver.statistics();
  if (!ok) return result;
  result.velocity = solver.velocity_out();
  result.lambda = solver.lambda();
  return result;
}

FirstOrderResult SolveBilateralConstraintSpace(const FirstOrderProblem& p) {
  FirstOrderResult result;
  const Eigen::Index nv = p.mass.rows();
  if (p.mass.cols() != nv || p.velocity.size() != nv || p.force.size() != nv) return result;
  if (p.jacobian.cols() != nv || !(p.h > 0)) return result;
  if (p.jacobian.rows() != static_cast<Eigen::Index>(p.rows.size())) return result;
  for (const SpringRow& row : p.rows) {
    if (row.type != SpringRowClass::kBilateral) return result;
  }
  const double h = p.h;
  const Eigen::Index n = p.jacobian.rows();
  const Eigen::LLT<Eigen::MatrixXd> mass(p.mass);
  if (mass.info() != Eigen::Success) return result;
  const Eigen::MatrixXd response = mass.solve(p.jacobian.transpose());  // M^-1 G^T
  const Eigen::MatrixXd delassus = p.jacobian * response;               // S
  Eigen::VectorXd compliance(n), stiffness(n), phi0(n), damping(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    compliance[i] = Compliance(p.rows[i], h);
    stiffness[i] = p.rows[i].stiffness;
    damping[i] = p.rows[i].damping;
    phi0[i] = p.rows[i].phi0;
  }
  // (61): (I + S W) phid1 = phid0 - h S K phi0 + h G M^-1 f.
  const Eigen::MatrixXd system =
      Eigen::MatrixXd::Identity(n, n) + delassus * compliance.asDiagonal();
  const Eigen::VectorXd rhs = p.jacobian * p.velocity -
                              h * delassus * stiffness.cwiseProduct(phi0) +
                              h * p.jacobian * mass.solve(p.force);
  const Eigen::VectorXd phid1 = system.partialPivLu().solve(rhs);
  // (62), (53), (37).
  result.lambda = -stiffness.cwiseProduct(phi0 + h * phid1) - damping.cwiseProduct(phid1);
  result.velocity = p.velocity + h * mass.solve(p.jacobian.transpose() * result.lambda + p.force);
  result.ok = true;
  return result;
}

}  // namespace alsim
