#include "engine/solver/pgs/pgs_solver.h"

#include <algorithm>
#include <cmath>

#include "engine/core/parallel.h"
#include "engine/dynamics/tree_ldl.h"
#include "engine/solver/impulse_update.h"

namespace alsim {

PgsSolver::PgsSolver(const Model& m) : column_(m.nv, 0.0), force_(m.nv, 0.0) {
  // As Data's constraint storage (engine/sim/data.cc): room for every ordinary step.
  const size_t max_constraints = 4 * static_cast<size_t>(m.ngeom) + 2 * m.njnt + m.nu;
  subsystem_blocks_.adr.reserve(m.nsubsystem + 1);
  subsystem_blocks_.cursor.reserve(m.nsubsystem + 1);
  subsystem_blocks_.blocks.reserve(2 * max_constraints);
  jacobian_.Reserve(m, max_constraints);
  local_row_.reserve(max_constraints);
  island_rows_.reserve(m.nsubsystem);
  island_row_adr_.reserve(m.nsubsystem);
  delassus_adr_.reserve(m.nsubsystem);
  free_velocity_.reserve(3 * max_constraints);
  impulse_.reserve(3 * max_constraints);
  island_results_.reserve(m.nsubsystem);
  residual_.Resize(m, static_cast<int>(3 * max_constraints));
}

// W = sum_j J_j A_j^{-1} J_j^T: for each subsystem j of the island and each row of a constraint
// touching j, one tree-LDL^T solve on j's dofs gives the column A_j^{-1} J_j^T e_r, whose products
// with the rows of the constraints touching j fill W's entries between them.
void PgsSolver::BuildDelassus(const Model& m, const Data& d, int island) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  const int rows = island_rows_[island];
  double* delassus = delassus_.data() + delassus_adr_[island];
  std::fill(delassus, delassus + static_cast<size_t>(rows) * rows, 0.0);
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    const int j = islands.subsystems[s];
    const int dof_begin = m.subsystem_dof_adr[j];
    const int dof_end = dof_begin + m.subsystem_dof_num[j];
    const int block_begin = subsystem_blocks_.adr[j], block_end = subsystem_blocks_.adr[j + 1];
    // The constraints touching j are those of its blocks; a constraint's two blocks are adjacent.
    auto constraint_of = [&](int k) { return set.blocks[subsystem_blocks_.blocks[k]].constraint; };
    for (int k = block_begin; k < block_end; ++k) {
      const int i = constraint_of(k);
      if (k > block_begin && constraint_of(k - 1) == i) continue;
      const Constraint& ci = set.constraints[i];
      int i_begin, i_end;
      jacobian_.EntriesInDofs(i, dof_begin, dof_end, &i_begin, &i_end);
      for (int r = 0; r < ci.dim; ++r) {
        std::fill(column_.begin() + dof_begin, column_.begin() + dof_end, 0.0);
        for (int e = i_begin; e < i_end; ++e) column_[jacobian_.dof[e]] = jacobian_.value[e][r];
        TreeLdlSolveRange(d.mass_layout, dof_begin, dof_end, d.qA_factor.data(), column_.data());
        const int column = local_row_[i] + r;
        for (int q = block_begin; q < block_end; ++q) {
          const int k2 = constraint_of(q);
          if (q > block_begin && constraint_of(q - 1) == k2) continue;
          const Constraint& ck = set.constraints[k2];
          int k_begin, k_end;
          jacobian_.EntriesInDofs(k2, dof_begin, dof_end, &k_begin, &k_end);
          for (int sr = 0; sr < ck.dim; ++sr) {
            double sum = 0;
            for (int e = k_begin; e < k_end; ++e) {
              sum += jacobian_.value[e][sr] * column_[jacobian_.dof[e]];
            }
            delassus[static_cast<size_t>(local_row_[k2] + sr) * rows + column] += sum;
          }
        }
      }
    }
  }
}

