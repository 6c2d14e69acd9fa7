#include "engine/solver/newton/newton_solver.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "engine/linalg/tree_ldl.h"
#include "engine/solver/icf/icf_contact.h"
#include "engine/solver/newton/exact_line_search.h"
#include "engine/solver/newton/newton_loop.h"
#include "engine/solver/sap/sap_cone.h"

namespace alsim {
namespace {

using DenseMap = Eigen::Map<Eigen::MatrixXd>;
using VectorMap = Eigen::Map<Eigen::VectorXd>;

constexpr double kMinRegularization = 1e-15;  // MuJoCo's mjMINVAL, the least R of a row

// Solver rows of constraint c: a frictional pyramidal contact's 2 (dim - 1) edges, a frictionless
// contact's normal row, else its own rows (an elliptic contact's dim rows).
int SolverRows(const Constraint& c, bool elliptic) {
  if (c.type != ConstraintType::kContact) return c.dim;
  if (!(c.friction > 0)) return 1;
  return elliptic ? c.dim : 2 * (c.dim - 1);
}

// The friction coefficient of a contact's row j >= 1 (MuJoCo's friction[j - 1]).
double RowFriction(const Constraint& c, int j) {
  return j <= 2 ? c.friction : j == 3 ? c.friction_torsion : c.friction_rolling;
}

}  // namespace

NewtonSolver::NewtonSolver(const Model& m, SolverType type) : IslandSolver(m), type_(type) {
  jacobian_.Reserve(m, MaxConstraints(m));
  local_dof_.assign(m.nv, -1);
  start_.assign(m.nv, 0.0);
  warm_product_.assign(m.nv, 0.0);
  rank_vector_.assign(m.nv, 0.0);
  tree_vector_.assign(m.nv, 0.0);
  tree_product_.assign(m.nv, 0.0);
  sparse_hessian_.Reserve(m, MaxConstraints(m));
  tree_hessian_.assign(TreeSparseLayout::FromParents(m.dof_parent).nnz, 0.0);
}

void NewtonSolver::Prepare(const Model& m, Data& d, const SolverOptions& /*options*/) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  jacobian_.Layout(m, d);
  const int num = islands.num;
  for (std::vector<int>* values : {&island_dof_adr_, &island_row_adr_, &island_row_num_,
                                   &newton_iterations_, &line_search_evaluations_, &factorizations_,
                                   &warm_, &tree_factorizations_, &rank_updates_}) {
    values->resize(num + 1);
  }
  island_matrix_adr_.resize(num + 1);
  island_entry_adr_.resize(num + 1);
  constraint_first_row_.resize(set.constraints.size());
  constraint_on_chain_.resize(set.constraints.size());
  island_tree_.resize(num + 1);

  int dofs = 0, rows = 0;
  size_t matrix = 0, entries = 0;
  for (int k = 0; k < num; ++k) {
    island_dof_adr_[k] = dofs;
    island_row_adr_[k] = rows;
    island_matrix_adr_[k] = matrix;
    island_entry_adr_[k] = entries;
    int n = 0;
    for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
      const int j = islands.subsystems[s];
      for (int dof = m.subsystem_dof_adr[j]; dof < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j];
           ++dof) {
        local_dof_[dof] = n++;
      }
    }
    for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
      const int i = islands.constraints[s];
      const int count = SolverRows(set.constraints[i], ConeRows(m));
      constraint_first_row_[i] = rows;
      rows += count;
      entries += static_cast<size_t>(count) * jacobian_.capacity[i];
    }
    island_row_num_[k] = rows - island_row_adr_[k];
    dofs += n;
    if (n <= kMaxDenseDofs) matrix += static_cast<size_t>(n) * n;
  }
  island_dof_adr_[num] = dofs;
  island_row_adr_[num] = rows;
  island_matrix_adr_[num] = matrix;
  island_entry_adr_[num] = entries;

  if (velocity_.size() < static_cast<size_t>(dofs)) {
    for (std::vector<double>* values : {&velocity_, &rhs_, &gradient_, &direction_, &product_,
                                        &scratch_, &permuted_, &permuted_product_, &combined_}) {
      values->resize(dofs);
    }
    global_dof_.resize(dofs);
  }
  if (mass_.size() < matrix) {
    mass_.resize(matrix);
    hessian_.resize(matrix);
  }
  if (row_d_.size() < static_cast<size_t>(rows)) {
    kind_.resize(rows);
    quadratic_.resize(rows);
    factored_state_.resize(rows);
    row_mu_.resize(rows);
    cone_dim_.resize(rows);
    if (Icf()) icf_contact_.resize(rows);
    pyramid_constraint_.resize(rows);
    row_constraint_.resize(rows);
    cone_hessian_.resize(36 * static_cast<size_t>(rows));
    row_entry_adr_.resize(rows);
    row_entry_num_.resize(rows);
    for (std::vector<double>* values :
         {&row_d_, &row_offset_, &lower_, &upper_, &row_y_, &row_z_, &impulse_, &saved_y_}) {
      values->resize(rows);
    }
  }
  bool large = false;
  for (int k = 0; k < num && !large; ++k) {
    large = island_dof_adr_[k + 1] - island_dof_adr_[k] > kMaxDenseDofs;
  }
  if (large) {
    sparse_hessian_.LayOut(m, d, islands, jacobian_);
  }
  if (entry_dof_.size() < entries) {
    entry_dof_.resize(entries);
    entry_value_.resize(entries);
  }
  for (int k = 0; k < num; ++k) {
    int n = 0;
    for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
      const int j = islands.subsystems[s];
      for (int dof = m.subsystem_dof_adr[j]; dof < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j];
           ++dof) {
        global_dof_[island_dof_adr_[k] + n++] = dof;
      }
    }
  }
}

double NewtonSolver::DelassusDiagonalMean(const Model& m, const Data& d, int i) {
  const ConstraintSet& set = d.constraints;
  const Constraint& c = set.constraints[i];
  const TreeSparseLayout& layout = d.mass_layout;
  const int first = jacobian_.entry_adr[i], count = jacobian_.entry_num[i];
  const int rows = std::min(c.dim, 3);
  double sum = 0;
  for (int r = 0; r < rows; ++r) {
    // J_r A^-1 J_r^T by the trees' factors of A, on the trees the constraint reaches.
    for (int k = c.block_adr; k < c.block_adr + c.block_num; ++k) {
      const int j = set.blocks[k].subsystem;
      std::fill(tree_vector_.begin() + m.subsystem_dof_adr[j],
                tree_vector_.begin() + m.subsystem_dof_adr[j] + m.subsystem_dof_num[j], 0.0);
    }
    for (int e = first; e < first + count; ++e) tree_vector_[jacobian_.dof[e]] = jacobian_.At(e, r);
    for (int k = c.block_adr; k < c.block_adr + c.block_num; ++k) {
      const int j = set.blocks[k].subsystem;
      if (k > c.block_adr && set.blocks[k - 1].subsystem == j) continue;  // solved already
      TreeLdlSolveRange(layout, m.subsystem_dof_adr[j],
                        m.subsystem_dof_adr[j] + m.subsystem_dof_num[j], d.qA_factor.data(),
                        tree_vector_.data());
    }
    for (int e = first; e < first + count; ++e) {
      sum += jacobian_.At(e, r) * tree_vector_[jacobian_.dof[e]];
    }
  }
  return sum / rows;
}

