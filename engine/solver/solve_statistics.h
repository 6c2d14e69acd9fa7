// What every solver reports about a step's solve (SolverStatistics, DESIGN.md: the same
// diagnostics for every solver), from the per-island outcomes of its iterations.
#pragma once

#include <vector>

#include "engine/data/data.h"
#include "engine/model/model.h"
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

// Fills *stats: island, constraint and contact counts, iterations (the most and the mean over
// islands), the largest residuals over islands, solve_seconds since `start_us`
// (SteadyMicroseconds()), and, when options.compute_residual, the Sec. VII contact_residual from
// the islands' residual_squares (summed in island order, so the same for any thread count).
void ReportSolveStatistics(const Data& d, const SolverOptions& options,
                           const std::vector<IslandSolveResult>& islands, double start_us,
                           SolverStatistics* stats);

}  // namespace alsim
