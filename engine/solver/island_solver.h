// The solve every solver shares, written once: time the step, let the solver size its storage for
// this step's constraints (Prepare, sequential), solve the islands in parallel, each island's task
// ending with its share of the Sec. VII residual (island_schedule.h), then report the statistics
// (solve_statistics.h) and the solver's own figures. A solver supplies Prepare and SolveIsland, and
// may replace the island schedule (SolveIslands: "No Sub" solves one system for the whole scene)
// or add figures (AddFigures).
#pragma once

#include <vector>

#include "engine/solver/constraint_ops.h"
#include "engine/solver/solve_statistics.h"
#include "engine/solver/solver.h"

namespace alsim {

class IslandSolver : public ConstraintSolver {
 public:
  void Solve(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
             SolverStatistics* stats) final;
  // The second solve runs the solver as Solve does on d.islands narrowed to the split islands
  // (renumbered, with their constraints' Constraint::island), then restores d.islands and merges
  // the outcomes by island.
  void SolveSplitIslands(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                         SolverStatistics* stats) final;

  // Per-island outcomes of the last Solve.
  const std::vector<IslandSolveResult>& island_results() const { return island_results_; }

  // Solve() in parts, for a solver composed of others (the hybrid, engine/solver/hybrid): the
  // preparation for d's islands (sequential), then any island on its own (islands in parallel;
  // the result lands in island_results()). Statistics and figures are the caller's.
  void BeginSolve(const Model& m, Data& d, const SolverOptions& options);
  void SolveOneIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                      int island) {
    SolveIsland(m, d, options, deadline_us, island);
  }

 protected:
  // Reserves the shared storage for every ordinary step of m.
  explicit IslandSolver(const Model& m);
  // Room for as many constraints as Data's storage has (engine/data/data.cc): every ordinary step.
  static size_t MaxConstraints(const Model& m);
  // Room for their slack blocks: two per constraint, and a tendon's rows one per joint.
  static size_t MaxBlocks(const Model& m);

  // Sizes the solver's storage for d's constraints and islands (island_results_ already has one
  // entry per island, and subsystem_blocks_ is built); runs before any island, on one thread.
  virtual void Prepare(const Model& m, Data& d, const SolverOptions& options) = 0;
  // Solves island `island` and stores its outcome in island_results_[island]. Islands run in
  // parallel: an island writes only its own dofs, constraints and storage.
  virtual void SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                           double deadline_us, int island) = 0;
  // Runs SolveIsland for every island and fills each result's residual_squares (when
  // options.compute_residual): by default every island in parallel (SolveIslandsInParallel).
  virtual void SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                            double deadline_us);
  // Appends the solver's own figures of the step (SolverStatistics::AddFigure).
  virtual void AddFigures(SolverStatistics* /*stats*/) const {}

  SubsystemBlocks subsystem_blocks_;
  ResidualWorkspace residual_;
  std::vector<IslandSolveResult> island_results_;

 private:
  // SolveSplitIslands' storage, reserved for every ordinary step: the split islands as an Islands
  // of their own, each one's index in d.islands, and the first solve's outcomes.
  Islands split_islands_;
  std::vector<int> split_island_of_;
  std::vector<IslandSolveResult> first_results_;
};

}  // namespace alsim
