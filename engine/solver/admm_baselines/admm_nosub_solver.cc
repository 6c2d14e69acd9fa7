#include "engine/solver/admm_baselines/admm_nosub_solver.h"

#include <algorithm>
#include <cmath>

#include "engine/core/parallel.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/island_schedule.h"

namespace alsim {

AdmmNoSubSolver::AdmmNoSubSolver(const Model& m) : IslandSolver(m), penalty_(m) {
  const size_t max_constraints = MaxConstraints(m);
  jacobian_.Reserve(m, max_constraints);
  pattern_.Reserve(m);
  velocity_.reserve(m.nv);
  force_.reserve(m.nv);
  penalty_scale_.reserve(max_constraints);
  penalty_terms_.reserve(max_constraints);
  slack_.reserve(3 * max_constraints);
  slack_change_.reserve(3 * max_constraints);
  primal_.reserve(max_constraints);
  factors_.reserve(m.nsubsystem);
  system_results_.reserve(1);
  system_.subsystems.reserve(m.nsubsystem);
  system_.constraints.reserve(max_constraints);
  system_.subsystem_adr.reserve(2);
  system_.constraint_adr.reserve(2);
}

long AdmmNoSubSolver::analyses() const {
  long total = 0;
  for (const auto& factor : factors_) total += factor->analyses();
  return total;
}

// The pattern and A's values (IslandSparsePattern), then the values of J^T S J on it.
void AdmmNoSubSolver::Assemble(const Model& m, const Data& d, int island) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = system_;
  pattern_.Build(m, d, islands, jacobian_, island);
  const int* local_dof = pattern_.local_dofs();
  double* gram = gram_values_.data() + pattern_.nnz_adr(island);
  std::fill(gram, gram + pattern_.nnz(island), 0.0);
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int c = islands.constraints[s];
    const int dim = set.constraints[c].dim;
    const double scale = penalty_scale_[c];
    const int first = jacobian_.entry_adr[c], last = first + jacobian_.entry_num[c];
    for (int b = first; b < last; ++b) {
      for (int a = first; a <= b; ++a) {
        double product = 0;
        for (int r = 0; r < dim; ++r) product += jacobian_.At(a, r) * jacobian_.At(b, r);
        const int column = local_dof[jacobian_.dof[b]], row = local_dof[jacobian_.dof[a]];
        gram[pattern_.Position(island, column, row)] += scale * product;
      }
    }
  }
  factors_[island]->SetPattern(pattern_.dofs(island), pattern_.column_start(island),
                               pattern_.row_index(island));
}

bool AdmmNoSubSolver::Refactor(int island, double beta) {
  const double* mass = pattern_.mass(island);
  const double* gram = gram_values_.data() + pattern_.nnz_adr(island);
  double* values = factors_[island]->values();
  for (int k = 0; k < pattern_.nnz(island); ++k) values[k] = mass[k] + beta * gram[k];
  return factors_[island]->Factor();
}

void AdmmNoSubSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                                  double deadline_us, int island) {
  ConstraintSet& set = d.constraints;
  const Islands& islands = system_;
  IslandSolveResult& result = system_results_[island];
  result = IslandSolveResult{};
  const int* constraints = islands.constraints.data() + islands.constraint_adr[island];
  const int num_constraints = islands.constraint_adr[island + 1] - islands.constraint_adr[island];
  const int n = pattern_.dofs(island);
  const int* local_dof = pattern_.local_dofs();  // numbered by Assemble, below
  double* velocity = velocity_.data() + pattern_.dof_adr(island);
  double* force = force_.data() + pattern_.dof_adr(island);
  auto for_constraints = [&](const auto& body) {
    IslandParallelFor(num_constraints, kIslandParallelConstraints, kIslandConstraintsPerTask,
                      [&](int s) { body(constraints[s]); });
  };
  // J_i x (dim values) for x over the island's dofs.
  auto apply = [&](int c, const double* x, double* out) {
    const int dim = set.constraints[c].dim;
    for (int r = 0; r < dim; ++r) out[r] = 0;
    for (int e = jacobian_.entry_adr[c]; e < jacobian_.entry_adr[c] + jacobian_.entry_num[c]; ++e) {
      const double xe = x[local_dof[jacobian_.dof[e]]];
      for (int r = 0; r < dim; ++r) out[r] += jacobian_.At(e, r) * xe;
    }
  };
  // out (island dofs) += sum_i J_i^T y_i with y_i = value(i).
  auto gather = [&](const auto& value, double* out) {
    for (int s = 0; s < num_constraints; ++s) {
      const int c = constraints[s];
      const int dim = set.constraints[c].dim;
      double y[kMaxConstraintDim];
      value(c, y);
      for (int e = jacobian_.entry_adr[c]; e < jacobian_.entry_adr[c] + jacobian_.entry_num[c];
           ++e) {
        double sum = 0;
        for (int r = 0; r < dim; ++r) sum += jacobian_.At(e, r) * y[r];
        out[local_dof[jacobian_.dof[e]]] += sum;
      }
    }
  };

  // Setup: Jacobian rows, beta0 and penalties, the local dofs, the matrix and its factor.
  for (int s = 0; s < num_constraints; ++s) jacobian_.Fill(m, d, constraints[s]);
  double beta = penalty_.InitialBeta(m, d, system_, island);
  result.beta0 = beta;
  // Fresh Delassus traces every step (SolverOptions::delassus_refresh_steps is SubADMM's): with
  // kept ones, No Sub's mean Sec. VII residual at Table III's settings was far worse
  // (BENCHMARKS.md, "ADMM ablations"), and at 100 iterations the traces' cost does not matter.
  penalty_.Scales(m, d, system_, island, beta, options.admm.penalty_scaling,
                  /*refresh_steps=*/1, penalty_scale_.data());
  auto update_penalty_terms = [&] {
    for (int s = 0; s < num_constraints; ++s) {
      const int c = constraints[s];
      penalty_terms_[c] = MakePenaltyTerms(set.constraints[c], beta * penalty_scale_[c], 1);
    }
  };
  update_penalty_terms();
  Assemble(m, d, island);
  // A + beta J^T S J is positive definite when A is; a failed factorization means a broken input
  // (NaN): the island then keeps v_free and is reported unconverged.
  auto keep_free_velocity = [&] {
    for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
      const int j = islands.subsystems[s];
      const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
      std::copy(d.v_free.begin() + begin, d.v_free.begin() + end, d.v_hat.begin() + begin);
    }
    result.beta = beta;
  };
  if (!Refactor(island, beta)) return keep_free_velocity();
  // z^0_i = J_i v_k [OURS, as SubADMM]; lambda^0 is the warm start already in lambda.
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j]; ++i) {
      velocity[local_dof[i]] = d.qvel[i];
    }
  }
  for_constraints([&](int c) { apply(c, velocity, slack_.data() + set.constraints[c].row_adr); });

  const bool factored = IterateAdmmIsland(
      options, deadline_us, &beta, &result, nullptr,
      [&](int /*iteration*/, double /*penalty*/) {
        // Eq. (28): (A + beta J^T S J) v = b + J^T (beta S z + lambda).
        for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
          const int j = islands.subsystems[s];
          for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j];
               ++i) {
            velocity[local_dof[i]] = d.solver_rhs[i];
          }
        }
        gather(
            [&](int c, double* y) {
              const Constraint& constraint = set.constraints[c];
              const double beta_i = beta * penalty_scale_[c];
              for (int r = 0; r < constraint.dim; ++r) {
                y[r] = beta_i * slack_[constraint.row_adr + r] + set.lambda[constraint.row_adr + r];
              }
            },
            velocity);
        factors_[island]->Solve(velocity);
      },
      [&](int /*iteration*/) {
        // Eqs. (36)-(39) with |Z_i| = 1: impulses and slacks per constraint.
        for_constraints([&](int c) {
          const Constraint& constraint = set.constraints[c];
          double constraint_velocity[1][6];
          apply(c, velocity, constraint_velocity[0]);
          double* slack[1] = {slack_.data() + constraint.row_adr};
          double change[1][6];
          const double beta_i = beta * penalty_scale_[c];
          primal_[c] = RelaxedConstraintUpdate(constraint, 1, constraint_velocity, slack,
                                               set.bias.data() + constraint.row_adr,
                                               set.lambda.data() + constraint.row_adr,
                                               penalty_terms_[c], options.admm.relaxation, change);
          // Stored as beta_i (z_i - z_i') for the dual residual below.
          for (int r = 0; r < constraint.dim; ++r)
            slack_change_[constraint.row_adr + r] = -beta_i * change[0][r];
        });
        double primal = 0;
        for (int s = 0; s < num_constraints; ++s)
          primal = std::max(primal, primal_[constraints[s]]);
        return std::sqrt(primal);  // primal_ holds squares
      },
      [&](double /*penalty*/) {
        // Eq. (42): theta_p = max_i ||J_i v - z_i'||; theta_d = max_j ||sum_i J_ij^T beta_i (z_i -
        // z_i')|| (= ||A_j v_j - b_j - sum_i J_ij^T lambda_i'||).
        std::fill(force, force + n, 0.0);
        gather(
            [&](int c, double* y) {
              const Constraint& constraint = set.constraints[c];
              for (int r = 0; r < constraint.dim; ++r) {
                y[r] = slack_change_[constraint.row_adr + r];
              }
            },
            force);
        double dual = 0;
        for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
          const int j = islands.subsystems[s];
          const int begin = local_dof[m.subsystem_dof_adr[j]];
          double dual2 = 0;
          for (int i = begin; i < begin + m.subsystem_dof_num[j]; ++i) dual2 += force[i] * force[i];
          dual = std::max(dual, std::sqrt(dual2));
        }
        return dual;
      },
      [&](double /*penalty*/) {  // eq. (43) changed beta: refactor (numeric only); lambda, z kept
        update_penalty_terms();
        return Refactor(island, beta);
      },
      [](int, bool) {});
  if (!factored) return keep_free_velocity();
  result.beta = beta;

  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j]; ++i) {
      d.v_hat[i] = velocity[local_dof[i]];
    }
  }
}

