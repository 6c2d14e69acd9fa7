#include "engine/solver/hybrid/hybrid_solver.h"

#include <algorithm>

#include "engine/core/parallel.h"
#include "engine/solver/admm/admm_iteration.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/island_schedule.h"

namespace alsim {

HybridSolver::HybridSolver(const Model& m) : IslandSolver(m), subadmm_(m), canal_(m) {
  handed_to_canal_.reserve(m.nsubsystem);
  canal_islands_.reserve(m.nsubsystem);
}

void HybridSolver::Prepare(const Model& m, Data& d, const SolverOptions& options) {
  SolverOptions first = options;
  first.max_iterations = std::min(options.max_iterations, options.hybrid.switch_after_iterations);
  subadmm_.BeginSolve(m, d, first);
  handed_to_canal_.assign(d.islands.num, 0);
}

namespace {

// Whether island k has a contact with torsional or rolling rows (condim 4/6), which CANAL cannot
// express: such an island stays with SubADMM to the end (SolverSupportsHighCondim).
bool HasHighCondimContact(const Data& d, int k) {
  const Islands& islands = d.islands;
  for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
    if (d.constraints.constraints[islands.constraints[s]].dim > 3) return true;
  }
  return false;
}

}  // namespace

void HybridSolver::SolveIsland(const Model& m, Data& d, const SolverOptions& options,
                               double deadline_us, int island) {
  if (m.high_condim_geom >= 0 && HasHighCondimContact(d, island)) {
    subadmm_.SolveOneIsland(m, d, options, deadline_us, island);
    island_results_[island] = subadmm_.island_results()[island];
    return;
  }
  SolverOptions first = options;
  first.max_iterations = std::min(options.max_iterations, options.hybrid.switch_after_iterations);
  subadmm_.SolveOneIsland(m, d, first, deadline_us, island);
  const IslandSolveResult& result = subadmm_.island_results()[island];
  island_results_[island] = result;
  handed_to_canal_[island] = !result.converged && !result.stalled &&
                             result.iterations < options.max_iterations &&
                             !OutOfTime(options, deadline_us);
}

void HybridSolver::SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                                double deadline_us) {
  auto residual_share = [&](int k) {
    if (options.compute_residual) {
      island_results_[k].residual_squares =
          IslandResidualSquares(m, d, subsystem_blocks_, k, residual_);
    }
  };
  IslandDeadlines deadlines(d, deadline_us);
  IslandsFor(d.islands.num, [&](int k) {
    SolveIsland(m, d, options, deadlines.Start(k), k);
    if (!handed_to_canal_[k]) residual_share(k);
  });
  canal_islands_.clear();
  for (int k = 0; k < d.islands.num; ++k) {
    if (handed_to_canal_[k]) canal_islands_.push_back(k);
  }
  if (canal_islands_.empty()) return;
  canal_.BeginSolve(m, d, options);
  IslandsFor(static_cast<int>(canal_islands_.size()), [&](int s) {
    const int k = canal_islands_[s];
    SolverOptions second = options;
    second.max_iterations = options.max_iterations - island_results_[k].iterations;
    second.canal.subadmm_fallback_iterations = 0;  // SubADMM has had the island already
    canal_.SolveOneIsland(m, d, second, deadline_us, k);
    const int subadmm_iterations = island_results_[k].iterations;
    island_results_[k] = canal_.island_results()[k];
    island_results_[k].iterations += subadmm_iterations;
    residual_share(k);
  });
}

void HybridSolver::AddFigures(SolverStatistics* stats) const {
  int handed = 0;
  for (const char h : handed_to_canal_) handed += h;
  stats->AddFigure("canal_islands", handed);
  AddAdmmFigures(island_results_, stats);
}

}  // namespace alsim
