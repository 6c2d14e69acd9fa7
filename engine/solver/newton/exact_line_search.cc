#include "engine/solver/newton/exact_line_search.h"

#include <algorithm>
#include <cmath>

namespace alsim {

LineSearchResult ExactLineSearch(const LineSearchFunction& phi, double slope_at_zero,
                                 const LineSearchParameters& parameters) {
  LineSearchResult result;
  if (!(slope_at_zero < 0)) return result;
  const double infinity = std::numeric_limits<double>::infinity();
  const double target = parameters.relative_tolerance * std::abs(slope_at_zero);

  // The bracket: phi'(lo) < 0 <= phi'(hi), with phi' known at both ends once hi is finite.
  double lo = 0, hi = infinity;
  double first_lo = slope_at_zero, first_hi = 0;
  double alpha = 1;                             // the full Newton step of eq. (25)
  double first1 = infinity, first2 = infinity;  // |phi'| one and two evaluations ago
  int extensions = 0;
  LineSearchSample sample;
  while (true) {
    sample = LineSearchSample{};
    sample.left = sample.right = alpha;
    phi.Evaluate(alpha, &sample);
    ++result.iterations;
    const double first = sample.first, second = sample.second;
    if (std::abs(first) <= std::max(target, sample.rounding)) {
      result.converged = true;
      break;
    }
    if (first < 0) {
      lo = alpha;
      first_lo = first;
    } else {
      hi = alpha;
      first_hi = first;
    }
    const double newton = second > 0 ? alpha - first / second : (first < 0 ? infinity : -infinity);
    if (sample.affine) {
      // phi' is exactly the line through (alpha, first) with slope `second` on [left, right].
      if (newton >= sample.left && newton <= sample.right) {
        alpha = newton;
        result.converged = true;
        break;
      }
      if (first < 0 && sample.right > lo) {  // the root lies beyond the piece: phi'(right) < 0
        lo = sample.right;
        first_lo = first + second * (sample.right - alpha);
      } else if (first > 0 && sample.left < hi) {  // phi'(left) > 0
        hi = sample.left;
        first_hi = first + second * (sample.left - alpha);
      }
    }
    // Quadratic convergence inside a smooth piece: a correction this small is the root.
    if (std::abs(newton - alpha) <= parameters.bracket_tolerance * std::max(1.0, alpha)) {
      alpha = newton;
      result.converged = true;
      break;
    }
    if (hi < infinity && hi - lo <= parameters.bracket_tolerance * std::max(1.0, hi)) {
      alpha = std::abs(first_lo) < std::abs(first_hi) ? lo : hi;
      result.converged = true;
      break;
    }
    if (result.iterations >= parameters.max_iterations) break;
    if (hi == infinity) {                                  // phi' < 0 so far: extend to the right
      if (++extensions > parameters.max_doublings) break;  // cannot happen for a strictly convex h
      alpha = newton > lo && newton < infinity ? newton : 2 * lo;
      continue;
    }
    // Newton converges superlinearly inside a smooth piece (from one side on a convex or
    // concave one, which need not shrink the bracket), so progress is |phi'|: bisect when two
    // evaluations did not halve it (a Newton iterate cycling around a kink).
    const bool stalled = std::abs(first) > 0.5 * first2;
    first2 = first1;
    first1 = std::abs(first);
    if (stalled) {
      alpha = 0.5 * (lo + hi);
      first1 = first2 = infinity;
      continue;
    }
    if (newton > lo && newton < hi) {
      alpha = newton;
    } else {  // the secant through the bracket's ends
      alpha = lo - first_lo * (hi - lo) / (first_hi - first_lo);
      if (!(alpha > lo && alpha < hi)) alpha = 0.5 * (lo + hi);
    }
  }
  result.alpha = alpha;
  return result;
}

}  // namespace alsim
