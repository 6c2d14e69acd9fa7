#include "engine/solver/island_solver.h"

#include <utility>

#include "engine/solver/island_schedule.h"

namespace alsim {

IslandSolver::IslandSolver(const Model& m) {
  subsystem_blocks_.adr.reserve(m.nsubsystem + 1);
  subsystem_blocks_.cursor.reserve(m.nsubsystem + 1);
  subsystem_blocks_.blocks.reserve(MaxBlocks(m));
  island_results_.reserve(m.nsubsystem);
  residual_.Resize(m);
  split_islands_.subsystem_island.reserve(m.nsubsystem);
  split_islands_.subsystem_adr.reserve(m.nsubsystem + 1);
  split_islands_.subsystems.reserve(m.nsubsystem);
  split_islands_.constraint_adr.reserve(m.nsubsystem + 1);
  split_islands_.constraints.reserve(MaxConstraints(m));
  split_islands_.split.reserve(m.nsubsystem);
  split_island_of_.reserve(m.nsubsystem);
  first_results_.reserve(m.nsubsystem);
}

size_t IslandSolver::MaxConstraints(const Model& m) {
  return 4 * static_cast<size_t>(m.ngeom) + 2 * static_cast<size_t>(m.njnt + m.ntendon) + m.nu +
         m.foundation_site.size();
}

size_t IslandSolver::MaxBlocks(const Model& m) {
  return 2 * MaxConstraints(m) + 4 * static_cast<size_t>(m.nwrap);
}

void IslandSolver::Solve(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                         SolverStatistics* stats) {
  const double start = SteadyMicroseconds();
  BeginSolve(m, d, options);
  SolveIslands(m, d, options, deadline_us);
  ReportSolveStatistics(d, options, island_results_, start, stats);
  AddFigures(stats);
}

void IslandSolver::SolveSplitIslands(const Model& m, Data& d, const SolverOptions& options,
                                     double deadline_us, SolverStatistics* stats) {
  const double start = SteadyMicroseconds();
  const double first_seconds = stats->solve_seconds;
  ConstraintSet& set = d.constraints;
  const Islands& all = d.islands;
  // The split islands, in their order in d.islands, renumbered from 0.
  Islands& split = split_islands_;
  split.num = 0;
  split.subsystem_island.assign(m.nsubsystem, -1);
  split.subsystem_adr.assign(1, 0);
  split.subsystems.clear();
  split.constraint_adr.assign(1, 0);
  split.constraints.clear();
  split.split.clear();
  split_island_of_.clear();
  for (int k = 0; k < all.num; ++k) {
    if (!all.split[k]) continue;
    for (int s = all.subsystem_adr[k]; s < all.subsystem_adr[k + 1]; ++s) {
      split.subsystems.push_back(all.subsystems[s]);
      split.subsystem_island[all.subsystems[s]] = split.num;
    }
    for (int s = all.constraint_adr[k]; s < all.constraint_adr[k + 1]; ++s) {
      split.constraints.push_back(all.constraints[s]);
      set.constraints[all.constraints[s]].island = split.num;
    }
    split.subsystem_adr.push_back(static_cast<int>(split.subsystems.size()));
    split.constraint_adr.push_back(static_cast<int>(split.constraints.size()));
    split.split.push_back(true);
    split_island_of_.push_back(k);
    ++split.num;
  }
  first_results_.assign(island_results_.begin(), island_results_.end());
  std::swap(d.islands, split_islands_);
  BeginSolve(m, d, options);
  SolveIslands(m, d, options, deadline_us);
  std::swap(d.islands, split_islands_);
  // Back to d's numbering: a split island's outcome is its second solve's, with both solves'
  // iterations; the others keep the first solve's.
  for (int s = 0; s < static_cast<int>(split_island_of_.size()); ++s) {
    const int k = split_island_of_[s];
    for (int q = d.islands.constraint_adr[k]; q < d.islands.constraint_adr[k + 1]; ++q) {
      set.constraints[d.islands.constraints[q]].island = k;
    }
    const int first_iterations = first_results_[k].iterations;
    first_results_[k] = island_results_[s];
    first_results_[k].iterations += first_iterations;
  }
  island_results_.swap(first_results_);
  ReportSolveStatistics(d, options, island_results_, start, stats);
  stats->solve_seconds += first_seconds;
  stats->split = true;
  AddFigures(stats);
}

void IslandSolver::BeginSolve(const Model& m, Data& d, const SolverOptions& options) {
  subsystem_blocks_.Build(m, d.constraints);
  island_results_.resize(d.islands.num);
  Prepare(m, d, options);
}

void IslandSolver::SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                                double deadline_us) {
  IslandDeadlines deadlines(d, deadline_us);
  SolveIslandsInParallel(m, d, options, subsystem_blocks_, residual_, island_results_,
                         [&](int k) { SolveIsland(m, d, options, deadlines.Start(k), k); });
}

}  // namespace alsim
