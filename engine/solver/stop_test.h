// When an island's iterations stop: the one rule every solver applies after each iteration
// (Algorithm 2, line 13; Algorithm 1, line 16; PGS's sweeps): at the tolerance, at the iteration
// cap, past the step's deadline (the time budget), or once the caller's interrupt is set.
#pragma once

#include "engine/solver/solve_statistics.h"
#include "engine/solver/solver_options.h"

namespace alsim {

// Monotonic clock in microseconds, for time budgets.
double SteadyMicroseconds();

// Whether the solve must end now: past deadline_us (microseconds of SteadyMicroseconds(); 0 for
// no deadline), or options.interrupt is set.
bool OutOfTime(const SolverOptions& options, double deadline_us);

// Counts one finished iteration in result->iterations and says whether the island stops: once
// residual < options.tolerance (then result->converged), at options.max_iterations, or OutOfTime.
bool CountIterationAndCheckStop(double residual, const SolverOptions& options, double deadline_us,
                                IslandSolveResult* result);

}  // namespace alsim