void AdmmNoSubSolver::Prepare(const Model& m, Data& d, const SolverOptions& /*options*/) {
  const ConstraintSet& set = d.constraints;
  // One system for the whole scene: every island's subsystems and constraints in one group.
  system_.num = d.islands.num > 0 ? 1 : 0;
  system_.subsystems.assign(d.islands.subsystems.begin(),
                            d.islands.subsystems.begin() + d.islands.subsystem_adr[d.islands.num]);
  system_.constraints.assign(
      d.islands.constraints.begin(),
      d.islands.constraints.begin() + d.islands.constraint_adr[d.islands.num]);
  system_.subsystem_adr.assign({0, static_cast<int>(system_.subsystems.size())});
  system_.constraint_adr.assign({0, static_cast<int>(system_.constraints.size())});
  const Islands& islands = system_;
  jacobian_.Layout(m, d);
  penalty_.CountBlocks(m, d);

  // Per-island storage (sequential prefix sums): dofs, and room for the pattern's keys.
  const size_t num_constraints = set.constraints.size();
  if (penalty_scale_.size() < num_constraints) {
    penalty_scale_.resize(num_constraints);
    penalty_terms_.resize(num_constraints);
    primal_.resize(num_constraints);
  }
  if (slack_.size() < static_cast<size_t>(set.num_rows)) {
    slack_.resize(set.num_rows);
    slack_change_.resize(set.num_rows);
  }
  while (factors_.size() < static_cast<size_t>(islands.num)) {
    factors_.push_back(std::make_unique<CholmodLlt>());
  }
  pattern_.LayOut(m, d, islands, jacobian_);
  if (velocity_.size() < static_cast<size_t>(pattern_.total_dofs())) {
    velocity_.resize(pattern_.total_dofs());
    force_.resize(pattern_.total_dofs());
  }
  if (gram_values_.size() < pattern_.total_entries()) gram_values_.resize(pattern_.total_entries());
  system_results_.resize(islands.num);
}

// One system for the whole scene, solved on this thread (its factorization is CHOLMOD's and its
// constraint loops are parallel); every island of d.islands reports the system's iterations.
void AdmmNoSubSolver::SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                                   double deadline_us) {
  const Islands& islands = system_;
  for (int k = 0; k < islands.num; ++k) SolveIsland(m, d, options, deadline_us, k);
  // Every island took part in every iteration of the one system.
  island_results_.assign(d.islands.num, islands.num > 0 ? system_results_[0] : IslandSolveResult{});
  if (options.compute_residual) {
    for (int k = 0; k < d.islands.num; ++k) {
      island_results_[k].residual_squares =
          IslandResidualSquares(m, d, subsystem_blocks_, k, residual_);
    }
  }
}

}  // namespace alsim