void NewtonSolver::BuildRows(const Model& m, const Data& d, const SolverOptions& options,
                             int island) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  size_t entry = island_entry_adr_[island];
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    jacobian_.Fill(m, d, i);
    const int first = jacobian_.entry_adr[i], count = jacobian_.entry_num[i];
    // On one chain: each dof (increasing) an ancestor of the next.
    bool chain = true;
    for (int e = first + 1; e < first + count && chain; ++e) {
      int q = jacobian_.dof[e];
      while (q > jacobian_.dof[e - 1]) q = m.dof_parent[q];
      chain = q == jacobian_.dof[e - 1];
    }
    constraint_on_chain_[i] = chain;
    int row = constraint_first_row_[i];
    for (int r = row; r < row + SolverRows(c, ConeRows(m)); ++r) {
      pyramid_constraint_[r] = -1;
    }
    // Appends a row whose J is sum_t weight[t] J_c(t) (contact edges combine two of c's rows).
    auto add_row = [&](NewtonRowKind kind, double coefficient_d, double offset, int r0, int r1,
                       double weight1) {
      kind_[row] = kind;
      row_constraint_[row] = i;
      row_d_[row] = coefficient_d;
      row_offset_[row] = offset;
      row_entry_adr_[row] = static_cast<int>(entry - island_entry_adr_[island]);
      row_entry_num_[row] = count;
      for (int e = first; e < first + count; ++e) {
        double value = jacobian_.At(e, r0);
        if (r1 >= 0) value += weight1 * jacobian_.At(e, r1);
        entry_dof_[entry] = local_dof_[jacobian_.dof[e]];
        entry_value_[entry] = value;
        ++entry;
      }
      ++row;
    };
    const double* bias = set.bias.data() + c.row_adr;
    if (Icf() && c.type == ConstraintType::kContact) {
      // ICF (icf_contact.h): one cone of the contact's rows (3, or its normal alone without
      // friction) over x = J v, with the contact's invariants: phi0, and v_n0 = J_n v0 for
      // Lagged's gamma_n0; w (Delassus) only for the regularized model's eps_s.
      const IcfParameters& p = options.icf;
      double normal_velocity0 = 0;
      for (int e = first; e < first + count; ++e) {
        normal_velocity0 += jacobian_.At(e, 0) * d.qvel[jacobian_.dof[e]];
      }
      const double w = p.regularized ? DelassusDiagonalMean(m, d, i) : 0.0;
      const Contact& contact = d.contact[c.contact];
      // Anisotropic friction (Appendix B) where the scene sets it, else mu.
      const IcfFriction friction = ContactFriction(m, d, contact, c.friction > 0 ? c.friction : 0);
      const double mu = friction.mu;
      const IcfCompliance compliance = ContactCompliance(m, p, contact.geom1, contact.geom2);
      IcfParameters own = p;
      own.stiction_speed = compliance.stiction;
      icf_contact_[row] =
          MakeIcfContact(type_ == SolverType::kIcfSimilar ? IcfModel::kSimilar : IcfModel::kLagged,
                         own, m.timestep, compliance.stiffness, compliance.dissipation, friction,
                         bias[0], normal_velocity0, w);
      const int dim = mu > 0 ? 3 : 1;
      row_mu_[row] = mu;
      cone_dim_[row] = dim;
      for (int r = 0; r < dim; ++r) {
        add_row(r == 0 ? NewtonRowKind::kCone : NewtonRowKind::kConeTail, 1, 0, r, -1, 0);
      }
      continue;
    }
    if ((type_ == SolverType::kSap || Icf()) && c.type != ConstraintType::kSoft) {
      // SAP (sap_parameters.h): R_n = max(beta^2 / (4 pi^2) w, 1 / (dt k (dt + tau_d))) (eq. 21),
      // R_t = sigma w (eq. 22), vhat = -phi0 / (dt + tau_d), so e = phi0 / (dt + tau_d). Limits
      // and equalities are near-rigid rows, friction rows stiction-regularized as R_t.
      const SapParameters& p = options.sap;
      const double h = m.timestep;
      const double tau = SapDissipationTime(p, h);
      const double w = DelassusDiagonalMean(m, d, i);
      SapParameters near_rigid = p;
      near_rigid.stiffness = 0;  // limits and equalities: near-rigid rows
      // A row that moves nothing (w = 0) keeps a positive R, as MuJoCo's mjMINVAL floor.
      const double normal = std::max(
          kMinRegularization,
          SapNormalRegularization(c.type == ConstraintType::kContact ? p : near_rigid, w, h));
      const double tangent = std::max(kMinRegularization, p.sigma * w);
      switch (c.type) {
        case ConstraintType::kContact:
          if (!(c.friction > 0)) {
            add_row(NewtonRowKind::kInequality, 1 / normal, bias[0] / (h + tau) / normal, 0, -1, 0);
            break;
          }
          row_mu_[row] = c.friction;
          cone_dim_[row] = 3;
          add_row(NewtonRowKind::kCone, 1 / normal, bias[0] / (h + tau) / normal, 0, -1, 0);
          add_row(NewtonRowKind::kConeTail, 1 / tangent, 0, 1, -1, 0);
          add_row(NewtonRowKind::kConeTail, 1 / tangent, 0, 2, -1, 0);
          break;
        case ConstraintType::kLimit:
        case ConstraintType::kEquality:
          for (int r = 0; r < c.dim; ++r) {
            add_row(c.type == ConstraintType::kLimit ? NewtonRowKind::kInequality
                                                     : NewtonRowKind::kEquality,
                    1 / normal, bias[r] / (h + tau) / normal, r, -1, 0);
          }
          break;
        case ConstraintType::kFriction:
          lower_[row] = c.lambda_lower;
          upper_[row] = c.lambda_upper;
          add_row(NewtonRowKind::kBox, 1 / tangent, 0, 0, -1, 0);
          break;
        case ConstraintType::kSoft:
          break;
      }
      continue;
    }
    switch (c.type) {
      case ConstraintType::kContact: {
        const double dn = 1 / set.regularization[c.row_adr];
        if (!(c.friction > 0)) {
          add_row(NewtonRowKind::kInequality, dn, dn * bias[0], 0, -1, 0);
          break;
        }
        if (m.cone == FrictionCone::kElliptic) {
          // A cone of dim rows: the first row carries the regularized cone's mu = mu_1
          // sqrt(R_0 / R_1) (mj_makeImpedance), the others their friction coefficients.
          const double impratio = std::max(1e-15, m.impratio);
          for (int r = 0; r < c.dim; ++r) {
            const double dr = 1 / set.regularization[c.row_adr + r];
            row_mu_[row] = r == 0 ? c.friction / std::sqrt(impratio) : RowFriction(c, r);
            cone_dim_[row] = c.dim;
            add_row(r == 0 ? NewtonRowKind::kCone : NewtonRowKind::kConeTail, dr, dr * bias[r], r,
                    -1, 0);
          }
          break;
        }
        const int first_edge = row;
        for (int j = 1; j < c.dim; ++j) {
          const double mu = RowFriction(c, j);
          for (const double sign : {+1.0, -1.0}) {
            add_row(NewtonRowKind::kInequality, dn, dn * (bias[0] + sign * mu * bias[j]), 0, j,
                    sign * mu);
          }
        }
        if (c.dim == 3) pyramid_constraint_[first_edge] = i;
        break;
      }
      case ConstraintType::kLimit:
      case ConstraintType::kEquality: {
        const NewtonRowKind kind = c.type == ConstraintType::kLimit ? NewtonRowKind::kInequality
                                                                    : NewtonRowKind::kEquality;
        for (int r = 0; r < c.dim; ++r) {
          const double dr = 1 / set.regularization[c.row_adr + r];
          add_row(kind, dr, dr * bias[r], r, -1, 0);
        }
        break;
      }
      case ConstraintType::kFriction:
      case ConstraintType::kSoft: {
        const bool soft = c.type == ConstraintType::kSoft;
        const double dr = soft ? c.soft_damping : 1 / set.regularization[c.row_adr];
        lower_[row] = c.lambda_lower;
        upper_[row] = c.lambda_upper;
        add_row(NewtonRowKind::kBox, dr, soft ? c.soft_bias : dr * bias[0], 0, -1, 0);
        break;
      }
    }
  }
}

