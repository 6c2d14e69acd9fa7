#include "engine/solver/solve_statistics.h"

#include <algorithm>
#include <cmath>

#include "engine/solver/stop_test.h"

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

}  // namespace alsim
