#include "engine/solver/solve_statistics.h"

#include <algorithm>
#include <cmath>

#include "engine/solver/solver.h"

namespace alsim {

void ReportSolveStatistics(const Data& d, const SolverOptions& options,
                           const std::vector<IslandSolveResult>& islands, double start_us,
                           SolverStatistics* stats) {
  const ConstraintSet& set = d.constraints;
  SolverStatistics& s = *stats;
  s = SolverStatistics{};
  s.islands = d.islands.num;
  s.constraints = static_cast<int>(set.constraints.size());
  s.contacts = set.num_contacts;
  long total_iterations = 0;
  double residual_squares = 0;
  for (int k = 0; k < d.islands.num; ++k) {
    const IslandSolveResult& r = islands[k];
    total_iterations += r.iterations;
    residual_squares += r.residual_squares;
    s.max_iterations = std::max(s.max_iterations, r.iterations);
    s.primal_residual = std::max(s.primal_residual, r.primal_residual);
    s.dual_residual = std::max(s.dual_residual, r.dual_residual);
  }
  s.mean_iterations = d.islands.num > 0 ? static_cast<double>(total_iterations) / d.islands.num : 0;
  s.solve_seconds = (SteadyMicroseconds() - start_us) * 1e-6;
  if (options.compute_residual) {
    s.contact_residual = std::sqrt(residual_squares) / std::max(1, set.num_contacts);
  }
}

bool RecordIterationAndCheckStop(double primal, double dual, const SolverOptions& options,
                                 double deadline_us, StallTest* stall, IslandSolveResult* result) {
  ++result->iterations;
  result->primal_residual = primal;
  result->dual_residual = dual;
  if (primal + dual < options.tolerance) {
    result->converged = true;
    return true;
  }
  if (result->iterations >= options.max_iterations) return true;
  if (deadline_us > 0 && SteadyMicroseconds() >= deadline_us) return true;
  if (options.interrupt != nullptr && options.interrupt->load(std::memory_order_relaxed)) {
    return true;
  }
  if (stall->Stalled(primal, dual, result->iterations, options)) {
    result->stalled = true;
    return true;
  }
  return false;
}

}  // namespace alsim
