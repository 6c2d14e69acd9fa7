#include "engine/solver/pgs/pgs_solver.h"

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>

#include "engine/core/parallel.h"
#include "engine/linalg/tree_ldl.h"
#include "engine/solver/impulse_update.h"

namespace alsim {

PgsSolver::PgsSolver(const Model& m)
    : IslandSolver(m),
      touching_adr_(m.nsubsystem + 1, 0),
      rows_(m.nsubsystem, 0),
      delassus_adr_(m.nsubsystem, 0),
      column_(m.nv, 0.0),
      force_(m.nv, 0.0) {
  const size_t max_constraints = MaxConstraints(m);
  jacobian_.Reserve(m, max_constraints);
  link_num_.reserve(max_constraints);
  link_subsystem_.reserve(MaxBlocks(m));
  link_row_.reserve(MaxBlocks(m));
  touching_.reserve(MaxBlocks(m));
  touching_row_.reserve(MaxBlocks(m));
  free_velocity_.reserve(3 * max_constraints);
}

void PgsSolver::LinkConstraints(const Model& m, const Data& d) {
  const ConstraintSet& set = d.constraints;
  const size_t n = set.constraints.size();
  if (link_num_.size() < n) link_num_.resize(n);
  if (touching_.size() < set.blocks.size()) {
    touching_.resize(set.blocks.size());
    touching_row_.resize(set.blocks.size());
    link_subsystem_.resize(set.blocks.size());
    link_row_.resize(set.blocks.size());
  }
  std::fill(link_num_.begin(), link_num_.begin() + n, 0);
  int count = 0;
  size_t delassus_size = 0;
  for (int j = 0; j < m.nsubsystem; ++j) {
    touching_adr_[j] = count;
    int rows = 0;
    int previous = -1;
    for (int k = subsystem_blocks_.adr[j]; k < subsystem_blocks_.adr[j + 1]; ++k) {
      // A constraint's blocks in j are adjacent: it is listed once.
      const int i = set.blocks[subsystem_blocks_.blocks[k]].constraint;
      if (i == previous) continue;
      previous = i;
      touching_[count] = i;
      touching_row_[count] = rows;
      ++count;
      const int link = set.constraints[i].block_adr + link_num_[i]++;
      link_subsystem_[link] = j;
      link_row_[link] = rows;
      rows += set.constraints[i].dim;
    }
    rows_[j] = rows;
    delassus_adr_[j] = delassus_size;
    delassus_size += static_cast<size_t>(rows) * rows;
  }
  touching_adr_[m.nsubsystem] = count;
  if (delassus_.size() < delassus_size) delassus_.resize(delassus_size);
}

// W_j = J_j A_j^{-1} J_j^T: one tree-LDL^T solve on j's dofs per row of a constraint touching j
// gives the column A_j^{-1} J_j^T e_r, whose products with the rows of the constraints touching j
// fill W_j's column.
void PgsSolver::BuildDelassus(const Model& m, const Data& d, int subsystem) {
  const int j = subsystem;
  const ConstraintSet& set = d.constraints;
  const int dof_begin = m.subsystem_dof_adr[j];
  const int dof_end = dof_begin + m.subsystem_dof_num[j];
  const int rows = rows_[j];
  double* delassus = delassus_.data() + delassus_adr_[j];
  for (int a = touching_adr_[j]; a < touching_adr_[j + 1]; ++a) {
    const int i = touching_[a];
    int i_begin, i_end;
    jacobian_.EntriesInDofs(i, dof_begin, dof_end, &i_begin, &i_end);
    for (int r = 0; r < set.constraints[i].dim; ++r) {
      std::fill(column_.begin() + dof_begin, column_.begin() + dof_end, 0.0);
      for (int e = i_begin; e < i_end; ++e) column_[jacobian_.dof[e]] = jacobian_.At(e, r);
      TreeLdlSolveRange(d.mass_layout, dof_begin, dof_end, d.qA_factor.data(), column_.data());
      const int column = touching_row_[a] + r;
      for (int b = touching_adr_[j]; b < touching_adr_[j + 1]; ++b) {
        const int k = touching_[b];
        int k_begin, k_end;
        jacobian_.EntriesInDofs(k, dof_begin, dof_end, &k_begin, &k_end);
        for (int s = 0; s < set.constraints[k].dim; ++s) {
          double sum = 0;
          for (int e = k_begin; e < k_end; ++e) {
            sum += jacobian_.At(e, s) * column_[jacobian_.dof[e]];
          }
          delassus[static_cast<size_t>(touching_row_[b] + s) * rows + column] = sum;
        }
      }
    }
  }
}

namespace {

// Pivots of W_ii's LDL^T below this fraction of its largest diagonal are taken as zero: the row
// is then a combination of the earlier ones up to rounding. W_ii comes from tree-LDL^T solves, so
// the rounding of its entries is that of 1e-16 amplified by the mass matrix's conditioning (light
// struts hinged to a heavy body): the cut sits well above it, at 1e-6, where dropping a row that
// is in fact independent costs that row's share of a tiny pivot only.
constexpr double kEqualityPivotTolerance = 1e-6;

// An equality's rows when they are dependent. Row-by-row Gauss-Seidel with D = diag(W_ii) needs
// W_ii of full rank: a connect closing a planar loop inside one tree (every hinge about the same
// axis) has a direction, along the hinges' axis in whatever frame the tree is turned to, that no
// dof moves. Its bias (the error's rounding and drift along it) then cannot be met, and the row
// steps lambda -= (J v_hat + e) / W_rr push the impulse along that direction without bound (the
// closed-loop biped of issue 32 diverged; skipping rows whose W_rr alone is rounding does not
// help once the tree turns the direction off the world axes). Here the block is solved exactly
// on its independent rows:
// LDL^T of W_ii in row order, a row whose pivot vanishes is dropped and its impulse set to zero
// (the kept rows span its direction and take over its share), and the kept rows solve
// W_KK delta_K = -(J_K v_hat + e_K) - W_Kk delta_k. Returns false, changing nothing, when no row
// is dependent: then the row-by-row step runs as for every other constraint.
bool DependentEqualityUpdate(const double (&w)[kMaxConstraintDim][kMaxConstraintDim],
                             const double (&velocity)[kMaxConstraintDim], const double* bias,
                             const double* own, double (&updated)[kMaxConstraintDim]) {
  double largest = 0;
  for (int r = 0; r < 3; ++r) largest = std::max(largest, w[r][r]);
  if (!(largest > 0)) return false;
  double l[3][3] = {}, pivot[3] = {0, 0, 0};
  bool kept[3] = {false, false, false}, dependent = false;
  for (int r = 0; r < 3; ++r) {
    for (int q = 0; q < r; ++q) {
      if (!kept[q]) continue;
      double sum = w[r][q];
      for (int p = 0; p < q; ++p) {
        if (kept[p]) sum -= l[r][p] * l[q][p] * pivot[p];
      }
      l[r][q] = sum / pivot[q];
    }
    double sum = w[r][r];
    for (int q = 0; q < r; ++q) {
      if (kept[q]) sum -= l[r][q] * l[r][q] * pivot[q];
    }
    kept[r] = sum > kEqualityPivotTolerance * largest;
    pivot[r] = kept[r] ? sum : 0;
    dependent = dependent || !kept[r];
  }
  if (!dependent) return false;
  double delta[3], rhs[3];
  for (int r = 0; r < 3; ++r) delta[r] = kept[r] ? 0 : -own[r];
  for (int r = 0; r < 3; ++r) {
    rhs[r] = -(velocity[r] + bias[r]);
    for (int q = 0; q < 3; ++q) {
      if (!kept[q]) rhs[r] -= w[r][q] * delta[q];
    }
  }
  // L y = rhs, then L^T delta = D^-1 y, over the kept rows.
  double y[3] = {0, 0, 0};
  for (int r = 0; r < 3; ++r) {
    if (!kept[r]) continue;
    y[r] = rhs[r];
    for (int q = 0; q < r; ++q) {
      if (kept[q]) y[r] -= l[r][q] * y[q];
    }
  }
  for (int r = 2; r >= 0; --r) {
    if (!kept[r]) continue;
    double x = y[r] / pivot[r];
    for (int q = r + 1; q < 3; ++q) {
      if (kept[q]) x -= l[q][r] * delta[q];
    }
    delta[r] = x;
  }
  for (int r = 0; r < 3; ++r) updated[r] = own[r] + delta[r];
  return true;
}

// The contact step of a condim 4/6 contact: rows (normal, t1, t2, torsion[, roll1, roll2]) with
// the metric D = diag(w_t, w_t, W_tors[, w_r, w_r]) on the friction rows (w_t, w_r the means of
// the pairs' diagonals). As the 3-row step: the normal row first, x_n = lambda_n - (J v + e)_n /
// W_nn, then the friction rows from the velocity that lambda_n = max(x_n, 0) gives, x_f =
// lambda_f - (alpha D)^{-1} (J v + e)_f with alpha the largest eigenvalue of D^{-1/2} W_ff
// D^{-1/2}, so that alpha D >= W_ff (a majorizer of the island's energy; the 3-row step's
// lambda_max(W_tt) is this alpha D), then the strict operator with the friction part projected
// onto the ellipsoid in the metric D (ProjectOntoFrictionEllipsoid with w = D; the projection in
// alpha D is the same). Its fixed points have D (x - lambda) = -(J v + e) / alpha in the
// ellipsoid's normal cone, i.e. maximal dissipation, whatever the rows' different diagonals (m/s
// and rad/s rows mixed) and alpha.
void EllipticContactUpdate(const Constraint& c,
                           const double (&block)[kMaxConstraintDim][kMaxConstraintDim],
                           const double (&velocity)[kMaxConstraintDim], const double* bias,
                           const double* own, double (&updated)[kMaxConstraintDim]) {
  double weight[kMaxConstraintDim];
  weight[0] = block[0][0];
  weight[1] = weight[2] = 0.5 * (block[1][1] + block[2][2]);
  weight[3] = block[3][3];
  if (c.dim == 6) weight[4] = weight[5] = 0.5 * (block[4][4] + block[5][5]);
  for (int r = 0; r < c.dim; ++r) {
    if (!(weight[r] > 0)) return;  // a row that moves nothing: keep the impulse at zero
  }
  const int friction_rows = c.dim - 1;
  using Scaled = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 5, 5>;
  Scaled scaled(friction_rows, friction_rows);
  for (int r = 0; r < friction_rows; ++r) {
    for (int q = 0; q < friction_rows; ++q) {
      scaled(r, q) = 0.5 * (block[r + 1][q + 1] + block[q + 1][r + 1]) /
                     std::sqrt(weight[r + 1] * weight[q + 1]);
    }
  }
  const double alpha = Eigen::SelfAdjointEigenSolver<Scaled>(scaled, Eigen::EigenvaluesOnly)
                           .eigenvalues()
                           .maxCoeff();
  if (!(alpha > 0)) return;
  double x[kMaxConstraintDim], shifted[kMaxConstraintDim];
  x[0] = own[0] - (velocity[0] + bias[0]) / weight[0];
  const double normal_change = std::max(x[0], 0.0) - own[0];
  for (int r = 1; r < c.dim; ++r) {
    shifted[r] = velocity[r] + block[r][0] * normal_change;
    x[r] = own[r] - (shifted[r] + bias[r]) / (alpha * weight[r]);
  }
  StrictEllipticConeProjection(c, c.dim, x, updated, weight + 1);
}

}  // namespace

double PgsSolver::Sweep(Data& d, int island) {
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  double largest_change = 0;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    const double* bias = set.bias.data() + c.row_adr;
    double* own = set.lambda.data() + c.row_adr;
    // velocity = (W lambda + J v_free)_i = J_i v_hat with the newest impulses, and W_ii's
    // diagonal, summing the W_j of the subsystems i touches (one or two; a tendon's rows more).
    double velocity[kMaxConstraintDim] = {}, diagonal[kMaxConstraintDim] = {};
    double block[kMaxConstraintDim][kMaxConstraintDim] = {};  // W_ii
    for (int r = 0; r < c.dim; ++r) velocity[r] = free_velocity_[c.row_adr + r];
    for (int t = 0; t < link_num_[i]; ++t) {
      const int link = c.block_adr + t;
      const int j = link_subsystem_[link];
      const int rows = rows_[j];
      const double* delassus = delassus_.data() + delassus_adr_[j];
      for (int r = 0; r < c.dim; ++r) {
        const int row = link_row_[link] + r;
        const double* w = delassus + static_cast<size_t>(row) * rows;
        double sum = 0;
        for (int b = touching_adr_[j]; b < touching_adr_[j + 1]; ++b) {
          const Constraint& ck = set.constraints[touching_[b]];
          const double* lambda = set.lambda.data() + ck.row_adr;
          const double* wk = w + touching_row_[b];
          for (int q = 0; q < ck.dim; ++q) sum += wk[q] * lambda[q];
        }
        velocity[r] += sum;
        diagonal[r] += w[row];
        for (int q = 0; q < c.dim; ++q) block[r][q] += w[link_row_[link] + q];
      }
    }
    double updated[kMaxConstraintDim] = {};
    switch (c.type) {
      case ConstraintType::kContact: {
        if (c.dim > 3) {
          EllipticContactUpdate(c, block, velocity, bias, own, updated);
          break;
        }
        // Rows (normal, t1, t2): the normal row's step first, then the tangent pair's from the
        // velocity that the normal's new impulse gives (Gauss-Seidel between the two, as between
        // constraints), with one step size w_t, the largest eigenvalue of W_tt. Stepping all
        // three rows from one velocity with D = diag(W_nn, w_t, w_t), w_t the mean of the tangent
        // diagonals, failed on a contact that moves along one direction u only (a light lever on
        // one hinge, W_ii = w u u^T): D^-1 W_ii has the eigenvalue u^T D^-1 u w = 1 + 2 = 3, so
        // I - D^-1 W_ii has -2, and the impulse jumped between two states (the cone clipping the
        // growth) until the sweep cap, a lever PGS could not hold. The normal step now removes
        // the velocity along u; with w_t = lambda_max(W_tt) >= W_tt, the projected tangent step
        // minimizes a majorizer of the island's energy over the friction disk, so it cannot raise
        // it (the mean's I - W_tt / w_t has an eigenvalue -1 when W_tt is rank one: no decay). Any
        // one w_t and a normal change that is zero at a fixed point keep the strict operator's
        // fixed points the Signorini-Coulomb solutions.
        const double normal_diagonal = diagonal[0];
        const double half_gap = 0.5 * (block[1][1] - block[2][2]);
        const double coupling = 0.5 * (block[1][2] + block[2][1]);
        const double tangent_diagonal = 0.5 * (block[1][1] + block[2][2]) +
                                        std::sqrt(half_gap * half_gap + coupling * coupling);
        if (normal_diagonal > 0 && tangent_diagonal > 0) {
          const double normal_argument = own[0] - (velocity[0] + bias[0]) / normal_diagonal;
          const double normal_change = std::max(normal_argument, 0.0) - own[0];
          for (int r = 1; r < 3; ++r) velocity[r] += block[r][0] * normal_change;
          const Vec3 x(normal_argument, own[1] - (velocity[1] + bias[1]) / tangent_diagonal,
                       own[2] - (velocity[2] + bias[2]) / tangent_diagonal);
          const Vec3 projected = StrictConeProjection(x, c.friction);
          updated[0] = projected[0];
          updated[1] = projected[1];
          updated[2] = projected[2];
        }
        break;
      }
      case ConstraintType::kLimit:
        if (diagonal[0] > 0) {
          updated[0] = std::max(0.0, own[0] - (velocity[0] + bias[0]) / diagonal[0]);
        }
        break;
      case ConstraintType::kFriction:  // the limit's step, projected on the box [-f h, f h]
        if (diagonal[0] > 0) {
          const double value = own[0] - (velocity[0] + bias[0]) / diagonal[0];
          updated[0] = std::min(c.lambda_upper, std::max(c.lambda_lower, value));
        }
        break;
      case ConstraintType::kEquality:  // Gauss-Seidel over its rows, unless dependent
        if (c.dim == 3 && DependentEqualityUpdate(block, velocity, bias, own, updated)) break;
        // Each row's step sees the rows before it through W_ii (velocity += W_ii[:, r] delta_r),
        // as it sees the constraints before it. Stepping all rows from one velocity (Jacobi, the
        // contact rows' D step) diverges when W_ii is far from diagonal: its iteration matrix
        // I - diag(W_ii)^-1 W_ii has a spectral radius above 1 once W_ii is close to rank one
        // along a direction oblique to the world axes its rows are on (a light lever at 45
        // degrees carrying the pin, or a four-bar pin opened by millimetres: Cassie's had 1.62),
        // and the impulses grow by that factor every sweep. Row by row, each step lowers the
        // island's quadratic energy for any positive semidefinite W, so it cannot diverge.
        for (int r = 0; r < c.dim; ++r) {
          updated[r] = own[r];
          if (!(diagonal[r] > 0)) continue;
          const double delta = -(velocity[r] + bias[r]) / diagonal[r];
          updated[r] += delta;
          for (int q = r + 1; q < c.dim; ++q) velocity[q] += block[q][r] * delta;
        }
        break;
      case ConstraintType::kSoft: {
        // lambda = -k e - b J v_hat with J v_hat = rest + W_ii lambda (eq. 4), solved for lambda.
        const double rest = velocity[0] - diagonal[0] * own[0];
        const double value =
            -(c.soft_bias + c.soft_damping * rest) / (1.0 + c.soft_damping * diagonal[0]);
        updated[0] = std::min(c.lambda_upper, std::max(c.lambda_lower, value));
        break;
      }
    }
    double change2 = 0;
    for (int r = 0; r < c.dim; ++r) {
      const double change = updated[r] - own[r];
      change2 += change * change;
      own[r] = updated[r];
    }
    largest_change = std::max(largest_change, std::sqrt(change2));
  }
  return largest_change;
}

