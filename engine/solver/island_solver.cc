#include "engine/solver/island_solver.h"

#include "engine/solver/island_schedule.h"

namespace alsim {

IslandSolver::IslandSolver(const Model& m) {
  subsystem_blocks_.adr.reserve(m.nsubsystem + 1);
  subsystem_blocks_.cursor.reserve(m.nsubsystem + 1);
  subsystem_blocks_.blocks.reserve(MaxBlocks(m));
  island_results_.reserve(m.nsubsystem);
  residual_.Resize(m);
}

size_t IslandSolver::MaxConstraints(const Model& m) {
  return 4 * static_cast<size_t>(m.ngeom) + 2 * static_cast<size_t>(m.njnt + m.ntendon) + m.nu;
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

void IslandSolver::BeginSolve(const Model& m, Data& d, const SolverOptions& options) {
  subsystem_blocks_.Build(m, d.constraints);
  island_results_.resize(d.islands.num);
  Prepare(m, d, options);
}

void IslandSolver::SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                                double deadline_us) {
  SolveIslandsInParallel(m, d, options, subsystem_blocks_, residual_, island_results_,
                         [&](int k) { SolveIsland(m, d, options, deadline_us, k); });
}

}  // namespace alsim