namespace {

// A row's impulse at y = J_r v and whether its D acts there (the row's cost is quadratic), with
// its cost s_r(y), continuous across the pieces (newton_solver.h).
struct RowState {
  double impulse = 0;
  double cost = 0;
  bool quadratic = false;
};

RowState RowAt(NewtonRowKind kind, double dr, double offset, double lower, double upper, double y) {
  RowState state;
  const double unclamped = -(dr * y + offset);
  if (kind == NewtonRowKind::kEquality || (kind == NewtonRowKind::kInequality && unclamped > 0)) {
    state.impulse = unclamped;
    state.cost = unclamped * unclamped / (2 * dr);
    state.quadratic = true;
  } else if (kind == NewtonRowKind::kInequality) {
    return state;
  } else if (!(dr > 0)) {  // a servo without damping or stiffness: a constant impulse
    state.impulse = std::clamp(-offset, lower, upper);
    state.cost = -state.impulse * y;
  } else if (unclamped >= upper || unclamped <= lower) {
    const double bound = unclamped >= upper ? upper : lower;
    state.impulse = bound;
    state.cost = -bound * y - bound * bound / (2 * dr) - bound * offset / dr;
  } else {
    state.impulse = unclamped;
    state.cost = unclamped * unclamped / (2 * dr);
    state.quadratic = true;
  }
  return state;
}

// An elliptic cone's impulses, cost, zone and (middle zone) Hessian at x = J v + e of its dim
// rows (newton_solver.h; mj_constraintUpdate of MuJoCo 2.2.2).
struct ConeState {
  double impulse[kMaxConstraintDim] = {0, 0, 0, 0, 0, 0};
  double cost = 0;
  char zone = 0;  // 0 top, 1 bottom, 2 middle
};
ConeState ConeAt(int dim, const double* x, const double* dr, const double* mu_row,
                 double* hessian) {
  ConeState state;
  const double mu = mu_row[0];
  double u[kMaxConstraintDim];
  u[0] = x[0] * mu;
  double t2 = 0;
  for (int j = 1; j < dim; ++j) {
    u[j] = x[j] * mu_row[j];
    t2 += u[j] * u[j];
  }
  const double n = u[0], t = std::sqrt(t2);
  if (n >= mu * t || (t <= 0 && n >= 0)) return state;
  if (mu * n + t <= 0 || (t <= 0 && n < 0)) {
    state.zone = 1;
    for (int j = 0; j < dim; ++j) {
      state.impulse[j] = -dr[j] * x[j];
      state.cost += 0.5 * dr[j] * x[j] * x[j];
    }
    return state;
  }
  state.zone = 2;
  const double dm = dr[0] / (mu * mu * (1 + mu * mu));
  const double nmt = n - mu * t;
  state.cost = 0.5 * dm * nmt * nmt;
  state.impulse[0] = -dm * nmt * mu;
  for (int j = 1; j < dim; ++j) state.impulse[j] = -state.impulse[0] / t * u[j] * mu_row[j];
  if (hessian == nullptr) return state;
  // (1, -mu/T U^T; -mu/T U, mu N/T^3 U U^T + (mu^2 - mu N/T) I), then scaled on both sides by
  // diag(mu, f) and by D_m.
  Eigen::Map<Eigen::MatrixXd> h(hessian, dim, dim);
  h(0, 0) = 1;
  for (int j = 1; j < dim; ++j) h(0, j) = h(j, 0) = -mu / t * u[j];
  for (int k = 1; k < dim; ++k) {
    for (int j = 1; j < dim; ++j) {
      h(k, j) = mu * n / (t * t * t) * u[j] * u[k] + (j == k ? mu * mu - mu * n / t : 0.0);
    }
  }
  for (int k = 0; k < dim; ++k) {
    for (int j = 0; j < dim; ++j) h(k, j) *= dm * mu_row[k] * mu_row[j];
  }
  return state;
}

// A cone's state in the solver's model: ICF's contact (icf_contact.h; `icf` set, x = J v, dim 3
// or 1), SAP's (sap_cone.h; R_n, R_t from the rows' D) or MuJoCo's elliptic one.
ConeState CurrentCone(SolverType type, int dim, const double* x, const double* dr,
                      const double* mu_row, const IcfContact* icf, double* hessian) {
  if (icf != nullptr) {
    const double vc[3] = {x[0], dim > 1 ? x[1] : 0.0, dim > 2 ? x[2] : 0.0};
    double full[9];
    const IcfContactState contact = IcfContactAt(*icf, vc, hessian != nullptr ? full : nullptr);
    ConeState state;
    for (int j = 0; j < dim; ++j) state.impulse[j] = contact.impulse[j];
    state.cost = contact.cost;
    state.zone = contact.acts ? 2 : 0;  // G in full, or nothing
    if (hessian != nullptr) {
      for (int k = 0; k < dim; ++k) {
        for (int j = 0; j < dim; ++j) hessian[j + k * dim] = full[j + k * 3];
      }
    }
    return state;
  }
  if (type != SolverType::kSap) return ConeAt(dim, x, dr, mu_row, hessian);
  const SapConeState sap = SapConeAt(x, 1 / dr[0], 1 / dr[1], mu_row[0], hessian);
  ConeState state;
  for (int j = 0; j < 3; ++j) state.impulse[j] = sap.impulse[j];
  state.cost = sap.cost;
  state.zone = sap.zone;  // stiction: G = diag(D), as MuJoCo's bottom zone; sliding: G in full
  return state;
}

}  // namespace

void NewtonSolver::MassProduct(const Model& m, const Data& d, int island, const double* x,
                               double* y) {
  const int n = island_dof_adr_[island + 1] - island_dof_adr_[island];
  const int* global = global_dof_.data() + island_dof_adr_[island];
  if (!island_tree_[island] && n <= kMaxDenseDofs) {
    VectorMap(y, n).noalias() = DenseMap(mass_.data() + island_matrix_adr_[island], n, n) *
                                Eigen::Map<const Eigen::VectorXd>(x, n);
    return;
  }
  if (island_tree_[island]) {
    for (int i = 0; i < n; ++i) tree_vector_[global[i]] = x[i];
    const Islands& islands = d.islands;
    for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
      const int j = islands.subsystems[s];
      TreeSparseMultiplyRange(d.mass_layout, m.subsystem_dof_adr[j],
                              m.subsystem_dof_adr[j] + m.subsystem_dof_num[j], d.qA.data(),
                              tree_vector_.data(), tree_product_.data());
    }
    for (int i = 0; i < n; ++i) y[i] = tree_product_[global[i]];
    return;
  }
  // The pattern's upper triangle, in its own numbering of the island's dofs.
  const IslandSparsePattern& pattern = sparse_hessian_.pattern();
  const int* local = pattern.local_dofs();
  double* in = permuted_.data() + island_dof_adr_[island];
  double* out = permuted_product_.data() + island_dof_adr_[island];
  for (int i = 0; i < n; ++i) in[local[global[i]]] = x[i];
  std::fill(out, out + n, 0.0);
  const int* columns = pattern.column_start(island);
  const int* rows = pattern.row_index(island);
  const double* values = pattern.mass(island);
  for (int c = 0; c < n; ++c) {
    for (int e = columns[c]; e < columns[c + 1]; ++e) {
      const int r = rows[e];
      out[r] += values[e] * in[c];
      if (r != c) out[c] += values[e] * in[r];
    }
  }
  for (int i = 0; i < n; ++i) y[i] = out[local[global[i]]];
}

void NewtonSolver::RowProducts(const Data& d, int island, const double* x, double* out) const {
  const size_t entry0 = island_entry_adr_[island];
  const int row_end = island_row_adr_[island] + island_row_num_[island];
  for (int r = island_row_adr_[island]; r < row_end; ++r) {
    const int* dofs = entry_dof_.data() + entry0 + row_entry_adr_[r];
    const int count = row_entry_num_[r];
    if (pyramid_constraint_[r] >= 0) {
      const int i = pyramid_constraint_[r];
      const Vec3* rows = jacobian_.value.data() + jacobian_.entry_adr[i];
      Vec3 sum = Vec3::Zero();
      for (int e = 0; e < count; ++e) sum += rows[e] * x[dofs[e]];
      const double mu = d.constraints.constraints[i].friction;
      out[r] = sum[0] + mu * sum[1];
      out[r + 1] = sum[0] - mu * sum[1];
      out[r + 2] = sum[0] + mu * sum[2];
      out[r + 3] = sum[0] - mu * sum[2];
      r += 3;
      continue;
    }
    const double* values = entry_value_.data() + entry0 + row_entry_adr_[r];
    double y = 0;
    for (int e = 0; e < count; ++e) y += values[e] * x[dofs[e]];
    out[r] = y;
  }
}

