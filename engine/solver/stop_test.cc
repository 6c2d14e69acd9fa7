#include "engine/solver/stop_test.h"

#include <chrono>

namespace alsim {

double SteadyMicroseconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double, std::micro>(Clock::now().time_since_epoch()).count();
}

bool OutOfTime(const SolverOptions& options, double deadline_us) {
  if (deadline_us > 0 && SteadyMicroseconds() >= deadline_us) return true;
  return options.interrupt != nullptr && options.interrupt->load(std::memory_order_relaxed);
}

bool CountIterationAndCheckStop(double residual, const SolverOptions& options, double deadline_us,
                                IslandSolveResult* result) {
  ++result->iterations;
  if (residual < options.tolerance) {
    result->converged = true;
    return true;
  }
  return result->iterations >= options.max_iterations || OutOfTime(options, deadline_us);
}

}  // namespace alsim
