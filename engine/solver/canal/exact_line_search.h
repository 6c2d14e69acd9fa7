// The exact line search of CANAL, eq. (26) (digest 5.6): alpha = argmin_{alpha > 0} phi(alpha)
// with phi(alpha) = h(v_hat + alpha d), h the strictly convex potential of eq. (22) and d a
// descent direction. phi' is continuous, increasing and piecewise smooth, so the minimizer is the
// root of phi', found by rtsafe (Numerical Recipes: Newton-Raphson safeguarded by bisection), as
// the paper does. [OURS] (digest 5.6): the bracket [0, alpha_hi] starts with alpha_hi = 1 and is
// doubled until phi'(alpha_hi) >= 0; rtsafe starts at alpha = 1 (the full Newton step) and
// bisects whenever the Newton iterate leaves the bracket or does not halve the step; it stops
// once |phi'(alpha)| <= relative_tolerance |phi'(0)| or the bracket is narrower than
// bracket_tolerance (relative to alpha_hi), with at most max_iterations evaluations.
#pragma once

#include "engine/solver/canal/canal_parameters.h"

namespace alsim {

// phi'(alpha) and phi''(alpha) (phi'' > 0) along the search direction.
class LineSearchFunction {
 public:
  virtual ~LineSearchFunction() = default;
  virtual void Evaluate(double alpha, double* first, double* second) const = 0;
};

struct LineSearchResult {
  double alpha = 0;
  int iterations = 0;      // evaluations of phi
  bool converged = false;  // a tolerance was met (not the iteration cap)
};

// The minimizer of phi over alpha > 0 given phi'(0) = slope_at_zero < 0. A non-negative slope
// (no descent) returns alpha = 0.
LineSearchResult ExactLineSearch(const LineSearchFunction& phi, double slope_at_zero,
                                 const LineSearchParameters& parameters);

}  // namespace alsim