double NewtonSolver::Evaluate(const Model& m, const Data& d, int island, const double* v,
                              double* gradient) {
  MassProduct(m, d, island, v, product_.data() + island_dof_adr_[island]);
  RowProducts(d, island, v, row_y_.data());
  return EvaluateRows(d, island, v, gradient);
}

double NewtonSolver::EvaluateRows(const Data& d, int island, const double* v, double* gradient) {
  const int n = island_dof_adr_[island + 1] - island_dof_adr_[island];
  const int dof0 = island_dof_adr_[island];
  const Eigen::Map<const Eigen::VectorXd> velocity(v, n);
  const VectorMap product(product_.data() + dof0, n);
  const VectorMap rhs(rhs_.data() + dof0, n);
  double cost = 0.5 * velocity.dot(product) - rhs.dot(velocity);
  if (gradient != nullptr) {
    for (int i = 0; i < n; ++i) gradient[i] = product[i] - rhs[i];
  }
  const size_t entry0 = island_entry_adr_[island];
  const int row_end = island_row_adr_[island] + island_row_num_[island];
  const int row0 = island_row_adr_[island];
  for (int r = row0; r < row_end; ++r) {
    if (kind_[r] == NewtonRowKind::kConeTail) continue;
    if (kind_[r] == NewtonRowKind::kCone) {
      const int dim = cone_dim_[r];
      double x[kMaxConstraintDim];
      for (int j = 0; j < dim; ++j) x[j] = row_y_[r + j] + row_offset_[r + j] / row_d_[r + j];
      const ConeState state =
          CurrentCone(type_, dim, x, row_d_.data() + r, row_mu_.data() + r,
                      Icf() ? &icf_contact_[r] : nullptr, cone_hessian_.data() + 36 * r);
      for (int j = 0; j < dim; ++j) {
        impulse_[r + j] = state.impulse[j];
        quadratic_[r + j] = 0;
      }
      quadratic_[r] = state.zone;
      cost += state.cost;
      continue;
    }
    const RowState state =
        RowAt(kind_[r], row_d_[r], row_offset_[r], lower_[r], upper_[r], row_y_[r]);
    impulse_[r] = state.impulse;
    quadratic_[r] = state.quadratic;
    cost += state.cost;
  }
  if (gradient == nullptr) return cost;
  for (int r = row0; r < row_end; ++r) {
    if (pyramid_constraint_[r] >= 0) {  // J_c^T of the edges' impulses in (normal, t1, t2)
      const int i = pyramid_constraint_[r];
      const double mu = d.constraints.constraints[i].friction;
      const double* edge = impulse_.data() + r;
      const Vec3 impulse(edge[0] + edge[1] + edge[2] + edge[3], mu * (edge[0] - edge[1]),
                         mu * (edge[2] - edge[3]));
      if (!impulse.isZero(0)) {
        const int* dofs = entry_dof_.data() + entry0 + row_entry_adr_[r];
        const Vec3* rows = jacobian_.value.data() + jacobian_.entry_adr[i];
        for (int e = 0; e < row_entry_num_[r]; ++e) gradient[dofs[e]] -= rows[e].dot(impulse);
      }
      r += 3;
      continue;
    }
    if (impulse_[r] == 0) continue;
    const int* dofs = entry_dof_.data() + entry0 + row_entry_adr_[r];
    const double* values = entry_value_.data() + entry0 + row_entry_adr_[r];
    for (int e = 0; e < row_entry_num_[r]; ++e) gradient[dofs[e]] -= values[e] * impulse_[r];
  }
  return cost;
}

void NewtonSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                               double deadline_us, int island) {
  IslandSolveResult& result = island_results_[island];
  result = IslandSolveResult{};
  newton_iterations_[island] = line_search_evaluations_[island] = factorizations_[island] = 0;
  tree_factorizations_[island] = 0;
  rank_updates_[island] = 0;
  warm_[island] = 0;
  const MujocoNewtonParameters& parameters = options.mujoco;
  // The line search's stops: as tight as rounding allows, within MuJoCo's cap on evaluations.
  LineSearchParameters line_search;
  line_search.relative_tolerance = 1e-12;
  line_search.bracket_tolerance = 1e-15;
  line_search.max_iterations = parameters.max_line_search;
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  const int n = island_dof_adr_[island + 1] - island_dof_adr_[island];
  const int dof0 = island_dof_adr_[island];
  const int* global = global_dof_.data() + dof0;
  BuildRows(m, d, options, island);

  // H keeps A's tree sparsity when every constraint's dofs lie on one chain.
  // A dense (symmetric) from its tree-sparse storage, for the products (Eigen's dense
  // matrix-vector product beats the tree-sparse one at these sizes); b; v_free.
  const TreeSparseLayout& layout = d.mass_layout;
  bool on_chain = true;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    on_chain = on_chain && constraint_on_chain_[islands.constraints[s]];
  }
  island_tree_[island] = on_chain;
  const bool small = n <= kMaxDenseDofs;
  if (!small && !on_chain) {
    sparse_hessian_.Build(m, d, islands, jacobian_, island);
  }
  DenseMap mass(mass_.data() + island_matrix_adr_[island], small ? n : 0, small ? n : 0);
  double trace = 0;
  for (int i = 0; i < n; ++i) trace += d.qA[layout.row_adr[global[i]]];
  if (small && !on_chain) {  // on one chain, A's products use its tree storage
    mass.setZero();
    for (int i = 0; i < n; ++i) {
      const int dof = global[i];
      for (int t = 0; t < layout.row_nnz[dof]; ++t) {
        const int column = local_dof_[layout.column[layout.row_adr[dof] + t]];
        const double value = d.qA[layout.row_adr[dof] + t];
        mass(i, column) = value;
        mass(column, i) = value;
      }
    }
  }
  double* v = velocity_.data() + dof0;
  double* g = gradient_.data() + dof0;
  double* direction = direction_.data() + dof0;
  for (int i = 0; i < n; ++i) {
    rhs_[dof0 + i] = d.solver_rhs[global[i]];
    v[i] = d.v_hat[global[i]];
  }
  // Products are not recomputed where they are known: A v_free = b, A A^{-1} (b + J^T lambda) =
  // b + J^T lambda, and along a step A (v + alpha d) = A v + alpha A d, J (v + alpha d) = J v +
  // alpha J d (as MuJoCo updates its Ma and Jaref), equal up to rounding.
  bool at_free = true;
  for (int i = 0; i < n && at_free; ++i) at_free = v[i] == d.v_free[global[i]];
  double cost = 0;
  if (at_free) {
    std::copy(rhs_.begin() + dof0, rhs_.begin() + dof0 + n, product_.begin() + dof0);
    RowProducts(d, island, v, row_y_.data());
    cost = EvaluateRows(d, island, v, g);
  } else {
    cost = Evaluate(m, d, island, v, g);
  }

  // The warm start's v = A^{-1} (b + J^T lambda_warm), kept if it costs less than v_free.
  bool any_warm = false;
  for (int i = 0; i < n; ++i) start_[global[i]] = d.solver_rhs[global[i]];
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const Constraint& c = set.constraints[islands.constraints[s]];
    const int i = islands.constraints[s];
    for (int r = 0; r < c.dim; ++r) {
      const double lambda = set.lambda[c.row_adr + r];
      if (lambda == 0) continue;
      any_warm = true;
      for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i];
           ++e) {
        start_[jacobian_.dof[e]] += jacobian_.At(e, r) * lambda;
      }
    }
  }
  if (any_warm) {
    for (int i = 0; i < n; ++i) warm_product_[global[i]] = start_[global[i]];
    for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
      const int j = islands.subsystems[s];
      TreeLdlSolveRange(layout, m.subsystem_dof_adr[j],
                        m.subsystem_dof_adr[j] + m.subsystem_dof_num[j], d.qA_factor.data(),
                        start_.data());
    }
    double* candidate = scratch_.data() + dof0;
    for (int i = 0; i < n; ++i) candidate[i] = start_[global[i]];
    const int rows0 = island_row_adr_[island], rows_end = rows0 + island_row_num_[island];
    std::copy(row_y_.begin() + rows0, row_y_.begin() + rows_end, saved_y_.begin() + rows0);
    for (int i = 0; i < n; ++i) product_[dof0 + i] = warm_product_[global[i]];
    RowProducts(d, island, candidate, row_y_.data());
    const double warm_cost = EvaluateRows(d, island, candidate, direction);
    if (warm_cost < cost) {
      std::copy(candidate, candidate + n, v);
      std::copy(direction, direction + n, g);
      cost = warm_cost;
      warm_[island] = 1;
    } else {  // the rows' states at v_free again
      std::copy(saved_y_.begin() + rows0, saved_y_.begin() + rows_end, row_y_.begin() + rows0);
      if (at_free) {
        std::copy(rhs_.begin() + dof0, rhs_.begin() + dof0 + n, product_.begin() + dof0);
      } else {
        MassProduct(m, d, island, v, product_.data() + dof0);
      }
      EvaluateRows(d, island, v, g);
    }
  }

  const bool record = record_history_ && island == 0;
  if (record) cost_history_.assign(1, cost);
  // MuJoCo's scaling: its units are accelerations (v / h), divided by mean inertia x max(1, n).
  const double h = m.timestep;
  const double scale = 1 / (trace / n * std::max(1, n));
  const double tolerance = parameters.tolerance;
  auto gradient_test = [&] { return scale * VectorMap(g, n).norm() / h; };
  const int row0 = island_row_adr_[island], row_end = row0 + island_row_num_[island];
  const size_t entry0 = island_entry_adr_[island];
  DenseMap hessian(hessian_.data() + island_matrix_adr_[island], small ? n : 0, small ? n : 0);
  // SAP's stop (eq. 20): ||D g|| <= eps_a + eps_r max(||D p||, ||D j_c||), D = diag(A)^-1/2,
  // p = A v, j_c = J^T gamma = A v - b - g; before each factorization.
  auto sap_test = [&] {
    double gradient2 = 0, momentum2 = 0, impulse2 = 0;
    for (int i = 0; i < n; ++i) {
      const double scale2 = 1 / d.qA[layout.row_adr[global[i]]];
      const double p = product_[dof0 + i];
      const double jc = p - rhs_[dof0 + i] - g[i];
      gradient2 += scale2 * g[i] * g[i];
      momentum2 += scale2 * p * p;
      impulse2 += scale2 * jc * jc;
    }
    const double absolute = Icf() ? options.icf.absolute_tolerance : options.sap.absolute_tolerance;
    const double relative = Icf() ? options.icf.relative_tolerance : options.sap.relative_tolerance;
    return std::sqrt(gradient2) <= absolute + relative * std::sqrt(std::max(momentum2, impulse2));
  };
  const bool sap = type_ == SolverType::kSap || Icf();
  // The Newton loop (newton_loop.h) with the kit's pieces. The stop: SAP's, or MuJoCo's on the
  // gradient and, once a step was taken, on the cost's improvement.
  double previous = cost;
  bool stepped = false;
  auto converged = [&] {
    if (sap) return sap_test();
    return (stepped && scale * (previous - cost) / (h * h) < tolerance) ||
           gradient_test() < tolerance;
  };
  double curvature = 0, slope0 = 0;  // along d: d^T A d and d . (A v - b)
  // The tree factor of H follows the rows' states by rank-1 updates once factored (MuJoCo's
  // incremental Hessian): a row that became quadratic adds D_r J_r^T J_r, one that left
  // subtracts it (a pyramid's edge its own J_n +- mu J_t), while the updates' cost (sum over
  // each row's chain of depth) stays below a factorization's (sum of depth^2 over the island's
  // dofs). Cones (elliptic, SAP) change H within a zone: always factored.
  bool updatable = on_chain && parameters.rank_updates;
  for (int r = row0; r < row_end && updatable; ++r) updatable = kind_[r] != NewtonRowKind::kCone;
  bool factored = false;
  double factor_cost = 0;
  for (int i = 0; i < n && updatable; ++i) {
    factor_cost += layout.row_nnz[global[i]] * layout.row_nnz[global[i]];
  }
  double* tree = tree_hessian_.data();
  // A d, J d and phi'(0) for the line search along the new direction.
  auto finish_direction = [&](double* first0) {
    const VectorMap step(direction, n);
    VectorMap mass_step(scratch_.data() + dof0, n);
    MassProduct(m, d, island, direction, mass_step.data());
    curvature = step.dot(mass_step);
    slope0 = 0;
    for (int i = 0; i < n; ++i) slope0 += direction[i] * (product_[dof0 + i] - rhs_[dof0 + i]);
    RowProducts(d, island, direction, row_z_.data());
    // phi'(0) = g . d (= -g^T H^{-1} g < 0), from g itself rather than an evaluation at 0.
    *first0 = step.dot(VectorMap(g, n));
    return true;
  };
  // The direction from the current factor, or false to factor afresh.
  auto updated_direction = [&]() {
    if (!updatable || !factored) return false;
    double update_cost = 0;
    for (int r = row0; r < row_end; ++r) {
      if (quadratic_[r] != factored_state_[r]) {
        update_cost += row_entry_num_[r] * row_entry_num_[r];
      }
    }
    if (update_cost >= factor_cost) return false;
    for (int r = row0; r < row_end; ++r) {
      if (quadratic_[r] == factored_state_[r]) continue;
      const int count = row_entry_num_[r];
      const int* dofs = entry_dof_.data() + entry0 + row_entry_adr_[r];
      // Every row, a pyramid's edges included, has its J_r in entry_value_.
      const double* values = entry_value_.data() + entry0 + row_entry_adr_[r];
      int deepest = -1;
      for (int k = 0; k < count; ++k) {
        rank_vector_[global[dofs[k]]] = values[k];
        deepest = std::max(deepest, global[dofs[k]]);
      }
      const double sigma = quadratic_[r] ? row_d_[r] : -row_d_[r];
      ++rank_updates_[island];
      if (deepest >= 0 &&
          !TreeLdlRankOneUpdate(layout, deepest, sigma, rank_vector_.data(), tree)) {
        return false;  // a pivot lost positivity to rounding: factor afresh
      }
      factored_state_[r] = quadratic_[r];
    }
    for (int i = 0; i < n; ++i) tree_vector_[global[i]] = -g[i];
    for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
      const int j = islands.subsystems[s];
      const int begin = m.subsystem_dof_adr[j];
      TreeLdlSolveRange(layout, begin, begin + m.subsystem_dof_num[j], tree, tree_vector_.data());
    }
    for (int i = 0; i < n; ++i) direction[i] = tree_vector_[global[i]];
    return true;
  };
  // H = A + sum over quadratic rows of D_r J_r^T J_r (and the cones' middle-zone Hessians),
  // factored; d = -H^{-1} g; then A d, J d and phi'(0) for the line search.
  auto newton_direction = [&](double* first0) {
    VectorMap step(direction, n);
    if (updated_direction()) return finish_direction(first0);
    ++factorizations_[island];
    const bool sparse = !small && !on_chain;
    double* sparse_values = sparse ? sparse_hessian_.values(island) : nullptr;
    // Adds weight J^T J for one row J of constraint c (its entries, their local dofs increasing;
    // sparse: their pairs' positions in H, island_hessian.h).
    auto add_row = [&](const int* dofs, const double* values, int count, double weight, int c) {
      for (int b = 0; b < count; ++b) {
        const double scaled = weight * values[b];
        if (on_chain) {
          // Entry (q, p) of an ancestor p of q sits at row_end[q] - row_nnz[p] in A's layout;
          // one chain, increasing, so every pair is such an entry.
          const int q = global[dofs[b]];
          const int end = layout.row_adr[q] + layout.row_nnz[q];
          for (int a = 0; a <= b; ++a) {
            tree[end - layout.row_nnz[global[dofs[a]]]] += scaled * values[a];
          }
        } else if (sparse) {
          const int* position = sparse_hessian_.pair_positions(c) + b * (b + 1) / 2;
          for (int a = 0; a <= b; ++a) sparse_values[position[a]] += scaled * values[a];
        } else {
          for (int a = 0; a <= b; ++a) hessian(dofs[b], dofs[a]) += scaled * values[a];
        }
      }
    };
    // Adds J^T C J for contact c's rows J (3 per entry, its entries' local dofs increasing).
    auto add_block = [&](const int* dofs, const Vec3* rows, int count, const Mat3& weights, int c) {
      for (int b = 0; b < count; ++b) {
        const Vec3 weighted = weights * rows[b];
        if (on_chain) {
          double* end = tree + layout.row_adr[global[dofs[b]]] + layout.row_nnz[global[dofs[b]]];
          for (int a = 0; a <= b; ++a) {
            end[-layout.row_nnz[global[dofs[a]]]] += rows[a].dot(weighted);
          }
        } else if (sparse) {
          const int* position = sparse_hessian_.pair_positions(c) + b * (b + 1) / 2;
          for (int a = 0; a <= b; ++a) sparse_values[position[a]] += rows[a].dot(weighted);
        } else {
          for (int a = 0; a <= b; ++a) hessian(dofs[b], dofs[a]) += rows[a].dot(weighted);
        }
      }
    };
    if (on_chain) {
      for (int i = 0; i < n; ++i) {
        const int adr = layout.row_adr[global[i]];
        std::copy(d.qA.begin() + adr, d.qA.begin() + adr + layout.row_nnz[global[i]], tree + adr);
      }
    } else if (sparse) {
      sparse_hessian_.SetToMass(island);
    } else {
      hessian.triangularView<Eigen::Lower>() = mass;
    }
    for (int r = row0; r < row_end; ++r) {
      if (pyramid_constraint_[r] >= 0) {
        // A condim-3 pyramid's 4 edges at once: sum_e D J_e^T J_e = J_c^T C J_c with J_c the
        // contact's (normal, t1, t2) rows and C = sum over quadratic edges of D u u^T, u = (1,
        // +-mu, 0) or (1, 0, +-mu); per entry pair one 3-vector product instead of 4 edges'.
        const int i = pyramid_constraint_[r];
        Mat3 weights = Mat3::Zero();
        for (int e = 0; e < 4; ++e) {
          if (!quadratic_[r + e]) continue;
          Vec3 u(1, 0, 0);
          u[1 + e / 2] = (e % 2 == 0 ? 1 : -1) * d.constraints.constraints[i].friction;
          weights += row_d_[r + e] * u * u.transpose();
        }
        if (quadratic_[r] || quadratic_[r + 1] || quadratic_[r + 2] || quadratic_[r + 3]) {
          add_block(entry_dof_.data() + entry0 + row_entry_adr_[r],
                    jacobian_.value.data() + jacobian_.entry_adr[i], row_entry_num_[r], weights, i);
        }
        r += 3;
        continue;
      }
      if (!quadratic_[r]) continue;
      const int* dofs = entry_dof_.data() + entry0 + row_entry_adr_[r];
      const double* values = entry_value_.data() + entry0 + row_entry_adr_[r];
      const int count = row_entry_num_[r];
      if (kind_[r] != NewtonRowKind::kCone) {
        add_row(dofs, values, count, row_d_[r], row_constraint_[r]);
        continue;
      }
      const int dim = cone_dim_[r];
      if (quadratic_[r] == 1) {  // bottom zone: every row quadratic
        for (int j = 0; j < dim; ++j) {
          add_row(dofs, entry_value_.data() + entry0 + row_entry_adr_[r + j], count, row_d_[r + j],
                  row_constraint_[r]);
        }
        continue;
      }
      // Middle zone: J^T H_c J through H_c's eigenvectors q_k, each the row sum_j q_kj J_j.
      using ConeMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxConstraintDim,
                                       kMaxConstraintDim>;
      const ConeMatrix cone =
          Eigen::Map<const Eigen::MatrixXd>(cone_hessian_.data() + 36 * r, dim, dim);
      const Eigen::SelfAdjointEigenSolver<ConeMatrix> eigen(cone);
      double* combined = combined_.data() + dof0;
      for (int k = 0; k < dim; ++k) {
        const double sigma = eigen.eigenvalues()[k];
        if (!(sigma > 0)) continue;
        for (int e = 0; e < count; ++e) {
          double sum = 0;
          for (int j = 0; j < dim; ++j) {
            sum += eigen.eigenvectors()(j, k) * entry_value_[entry0 + row_entry_adr_[r + j] + e];
          }
          combined[e] = sum;
        }
        add_row(dofs, combined, count, sigma, row_constraint_[r]);
      }
    }
    if (on_chain) {
      for (int i = 0; i < n; ++i) tree_vector_[global[i]] = -g[i];
      for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
        const int j = islands.subsystems[s];
        const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
        TreeLdlFactorRange(layout, begin, end, tree);
        TreeLdlSolveRange(layout, begin, end, tree, tree_vector_.data());
      }
      for (int i = 0; i < n; ++i) direction[i] = tree_vector_[global[i]];
      ++tree_factorizations_[island];
      if (updatable) {
        std::copy(quadratic_.begin() + row0, quadratic_.begin() + row_end,
                  factored_state_.begin() + row0);
        factored = true;
      }
    } else if (sparse) {
      if (!sparse_hessian_.Factor(island)) return false;
      const int* pattern_local = sparse_hessian_.pattern().local_dofs();
      double* x = permuted_.data() + dof0;
      for (int i = 0; i < n; ++i) x[pattern_local[global[i]]] = -g[i];
      sparse_hessian_.Solve(island, x);
      for (int i = 0; i < n; ++i) direction[i] = x[pattern_local[global[i]]];
    } else {
      Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> factor(hessian);
      if (factor.info() != Eigen::Success) return false;
      step = -VectorMap(g, n);
      factor.solveInPlace(step);
    }

    return finish_direction(first0);
  };
  // The exact line search (exact_line_search.h) on phi(alpha) = cost(v + alpha d). Each row's
  // s_r is piecewise quadratic in y_r = y + alpha z, so cost' is affine on the piece where no row
  // changes state; its ends are the rows' kinks, where D_r y + c_r meets 0 (an inequality row) or
  // a box's bound. A cone's zones (elliptic, SAP) are not computed: a cone that moves leaves the
  // piece unknown (not affine), as its middle zone is not affine.
  auto derivatives = [&](double alpha, LineSearchSample* sample) {
    double first = slope0 + alpha * curvature;
    double second = curvature;
    double left = -std::numeric_limits<double>::infinity();
    double right = std::numeric_limits<double>::infinity();
    bool affine = true;
    auto exclude = [&](double kink) {  // narrows [left, right] to exclude a kink
      if (kink > alpha) {
        right = std::min(right, kink);
      } else if (kink < alpha) {
        left = std::max(left, kink);
      } else {
        left = right = alpha;
      }
    };
    for (int r = row0; r < row_end; ++r) {
      if (kind_[r] == NewtonRowKind::kConeTail) continue;
      if (kind_[r] == NewtonRowKind::kCone) {
        const int dim = cone_dim_[r];
        double x[kMaxConstraintDim], hessian_at[kMaxConstraintDim * kMaxConstraintDim];
        bool moves = false;
        for (int j = 0; j < dim; ++j) {
          x[j] = row_y_[r + j] + alpha * row_z_[r + j] + row_offset_[r + j] / row_d_[r + j];
          moves = moves || row_z_[r + j] != 0;
        }
        if (moves) affine = false;
        const ConeState state = CurrentCone(type_, dim, x, row_d_.data() + r, row_mu_.data() + r,
                                            Icf() ? &icf_contact_[r] : nullptr, hessian_at);
        for (int j = 0; j < dim; ++j) {
          first -= state.impulse[j] * row_z_[r + j];
          if (state.zone == 1) second += row_d_[r + j] * row_z_[r + j] * row_z_[r + j];
          if (state.zone != 2) continue;
          for (int k = 0; k < dim; ++k) {
            second += row_z_[r + j] * hessian_at[j + k * dim] * row_z_[r + k];
          }
        }
        continue;
      }
      const double z = row_z_[r];
      if (z == 0) continue;
      const double dr = row_d_[r];
      const RowState state =
          RowAt(kind_[r], dr, row_offset_[r], lower_[r], upper_[r], row_y_[r] + alpha * z);
      first -= state.impulse * z;
      if (state.quadratic) second += dr * z * z;
      // D_r (y + t z) + c_r = -bound at t = (-(c_r + bound) / D_r - y) / z.
      if (kind_[r] == NewtonRowKind::kInequality) {
        exclude((-row_offset_[r] / dr - row_y_[r]) / z);
      } else if (kind_[r] == NewtonRowKind::kBox && dr > 0) {
        exclude((-(row_offset_[r] + upper_[r]) / dr - row_y_[r]) / z);
        exclude((-(row_offset_[r] + lower_[r]) / dr - row_y_[r]) / z);
      }
    }
    sample->first = first;
    sample->second = second;
    sample->left = std::min(left, alpha);
    sample->right = std::max(right, alpha);
    sample->affine = affine;
  };
  auto take_step = [&](double alpha) {
    const double* mass_step = scratch_.data() + dof0;  // A d, from newton_direction
    for (int i = 0; i < n; ++i) {
      v[i] += alpha * direction[i];
      product_[dof0 + i] += alpha * mass_step[i];
    }
    for (int r = row0; r < row_end; ++r) row_y_[r] += alpha * row_z_[r];
    previous = cost;
    cost = EvaluateRows(d, island, v, g);
    if (record) cost_history_.push_back(cost);
    stepped = true;
  };
  // A test's probe (set_probe): evaluations at other v overwrite A v, J v and the rows' states,
  // which are saved and restored around each.
  auto probed_direction = [&](double* first0) {
    if (!newton_direction(first0)) return false;
    if (!probe_ || island != 0) return true;
    const std::vector<double> product(product_.begin() + dof0, product_.begin() + dof0 + n);
    const std::vector<double> y(row_y_.begin() + row0, row_y_.begin() + row_end);
    const std::vector<double> impulse(impulse_.begin() + row0, impulse_.begin() + row_end);
    const std::vector<char> states(quadratic_.begin() + row0, quadratic_.begin() + row_end);
    const std::vector<double> cones(cone_hessian_.begin() + 36 * row0,
                                    cone_hessian_.begin() + 36 * row_end);
    NewtonProbe probe;
    probe.dofs = n;
    probe.velocity = v;
    probe.gradient = g;
    probe.direction = direction;
    for (int i = 0; i < n; ++i) {
      probe.scale = std::max(probe.scale, std::abs(product[i]) + std::abs(rhs_[dof0 + i]));
    }
    probe.cost = [&](const double* at, double* gradient) {
      const double value = Evaluate(m, d, island, at, gradient);
      std::copy(product.begin(), product.end(), product_.begin() + dof0);
      std::copy(y.begin(), y.end(), row_y_.begin() + row0);
      std::copy(impulse.begin(), impulse.end(), impulse_.begin() + row0);
      std::copy(states.begin(), states.end(), quadratic_.begin() + row0);
      std::copy(cones.begin(), cones.end(), cone_hessian_.begin() + 36 * row0);
      return value;
    };
    probe.line = derivatives;
    probe_(probe);
    return true;
  };
  const NewtonLoopResult loop =
      NewtonLoop(converged, probed_direction, LineSearchLambda(derivatives), take_step,
                 options.max_iterations, line_search, options, deadline_us);
  newton_iterations_[island] = loop.steps;
  line_search_evaluations_[island] = loop.line_search_evaluations;
  result.iterations = loop.steps;
  result.converged = loop.converged;
  result.dual_residual = VectorMap(g, n).norm();

  // v_hat and the impulses in alsim's rows (a pyramid's edges summed back into n and t_j).
  for (int i = 0; i < n; ++i) d.v_hat[global[i]] = v[i];
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    double* lambda = set.lambda.data() + c.row_adr;
    const double* edge = impulse_.data() + constraint_first_row_[i];
    if (c.type != ConstraintType::kContact || (ConeRows(m) && c.friction > 0)) {
      std::copy(edge, edge + c.dim, lambda);
      continue;
    }
    std::fill(lambda, lambda + c.dim, 0.0);
    if (!(c.friction > 0)) {
      lambda[0] = edge[0];
      continue;
    }
    for (int j = 1; j < c.dim; ++j) {
      const double plus = edge[2 * (j - 1)], minus = edge[2 * (j - 1) + 1];
      lambda[0] += plus + minus;
      lambda[j] = RowFriction(c, j) * (plus - minus);
    }
  }
}