void PgsSolver::FinalVelocity(const Model& m, Data& d, int island) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
    std::fill(force_.begin() + begin, force_.begin() + end, 0.0);
  }
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    const double* lambda = set.lambda.data() + c.row_adr;
    for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i]; ++e) {
      double sum = 0;
      for (int r = 0; r < c.dim; ++r) sum += jacobian_.At(e, r) * lambda[r];
      force_[jacobian_.dof[e]] += sum;
    }
  }
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
    for (int i = begin; i < end; ++i) d.v_hat[i] = d.solver_rhs[i] + force_[i];
    TreeLdlSolveRange(d.mass_layout, begin, end, d.qA_factor.data(), d.v_hat.data());
  }
}

void PgsSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                            double deadline_us, int island) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  IslandSolveResult& result = island_results_[island];
  result = IslandSolveResult{};
  const int first = islands.constraint_adr[island], last = islands.constraint_adr[island + 1];
  for (int s = first; s < last; ++s) jacobian_.Fill(m, d, islands.constraints[s]);
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    BuildDelassus(m, d, islands.subsystems[s]);
  }
  // J v_free per row; the impulses start from the warm start in lambda.
  for (int s = first; s < last; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    for (int r = 0; r < c.dim; ++r) {
      double sum = 0;
      for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i];
           ++e) {
        sum += jacobian_.At(e, r) * d.v_free[jacobian_.dof[e]];
      }
      free_velocity_[c.row_adr + r] = sum;
    }
  }

  while (!CountIterationAndCheckStop(Sweep(d, island), options, deadline_us, &result)) {
  }
  FinalVelocity(m, d, island);
}

void PgsSolver::Prepare(const Model& m, Data& d, const SolverOptions& /*options*/) {
  jacobian_.Layout(m, d);
  LinkConstraints(m, d);
  if (free_velocity_.size() < static_cast<size_t>(d.constraints.num_rows)) {
    free_velocity_.resize(d.constraints.num_rows);
  }
}

}  // namespace alsim
