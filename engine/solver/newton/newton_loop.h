// The Newton loop the Newton solvers share: CANAL's inner solve (eqs. 24-26, canal_solver.h) and
// the Newton kit's per-island solve (newton_solver.h), each minimizing a strictly convex cost f
// over an island's velocities v. Each solver brings its pieces:
//   converged()       its stop test at the current v (CANAL: ||r|| under its tolerance; the kit:
//                     MuJoCo's gradient and improvement tests, or SAP's eq. 20)
//   direction(&slope) assembles and factors H, sets d = -H^{-1} g and whatever phi needs along d,
//                     and writes phi'(0) = g . d; false when H cannot be factored
//   line              phi(alpha) = f(v + alpha d) for the exact line search (exact_line_search.h)
//   step(alpha)       v <- v + alpha d, then f, g and what converged() reads at the new v
// and the loop is
//   until converged():
//     stop at max_steps steps, or past the deadline or at the interrupt (stop_test.h) once one
//       step is taken: a budget shorter than the solver's setup still leaves the island the
//       impulses of one Newton step, not the unconstrained start
//     direction; stop if H could not be factored (broken), or if phi'(0) >= 0 (d is no descent
//       direction: g is zero to round-off, nothing left to gain)
//     alpha = ExactLineSearch(line, phi'(0)); step(alpha)
//     stop if alpha = 0 (no descent left at round-off; converged() decides the outcome).
#pragma once

#include "engine/solver/newton/exact_line_search.h"
#include "engine/solver/solver_options.h"
#include "engine/solver/stop_test.h"

namespace alsim {

// How one Newton loop ended.
struct NewtonLoopResult {
  int steps = 0;                    // Newton steps taken (line searches)
  int line_search_evaluations = 0;  // evaluations of phi' and phi'' over all searches
  bool converged = false;           // converged() held at the end
  bool out_of_time = false;         // the deadline or the interrupt stopped it
  bool broken = false;              // H could not be factored
};

template <class Converged, class Direction, class Step>
NewtonLoopResult NewtonLoop(const Converged& converged, const Direction& direction,
                            const LineSearchFunction& line, const Step& step, int max_steps,
                            const LineSearchParameters& line_search, const SolverOptions& options,
                            double deadline_us) {
  NewtonLoopResult result;
  while (!(result.converged = converged())) {
    if (result.steps >= max_steps) break;
    if (result.steps > 0 && OutOfTime(options, deadline_us)) {
      result.out_of_time = true;
      break;
    }
    double slope = 0;
    if (!direction(&slope)) {
      result.broken = true;
      break;
    }
    if (!(slope < 0)) break;
    const LineSearchResult search = ExactLineSearch(line, slope, line_search);
    result.line_search_evaluations += search.iterations;
    step(search.alpha);
    ++result.steps;
    if (search.alpha == 0) {
      result.converged = converged();
      break;
    }
  }
  return result;
}

}  // namespace alsim