bool NewtonSolver::Linearize(const Model& m, Data& d, const SolverOptions& options, const double* v,
                             double* residual, bool factor) {
  const TreeSparseLayout& layout = d.mass_layout;
  for (int j = 0; j < m.nsubsystem; ++j) {
    const int begin = m.subsystem_dof_adr[j];
    TreeSparseMultiplyRange(layout, begin, begin + m.subsystem_dof_num[j], d.qA.data(), v,
                            residual);
  }
  for (int i = 0; i < m.nv; ++i) residual[i] -= d.solver_rhs[i];
  const Islands& islands = d.islands;
  const int num = islands.num;
  if (num > 0) Prepare(m, d, options);
  // The groups: the islands, then the trees no constraint reaches (H = A there).
  group_dof_adr_.assign(1, 0);
  group_dof_.clear();
  group_owner_.clear();
  for (int k = 0; k < num; ++k) {
    const int* global = global_dof_.data() + island_dof_adr_[k];
    group_dof_.insert(group_dof_.end(), global,
                      global + island_dof_adr_[k + 1] - island_dof_adr_[k]);
    group_dof_adr_.push_back(static_cast<int>(group_dof_.size()));
    group_owner_.push_back(k);
  }
  for (int j = 0; j < m.nsubsystem; ++j) {
    if (num > 0 && islands.subsystem_island[j] >= 0) continue;
    for (int i = 0; i < m.subsystem_dof_num[j]; ++i)
      group_dof_.push_back(m.subsystem_dof_adr[j] + i);
    group_dof_adr_.push_back(static_cast<int>(group_dof_.size()));
    group_owner_.push_back(-1 - j);
  }
  const int groups = static_cast<int>(group_owner_.size());
  linear_adr_.assign(groups + 1, 0);
  for (int g = 0; g < groups; ++g) {
    const size_t n = group_dof_adr_[g + 1] - group_dof_adr_[g];
    linear_adr_[g + 1] = linear_adr_[g] + (factor ? n * n : 0);
  }
  if (linear_.size() < linear_adr_[groups]) linear_.resize(linear_adr_[groups]);
  for (int g = 0; g < groups; ++g) {
    const int n = group_dof_adr_[g + 1] - group_dof_adr_[g];
    const int* global = group_dof_.data() + group_dof_adr_[g];
    const int k = group_owner_[g];
    if (k >= 0) {  // an island: g = A v - b - J^T gamma
      const int dof0 = island_dof_adr_[k];
      BuildRows(m, d, options, k);
      double* local = velocity_.data() + dof0;
      for (int i = 0; i < n; ++i) {
        local[i] = v[global[i]];
        rhs_[dof0 + i] = d.solver_rhs[global[i]];
        product_[dof0 + i] = residual[global[i]] + rhs_[dof0 + i];  // A v
      }
      RowProducts(d, k, local, row_y_.data());
      double* gradient = gradient_.data() + dof0;
      EvaluateRows(d, k, local, gradient);
      for (int i = 0; i < n; ++i) residual[global[i]] = gradient[i];
    }
    if (!factor) continue;
    // H = A + (an island's) sum over quadratic rows of D_r J_r^T J_r + sum over acting cones of
    // J_c^T G J_c, dense over the group's dofs (A's entries pair a dof with its ancestors).
    DenseMap hessian(linear_.data() + linear_adr_[g], n, n);
    hessian.setZero();
    const int first = global[0];  // a tree's dofs are contiguous
    for (int i = 0; i < n; ++i) {
      const int dof = global[i];
      for (int t = 0; t < layout.row_nnz[dof]; ++t) {
        const int other = layout.column[layout.row_adr[dof] + t];
        const int column = k >= 0 ? local_dof_[other] : other - first;
        hessian(i, column) = hessian(column, i) = d.qA[layout.row_adr[dof] + t];
      }
    }
    if (k >= 0) {
      const size_t entry0 = island_entry_adr_[k];
      const int row0 = island_row_adr_[k], row_end = row0 + island_row_num_[k];
      for (int r = row0; r < row_end; ++r) {
        if (kind_[r] == NewtonRowKind::kConeTail || !quadratic_[r]) continue;
        const int* dofs = entry_dof_.data() + entry0 + row_entry_adr_[r];
        const int count = row_entry_num_[r];
        auto row = [&](int j) { return entry_value_.data() + entry0 + row_entry_adr_[r + j]; };
        const bool cone = kind_[r] == NewtonRowKind::kCone;
        const int dim = cone ? cone_dim_[r] : 1;
        const bool full = cone && quadratic_[r] == 2;  // a cone's G in full, else diag(D)
        for (int a = 0; a < count; ++a) {
          for (int b = 0; b < count; ++b) {
            double sum = 0;
            for (int j = 0; j < dim; ++j) {
              if (!full) {
                sum += row(j)[a] * row_d_[r + j] * row(j)[b];
                continue;
              }
              for (int l = 0; l < dim; ++l) {
                sum += row(j)[a] * cone_hessian_[36 * static_cast<size_t>(r) + j + l * dim] *
                       row(l)[b];
              }
            }
            hessian(dofs[a], dofs[b]) += sum;
          }
        }
      }
    }
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> cholesky(hessian);
    if (cholesky.info() != Eigen::Success) return false;
    // H^{-1} = L^{-T} L^{-1}, kept explicit: the gradients apply it to many columns at once, a
    // matrix product where two substitutions per column would be scalar work.
    if (inverse_.size() < static_cast<size_t>(n) * n) inverse_.resize(static_cast<size_t>(n) * n);
    DenseMap lower_inverse(inverse_.data(), n, n);
    lower_inverse.setZero();
    for (int j = 0; j < n; ++j) {
      lower_inverse(j, j) = 1 / hessian(j, j);
      for (int i = j + 1; i < n; ++i) {
        double sum = 0;
        for (int l = j; l < i; ++l) sum += hessian(i, l) * lower_inverse(l, j);
        lower_inverse(i, j) = -sum / hessian(i, i);
      }
    }
    hessian.noalias() = lower_inverse.transpose() * lower_inverse;
  }
  return true;
}