double PgsSolver::Sweep(const Data& d, int island) {
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  const int rows = island_rows_[island];
  const double* delassus = delassus_.data() + delassus_adr_[island];
  const double* free_velocity = free_velocity_.data() + island_row_adr_[island];
  double* lambda = impulse_.data() + island_row_adr_[island];
  double largest_change = 0;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    const int row = local_row_[i];
    const double* bias = set.bias.data() + c.row_adr;
    // velocity = (W lambda + J v_free)_i with the newest impulses: J_i v_hat.
    double velocity[3] = {0, 0, 0};
    for (int r = 0; r < c.dim; ++r) {
      const double* w = delassus + static_cast<size_t>(row + r) * rows;
      double sum = free_velocity[row + r];
      for (int q = 0; q < rows; ++q) sum += w[q] * lambda[q];
      velocity[r] = sum;
    }
    auto diagonal = [&](int r) { return delassus[static_cast<size_t>(row + r) * rows + row + r]; };
    double* own = lambda + row;
    double updated[3] = {0, 0, 0};
    switch (c.type) {
      case ConstraintType::kContact: {
        // Rows (normal, t1, t2); D = diag(W_nn, w_t, w_t).
        const double normal_diagonal = diagonal(0);
        const double tangent_diagonal = 0.5 * (diagonal(1) + diagonal(2));
        if (normal_diagonal > 0 && tangent_diagonal > 0) {
          const Vec3 x(own[0] - (velocity[0] + bias[0]) / normal_diagonal,
                       own[1] - (velocity[1] + bias[1]) / tangent_diagonal,
                       own[2] - (velocity[2] + bias[2]) / tangent_diagonal);
          const Vec3 projected = StrictConeProjection(x, c.friction);
          updated[0] = projected[0];
          updated[1] = projected[1];
          updated[2] = projected[2];
        }
        break;
      }
      case ConstraintType::kLimit:
        if (diagonal(0) > 0) {
          updated[0] = std::max(0.0, own[0] - (velocity[0] + bias[0]) / diagonal(0));
        }
        break;
      case ConstraintType::kSoft: {
        // lambda = -k e - b J v_hat with J v_hat = rest + W_ii lambda (eq. 4), solved for lambda.
        const double rest = velocity[0] - diagonal(0) * own[0];
        const double value =
            -(c.soft_bias + c.soft_damping * rest) / (1.0 + c.soft_damping * diagonal(0));
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
      for (int r = 0; r < c.dim; ++r) sum += jacobian_.value[e][r] * lambda[r];
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
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  IslandSolveResult& result = island_results_[island];
  result = IslandSolveResult{};
  const int first = islands.constraint_adr[island], last = islands.constraint_adr[island + 1];
  for (int s = first; s < last; ++s) jacobian_.Fill(m, d, islands.constraints[s]);
  BuildDelassus(m, d, island);

  // J v_free per row, and the warm-start impulses.
  double* free_velocity = free_velocity_.data() + island_row_adr_[island];
  double* lambda = impulse_.data() + island_row_adr_[island];
  for (int s = first; s < last; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    const int row = local_row_[i];
    for (int r = 0; r < c.dim; ++r) {
      double sum = 0;
      for (int e = jacobian_.entry_adr[i]; e < jacobian_.entry_adr[i] + jacobian_.entry_num[i];
           ++e) {
        sum += jacobian_.value[e][r] * d.v_free[jacobian_.dof[e]];
      }
      free_velocity[row + r] = sum;
      lambda[row + r] = set.lambda[c.row_adr + r];
    }
  }

  while (true) {
    const double change = Sweep(d, island);
    ++result.iterations;
    if (change < options.tolerance) {
      result.converged = true;
      break;
    }
    if (result.iterations >= options.max_iterations) break;
    if (deadline_us > 0 && SteadyMicroseconds() >= deadline_us) break;
  }

  for (int s = first; s < last; ++s) {
    const int i = islands.constraints[s];
    const Constraint& c = set.constraints[i];
    for (int r = 0; r < c.dim; ++r) set.lambda[c.row_adr + r] = lambda[local_row_[i] + r];
  }
  FinalVelocity(m, d, island);
}

void PgsSolver::Solve(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                      SolverStatistics* stats) {
  const double start = SteadyMicroseconds();
  const ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  subsystem_blocks_.Build(m, set);
  jacobian_.Layout(m, d);

  // Storage of every island: rows, W, per-row vectors (sequential prefix sums).
  if (local_row_.size() < set.constraints.size()) local_row_.resize(set.constraints.size());
  if (island_rows_.size() < static_cast<size_t>(islands.num)) {
    island_rows_.resize(islands.num);
    island_row_adr_.resize(islands.num);
    delassus_adr_.resize(islands.num);
  }
  int total_rows = 0;
  size_t total_delassus = 0;
  for (int k = 0; k < islands.num; ++k) {
    int rows = 0;
    for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
      const int i = islands.constraints[s];
      local_row_[i] = rows;
      rows += set.constraints[i].dim;
    }
    island_rows_[k] = rows;
    island_row_adr_[k] = total_rows;
    delassus_adr_[k] = total_delassus;
    total_rows += rows;
    total_delassus += static_cast<size_t>(rows) * rows;
  }
  if (delassus_.size() < total_delassus) delassus_.resize(total_delassus);
  if (free_velocity_.size() < static_cast<size_t>(total_rows)) {
    free_velocity_.resize(total_rows);
    impulse_.resize(total_rows);
  }
  island_results_.resize(islands.num);

  ParallelFor(0, islands.num, 1, [&](int k) { SolveIsland(m, d, options, deadline_us, k); });

  ReportSolveStatistics(m, d, options, island_results_, start, subsystem_blocks_, residual_, stats);
}

}  // namespace alsim
