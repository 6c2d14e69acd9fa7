// What every solver reports about a step's solve (SolverStatistics, DESIGN.md: the same
// diagnostics for every solver), from the per-island outcomes of its iterations.
#pragma once

#include <vector>

#include "engine/core/parallel.h"
#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/solver/admm/admm_penalty.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/solver_options.h"

namespace alsim {

// How one island's iterations ended.
struct IslandSolveResult {
  int iterations = 0;          // ADMM iterations, or PGS sweeps
  double primal_residual = 0;  // theta_p of eq. (42), m/s (0 for PGS)
  double dual_residual = 0;    // theta_d of eq. (42), N s (0 for PGS)
  double beta0 = 0;            // ADMM: initial penalty, kg (0 for PGS)
  double beta = 0;             // ADMM: final penalty, kg (0 for PGS)
  bool converged = false;      // stopped by the tolerance, not by the cap or the deadline
  // ADMM: stopped because the iterate stopped moving short of the tolerance (the island's
  // contacts admit no exact solution; StallTest in engine/solver/admm/admm_penalty.h).
  bool stalled = false;
  // Island's share of the Sec. VII contact residual (IslandResidualSquares), when
  // SolverOptions::compute_residual: each island computes it at the end of its own task.
  double residual_squares = 0;
};

// Records one finished ADMM iteration of an island (its count and eq. 42 residuals) and says
// whether to stop (Algorithm 2, line 13): at the tolerance (then `converged`), at the iteration
// cap, past the deadline (microseconds of SteadyMicroseconds(); 0 for none), once
// options.interrupt is set, or [OURS] when
// `stall`, the island's StallTest, finds it stalled (then `stalled`).
bool RecordIterationAndCheckStop(double primal, double dual, const SolverOptions& options,
                                 double deadline_us, StallTest* stall, IslandSolveResult* result);

// Runs solve_island(k) for every island of d in parallel, each followed in its own task (while
// the island's data is still in that core's cache) by its share of the Sec. VII residual when
// options.compute_residual. `subsystem_blocks` must be built for d.constraints.
template <class SolveIsland>
void SolveIslandsInParallel(const Model& m, const Data& d, const SolverOptions& options,
                            const SubsystemBlocks& subsystem_blocks, ResidualWorkspace& work,
                            std::vector<IslandSolveResult>& results,
                            const SolveIsland& solve_island) {
  ParallelFor(0, d.islands.num, 1, [&](int k) {
    solve_island(k);
    if (options.compute_residual) {
      results[k].residual_squares = IslandResidualSquares(m, d, subsystem_blocks, k, work);
    }
  });
}

// Fills *stats: island, constraint and contact counts, iterations (the most and the mean over
// islands), the largest residuals over islands, solve_seconds since `start_us`
// (SteadyMicroseconds()), and, when options.compute_residual, the Sec. VII contact_residual from
// the islands' residual_squares (summed in island order, so the same for any thread count).
void ReportSolveStatistics(const Data& d, const SolverOptions& options,
                           const std::vector<IslandSolveResult>& islands, double start_us,
                           SolverStatistics* stats);

}  // namespace alsim