bool NewtonSolver::AddLaggedVelocityTerms(const Data& d, const SolverOptions& options,
                                          double* dg_dv) const {
  if (type_ != SolverType::kIcfLagged) return true;  // no gamma_n0 elsewhere
  if (options.icf.regularized) return false;
  const int nv = static_cast<int>(d.qvel.size());
  for (int k = 0; k < d.islands.num; ++k) {
    const int* global = global_dof_.data() + island_dof_adr_[k];
    const size_t entry0 = island_entry_adr_[k];
    const int row0 = island_row_adr_[k], row_end = row0 + island_row_num_[k];
    for (int r = row0; r < row_end; ++r) {
      if (kind_[r] != NewtonRowKind::kCone || cone_dim_[r] < 3) continue;
      const IcfContact& c = icf_contact_[r];
      if (!(c.friction_impulse > 0)) continue;
      // d gamma_n0 / d v_n0 over gamma_n0, times gamma_t: the rank-1 term J_t^T gamma_t s J_n.
      const double slope = -c.dt * c.stiffness * (-c.phi0) * c.dissipation / c.friction_impulse;
      const int* dofs = entry_dof_.data() + entry0 + row_entry_adr_[r];
      const double* normal = entry_value_.data() + entry0 + row_entry_adr_[r];
      const double* t1 = entry_value_.data() + entry0 + row_entry_adr_[r + 1];
      const double* t2 = entry_value_.data() + entry0 + row_entry_adr_[r + 2];
      for (int a = 0; a < row_entry_num_[r]; ++a) {
        const double weight = -(t1[a] * impulse_[r + 1] + t2[a] * impulse_[r + 2]) * slope;
        if (weight == 0) continue;
        double* row = dg_dv + static_cast<size_t>(global[dofs[a]]) * nv;
        for (int b = 0; b < row_entry_num_[r]; ++b) row[global[dofs[b]]] += weight * normal[b];
      }
    }
  }
  return true;
}

