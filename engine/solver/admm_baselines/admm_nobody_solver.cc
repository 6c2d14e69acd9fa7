#include "engine/solver/admm_baselines/admm_nobody_solver.h"

#include <algorithm>
#include <cmath>

#include "engine/core/parallel.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/island_schedule.h"

namespace alsim {

AdmmNoBodySolver::AdmmNoBodySolver(const Model& m)
    : IslandSolver(m),
      penalty_(m),
      force_(m.nv, 0.0),
      subsystem_dual_(m.nsubsystem, 0.0),
      factored_(m.nsubsystem, 0) {
  mass_.reserve(m.nsubsystem);
  gram_.reserve(m.nsubsystem);
  llt_.reserve(m.nsubsystem);
  for (int j = 0; j < m.nsubsystem; ++j) {
    const int n = m.subsystem_dof_num[j];
    mass_.emplace_back(n, n);
    gram_.emplace_back(n, n);
    llt_.emplace_back(n);
  }
  const size_t max_constraints = MaxConstraints(m);
  jacobian_.Reserve(m, max_constraints);
  slack_num_.reserve(max_constraints);
  slack_end_.reserve(MaxBlocks(m));
  slack_adr_.reserve(max_constraints);
  penalty_scale_.reserve(max_constraints);
  penalty_terms_.reserve(max_constraints);
  slack_.reserve(3 * MaxBlocks(m));
  slack_change_.reserve(3 * MaxBlocks(m));
  primal_.reserve(max_constraints);
}

template <class Visit>
void AdmmNoBodySolver::ForEachSlack(const Model& m, const Data& d, int subsystem,
                                    const Visit& visit) const {
  const int j = subsystem;
  const ConstraintSet& set = d.constraints;
  const int dof_begin = m.subsystem_dof_adr[j];
  const int dof_end = dof_begin + m.subsystem_dof_num[j];
  const int block_begin = subsystem_blocks_.adr[j], block_end = subsystem_blocks_.adr[j + 1];
  int previous = -1;
  for (int k = block_begin; k < block_end; ++k) {
    // A constraint's blocks in j are adjacent: one slack for all of them.
    const int c = set.blocks[subsystem_blocks_.blocks[k]].constraint;
    if (c == previous) continue;
    previous = c;
    int begin, end;
    jacobian_.EntriesInDofs(c, dof_begin, dof_end, &begin, &end);
    const int* slack_end = slack_end_.data() + set.constraints[c].block_adr;
    int slack = 0;
    while (slack + 1 < slack_num_[c] && slack_end[slack] <= begin) ++slack;
    visit(c, slack, begin, end);
  }
}

void AdmmNoBodySolver::Assemble(const Model& m, const Data& d, int subsystem) {
  const int j = subsystem;
  const ConstraintSet& set = d.constraints;
  const TreeSparseLayout& layout = d.mass_layout;
  const int dof_begin = m.subsystem_dof_adr[j];
  const int dof_end = dof_begin + m.subsystem_dof_num[j];
  Eigen::MatrixXd& mass = mass_[j];
  Eigen::MatrixXd& gram = gram_[j];
  mass.setZero();
  gram.setZero();
  for (int i = dof_begin; i < dof_end; ++i) {
    const double* row = d.qA.data() + layout.row_adr[i];
    int k = 0;
    for (int p = i; p >= 0; p = layout.parent[p], ++k) {
      mass(i - dof_begin, p - dof_begin) = row[k];
      mass(p - dof_begin, i - dof_begin) = row[k];
    }
  }
  // s_i J_ij^T J_ij, J_ij the sum of the constraint's blocks in j: dense, cross terms included.
  ForEachSlack(m, d, j, [&](int c, int /*slack*/, int begin, int end) {
    const int dim = set.constraints[c].dim;
    const double scale = penalty_scale_[c];
    for (int a = begin; a < end; ++a) {
      for (int b = begin; b < end; ++b) {
        double product = 0;
        for (int r = 0; r < dim; ++r) product += jacobian_.At(a, r) * jacobian_.At(b, r);
        gram(jacobian_.dof[a] - dof_begin, jacobian_.dof[b] - dof_begin) += scale * product;
      }
    }
  });
}

bool AdmmNoBodySolver::Refactor(int subsystem, double beta) {
  Eigen::LLT<Eigen::MatrixXd>& llt = llt_[subsystem];
  llt.compute(mass_[subsystem] + beta * gram_[subsystem]);
  return llt.info() == Eigen::Success;
}

void AdmmNoBodySolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                                   double deadline_us, int island) {
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  IslandSolveResult& result = island_results_[island];
  result = IslandSolveResult{};
  const int* subsystems = islands.subsystems.data() + islands.subsystem_adr[island];
  const int num_subsystems = islands.subsystem_adr[island + 1] - islands.subsystem_adr[island];
  const int* constraints = islands.constraints.data() + islands.constraint_adr[island];
  const int num_constraints = islands.constraint_adr[island + 1] - islands.constraint_adr[island];
  auto for_subsystems = [&](const auto& body) {
    IslandParallelFor(num_subsystems, kIslandParallelSubsystems, kIslandSubsystemsPerTask,
                      [&](int s) { body(subsystems[s]); });
  };
  auto for_constraints = [&](const auto& body) {
    IslandParallelFor(num_constraints, kIslandParallelConstraints, kIslandConstraintsPerTask,
                      [&](int s) { body(constraints[s]); });
  };
  auto slack_of = [&](int c, int slack) { return slack_adr_[c] + slack * set.constraints[c].dim; };
  // Slack s of constraint c spans the Jacobian entries [slack_begin(c, s), slack_end(c, s)).
  auto slack_end = [&](int c, int slack) {
    return slack_end_[set.constraints[c].block_adr + slack];
  };
  auto slack_begin = [&](int c, int slack) {
    return slack == 0 ? jacobian_.entry_adr[c] : slack_end(c, slack - 1);
  };
  // J_ij x_j over the entries [begin, end) (dim values), x indexed by global dof.
  auto apply = [&](int dim, int begin, int end, const double* x, double* out) {
    for (int r = 0; r < dim; ++r) out[r] = 0;
    for (int e = begin; e < end; ++e) {
      for (int r = 0; r < dim; ++r) out[r] += jacobian_.At(e, r) * x[jacobian_.dof[e]];
    }
  };
  // x (global dofs) += J_ij^T y over the entries [begin, end).
  auto scatter = [&](int dim, int begin, int end, const double* y, double* x) {
    for (int e = begin; e < end; ++e) {
      double sum = 0;
      for (int r = 0; r < dim; ++r) sum += jacobian_.At(e, r) * y[r];
      x[jacobian_.dof[e]] += sum;
    }
  };

  // Setup: Jacobian rows and slack runs (one per subsystem, in dof order), beta0, penalties, the
  // dense matrices and factors.
  for_constraints([&](int c) {
    jacobian_.Fill(m, d, c);
    const int first = jacobian_.entry_adr[c], last = first + jacobian_.entry_num[c];
    int* ends = slack_end_.data() + set.constraints[c].block_adr;
    int count = 0;
    for (int e = first; e < last;) {
      const int subsystem = m.body_subsystem[m.dof_body[jacobian_.dof[e]]];
      const int end = m.subsystem_dof_adr[subsystem] + m.subsystem_dof_num[subsystem];
      while (e < last && jacobian_.dof[e] < end) ++e;
      ends[count++] = e;
    }
    slack_num_[c] = count;
  });
  double beta = penalty_.InitialBeta(m, d, d.islands, island);
  result.beta0 = beta;
  // Fresh Delassus traces every step (SolverOptions::delassus_refresh_steps is SubADMM's): with
  // kept ones, No Sub's mean Sec. VII residual at Table III's settings was far worse
  // (BENCHMARKS.md, "ADMM ablations"), and at 100 iterations the traces' cost does not matter.
  penalty_.Scales(m, d, d.islands, island, beta, options.admm.penalty_scaling,
                  /*refresh_steps=*/1, penalty_scale_.data());
  auto update_penalty_terms = [&] {
    for (int s = 0; s < num_constraints; ++s) {
      const int c = constraints[s];
      penalty_terms_[c] =
          MakePenaltyTerms(set.constraints[c], beta * penalty_scale_[c], slack_num_[c]);
    }
  };
  update_penalty_terms();
  // A_j + beta sum_i s_i J_ij^T J_ij is positive definite when A_j is; a failed factorization
  // means a broken input (NaN): the island then keeps v_free and is reported unconverged.
  auto factor_all = [&] {
    for_subsystems([&](int j) { factored_[j] = Refactor(j, beta) ? 1 : 0; });
    for (int s = 0; s < num_subsystems; ++s) {
      if (!factored_[subsystems[s]]) return false;
    }
    return true;
  };
  auto keep_free_velocity = [&] {
    for (int s = 0; s < num_subsystems; ++s) {
      const int begin = m.subsystem_dof_adr[subsystems[s]];
      const int end = begin + m.subsystem_dof_num[subsystems[s]];
      std::copy(d.v_free.begin() + begin, d.v_free.begin() + end, d.v_hat.begin() + begin);
    }
    result.beta = beta;
  };
  for_subsystems([&](int j) { Assemble(m, d, j); });
  if (!factor_all()) return keep_free_velocity();
  // z^0_ij = J_ij v_k [OURS, as SubADMM].
  for_constraints([&](int c) {
    const int dim = set.constraints[c].dim;
    for (int s = 0; s < slack_num_[c]; ++s) {
      apply(dim, slack_begin(c, s), slack_end(c, s), d.qvel.data(), slack_.data() + slack_of(c, s));
    }
  });

  const bool factored = IterateAdmmIsland(
      options, deadline_us, &beta, &result, nullptr,
      [&](int /*iteration*/, double penalty) {
        // Eq. (34) per subsystem, with u = -lambda.
        for_subsystems([&](int j) {
          const int begin = m.subsystem_dof_adr[j], n = m.subsystem_dof_num[j];
          for (int i = begin; i < begin + n; ++i) d.v_hat[i] = d.solver_rhs[i];
          ForEachSlack(m, d, j, [&](int c, int slack, int entry_begin, int entry_end) {
            const Constraint& constraint = set.constraints[c];
            const double beta_i = penalty * penalty_scale_[c];
            const double* z = slack_.data() + slack_of(c, slack);
            const double* lambda = set.lambda.data() + constraint.row_adr;
            double y[kMaxConstraintDim];
            for (int r = 0; r < constraint.dim; ++r) y[r] = beta_i * z[r] + lambda[r];
            scatter(constraint.dim, entry_begin, entry_end, y, d.v_hat.data());
          });
          Eigen::Map<Eigen::VectorXd> v(d.v_hat.data() + begin, n);
          llt_[j].solveInPlace(v);
        });
      },
      [&](int /*iteration*/) {
        // Eqs. (35)-(39) per constraint with |Z_i| = its number of subsystems.
        for_constraints([&](int c) {
          const Constraint& constraint = set.constraints[c];
          const int blocks = slack_num_[c];
          double slack_velocity[kMaxConstraintBlocks][6];
          double* slack[kMaxConstraintBlocks];
          for (int s = 0; s < blocks; ++s) {
            apply(constraint.dim, slack_begin(c, s), slack_end(c, s), d.v_hat.data(),
                  slack_velocity[s]);
            slack[s] = slack_.data() + slack_of(c, s);
          }
          double change[kMaxConstraintBlocks][6];
          const double beta_i = beta * penalty_scale_[c];
          primal_[c] = RelaxedConstraintUpdate(constraint, blocks, slack_velocity, slack,
                                               set.bias.data() + constraint.row_adr,
                                               set.lambda.data() + constraint.row_adr,
                                               penalty_terms_[c], options.admm.relaxation, change);
          // Stored as beta_i (z_ij - z_ij') for the dual residual below.
          for (int s = 0; s < blocks; ++s) {
            for (int r = 0; r < constraint.dim; ++r)
              slack_change_[slack_of(c, s) + r] = -beta_i * change[s][r];
          }
        });
        double primal = 0;
        for (int s = 0; s < num_constraints; ++s)
          primal = std::max(primal, primal_[constraints[s]]);
        return std::sqrt(primal);  // primal_ holds squares
      },
      [&](double /*penalty*/) {
        // Eq. (42): theta_p = max ||J_ij v_j - z_ij'||, theta_d = max_j ||sum_i J_ij^T beta_i (z_ij
        // - z_ij')||.
        for_subsystems([&](int j) {
          const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
          std::fill(force_.begin() + begin, force_.begin() + end, 0.0);
          ForEachSlack(m, d, j, [&](int c, int slack, int entry_begin, int entry_end) {
            scatter(set.constraints[c].dim, entry_begin, entry_end,
                    slack_change_.data() + slack_of(c, slack), force_.data());
          });
          double dual2 = 0;
          for (int i = begin; i < end; ++i) dual2 += force_[i] * force_[i];
          subsystem_dual_[j] = std::sqrt(dual2);
        });
        double dual = 0;
        for (int s = 0; s < num_subsystems; ++s)
          dual = std::max(dual, subsystem_dual_[subsystems[s]]);
        return dual;
      },
      [&](double /*penalty*/) {  // eq. (43) changed beta: refactor every subsystem; lambda, z kept
        update_penalty_terms();
        return factor_all();
      },
      [](int, bool) {});
  if (!factored) return keep_free_velocity();
  result.beta = beta;
}

void AdmmNoBodySolver::Prepare(const Model& m, Data& d, const SolverOptions& /*options*/) {
  const ConstraintSet& set = d.constraints;
  jacobian_.Layout(m, d);
  penalty_.CountBlocks(m, d);
  const size_t num_constraints = set.constraints.size();
  if (penalty_scale_.size() < num_constraints) {
    penalty_scale_.resize(num_constraints);
    penalty_terms_.resize(num_constraints);
    slack_num_.resize(num_constraints);
    slack_adr_.resize(num_constraints);
    primal_.resize(num_constraints);
  }
  if (slack_end_.size() < set.blocks.size()) slack_end_.resize(set.blocks.size());
  int slack_values = 0;  // room for as many slacks as blocks, each of dim values
  for (size_t c = 0; c < num_constraints; ++c) {
    slack_adr_[c] = slack_values;
    slack_values += set.constraints[c].block_num * set.constraints[c].dim;
  }
  if (slack_.size() < static_cast<size_t>(slack_values)) {
    slack_.resize(slack_values);
    slack_change_.resize(slack_values);
  }
}

}  // namespace alsim
