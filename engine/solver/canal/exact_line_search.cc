#include "engine/solver/canal/exact_line_search.h"

#include <algorithm>
#include <cmath>

namespace alsim {

LineSearchResult ExactLineSearch(const LineSearchFunction& phi, double slope_at_zero,
                                 const LineSearchParameters& parameters) {
  LineSearchResult result;
  if (!(slope_at_zero < 0)) return result;
  const double target = parameters.relative_tolerance * std::abs(slope_at_zero);

  // Bracket: phi'(lo) < 0 <= phi'(hi).
  double lo = 0, hi = 1;
  double first = 0, second = 0;
  phi.Evaluate(hi, &first, &second);
  ++result.iterations;
  for (int k = 0; first < 0 && k < parameters.max_doublings; ++k) {
    if (std::abs(first) <= target) {  // alpha_hi already is the minimizer
      result.alpha = hi;
      result.converged = true;
      return result;
    }
    lo = hi;
    hi *= 2;
    phi.Evaluate(hi, &first, &second);
    ++result.iterations;
  }
  if (first < 0) {  // phi keeps falling (cannot happen for a strictly convex h): take the end
    result.alpha = hi;
    return result;
  }

  // rtsafe from the end point alpha_hi (1 unless the bracket grew), where phi' and phi'' are known.
  double alpha = hi;
  double step_before_last = hi - lo;
  double last_step = step_before_last;
  while (true) {
    if (std::abs(first) <= target) {
      result.converged = true;
      break;
    }
    if (first < 0) {
      lo = alpha;
    } else {
      hi = alpha;
    }
    if (hi - lo <= parameters.bracket_tolerance * std::max(1.0, hi)) {
      result.converged = true;
      break;
    }
    if (result.iterations >= parameters.max_iterations) break;
    const double newton = second > 0 ? alpha - first / second : lo - 1;  // lo - 1: not usable
    step_before_last = last_step;
    // Bisect when the Newton iterate leaves (lo, hi) or would not halve the step before last
    // (Numerical Recipes' rtsafe test), else take it.
    if (newton <= lo || newton >= hi || std::abs(2 * first) > std::abs(step_before_last * second)) {
      last_step = 0.5 * (hi - lo);
      alpha = lo + last_step;
    } else {
      last_step = std::abs(newton - alpha);
      alpha = newton;
    }
    phi.Evaluate(alpha, &first, &second);
    ++result.iterations;
  }
  result.alpha = alpha;
  return result;
}

}  // namespace alsim