void NewtonSolver::SolveLinearized(const Model& /*m*/, const Data& /*d*/, double* x) {
  const int groups = static_cast<int>(group_owner_.size());
  for (int g = 0; g < groups; ++g) {
    const int n = group_dof_adr_[g + 1] - group_dof_adr_[g];
    const int* global = group_dof_.data() + group_dof_adr_[g];
    const DenseMap inverse(linear_.data() + linear_adr_[g], n, n);
    if (block_.size() < 2 * static_cast<size_t>(n)) block_.resize(2 * static_cast<size_t>(n));
    VectorMap in(block_.data(), n), out(block_.data() + n, n);
    for (int i = 0; i < n; ++i) in[i] = x[global[i]];
    out.noalias() = inverse * in;
    for (int i = 0; i < n; ++i) x[global[i]] = out[i];
  }
}

void NewtonSolver::SolveLinearizedColumns(const Model& /*m*/, const Data& d, double* x, int columns,
                                          const int* column_subsystem) {
  const size_t width = static_cast<size_t>(columns);
  const int groups = static_cast<int>(group_owner_.size());
  for (int g = 0; g < groups; ++g) {
    const int n = group_dof_adr_[g + 1] - group_dof_adr_[g];
    const int* global = group_dof_.data() + group_dof_adr_[g];
    const int owner = group_owner_[g];
    // The group solves only the columns with a nonzero in its rows (H^{-1} maps a zero right-hand
    // side to zero; most columns of a scene of many robots are zero outside one robot's rows): a
    // column whose subsystem is known is active iff the group holds it, the others are scanned.
    active_.clear();
    for (size_t c = 0; c < width; ++c) {
      const int s = column_subsystem != nullptr ? column_subsystem[c] : -1;
      bool active = false;
      if (s >= 0) {
        active = owner >= 0 ? d.islands.subsystem_island[s] == owner : s == -1 - owner;
      } else {
        for (int i = 0; i < n && !active; ++i) active = x[global[i] * width + c] != 0;
      }
      if (active) active_.push_back(static_cast<int>(c));
    }
    const auto count = static_cast<Eigen::Index>(active_.size());
    if (count == 0) continue;
    if (block_.size() < 2 * n * active_.size()) block_.resize(2 * n * active_.size());
    DenseMap in(block_.data(), n, count), out(block_.data() + n * count, n, count);
    for (int i = 0; i < n; ++i) {
      for (Eigen::Index a = 0; a < count; ++a) in(i, a) = x[global[i] * width + active_[a]];
    }
    out.noalias() = DenseMap(linear_.data() + linear_adr_[g], n, n) * in;
    for (int i = 0; i < n; ++i) {
      for (Eigen::Index a = 0; a < count; ++a) x[global[i] * width + active_[a]] = out(i, a);
    }
  }
}

void NewtonSolver::SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                                double deadline_us) {
  IslandSolver::SolveIslands(m, d, options, deadline_us);
  statistics_ = NewtonStatistics{};
  for (int k = 0; k < d.islands.num; ++k) {
    statistics_.newton_iterations += newton_iterations_[k];
    statistics_.line_search_evaluations += line_search_evaluations_[k];
    statistics_.factorizations += factorizations_[k];
    statistics_.warm_starts += warm_[k];
    statistics_.tree_factorizations += tree_factorizations_[k];
    statistics_.rank_updates += rank_updates_[k];
  }
}

void NewtonSolver::AddFigures(SolverStatistics* stats) const {
  stats->AddFigure("newton_iterations", statistics_.newton_iterations);
  stats->AddFigure("line_search_evaluations", statistics_.line_search_evaluations);
  stats->AddFigure("factorizations", statistics_.factorizations);
  stats->AddFigure("tree_factorizations", statistics_.tree_factorizations);
  stats->AddFigure("rank_updates", statistics_.rank_updates);
  stats->AddFigure("warm_starts", statistics_.warm_starts);
}

}  // namespace alsim
