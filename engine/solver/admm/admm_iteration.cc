#include "engine/solver/admm/admm_iteration.h"

namespace alsim {
namespace {

// An island stalls when theta_p at a check of eq. (43) is above this fraction of theta_p at the
// check before while theta_d is below the tolerance (StallTest).
constexpr double kStallProgress = 0.99;

}  // namespace

bool StallTest::Stalled(double primal, double dual, int iteration, const SolverOptions& options) {
  if (!IsBetaCheckIteration(iteration, options)) return false;
  if (dual < options.tolerance && primal > kStallProgress * primal_at_last_check_) return true;
  primal_at_last_check_ = primal;
  return false;
}

bool RecordAdmmIterationAndCheckStop(double primal, double dual, const SolverOptions& options,
                                     double deadline_us, StallTest* stall,
                                     IslandSolveResult* result) {
  result->primal_residual = primal;
  result->dual_residual = dual;
  if (CountIterationAndCheckStop(primal + dual, options, deadline_us, result)) return true;
  if (stall->Stalled(primal, dual, result->iterations, options)) {
    result->stalled = true;
    return true;
  }
  return false;
}

void AddAdmmFigures(const std::vector<IslandSolveResult>& islands, SolverStatistics* stats) {
  int stalled = 0;
  for (const IslandSolveResult& island : islands) stalled += island.stalled ? 1 : 0;
  stats->AddFigure("stalled_islands", stalled);
}

}  // namespace alsim
