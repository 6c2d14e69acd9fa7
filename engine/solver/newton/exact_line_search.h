// The exact line search of the Newton solvers: alpha = argmin_{alpha > 0} phi(alpha) with
// phi(alpha) = f(v + alpha d), f a strictly convex cost and d a descent direction. CANAL's f is h
// of eq. (22) (its eq. 26, digest 5.6; canal_solver.h), the Newton kit's the piecewise quadratic
// cost of its rows (newton_solver.h). phi' is continuous, increasing and piecewise smooth, so the
// minimizer is the root of phi'. [OURS] A bracketed Newton iteration that uses phi's structure:
//   - each evaluation also reports the piece [left, right] around alpha on which no row changes
//     case (a contact's stick/slip/open, a limit's sign, a soft row's clamp, a cone's zone), and
//     whether phi' is affine there (every row's impulse linear along the line: CANAL's T_i when
//     no contact slips, the kit's rows outside a cone's middle zone). On an affine piece
//     phi'(t) = phi'(alpha) + phi''(alpha) (t - alpha) exactly, so a Newton iterate inside the
//     piece is the root (returned without another evaluation), and one beyond it moves the
//     bracket to the piece's end for free (the sign of phi' there is known);
//   - otherwise the Newton iterate is taken whenever it lies inside the bracket (lo, hi), else
//     the secant of the bracket's ends; a bisection follows whenever two evaluations did not
//     halve the bracket (this bounds the count by about twice bisection's);
//   - the bracket [0, hi] starts unbounded; while phi' < 0 the Newton iterate (which lies right
//     of alpha) or a doubling extends it.
// It stops when |phi'(alpha)| <= max(relative_tolerance |phi'(0)|, the rounding error of phi'
// that the function reports), when a Newton correction falls below bracket_tolerance
// max(1, alpha) (quadratic convergence inside a smooth piece: that iterate is returned), when the
// bracket is narrower than bracket_tolerance max(1, hi), or after max_iterations evaluations.
#pragma once

#include <limits>

namespace alsim {

// The stop rules and caps (the file comment); the defaults are CANAL's [OURS].
struct LineSearchParameters {
  double relative_tolerance = 1e-12;  // on |phi'(alpha)| / |phi'(0)|
  double bracket_tolerance = 1e-14;   // on (alpha_hi - alpha_lo) / max(1, alpha_hi)
  int max_iterations = 100;           // evaluations of phi' and phi'', bracketing included
  int max_doublings = 60;             // steps right while phi' < 0 at every point so far
};

// phi' and phi'' (> 0) at one alpha, and what the function knows about its piece there.
struct LineSearchSample {
  double first = 0;   // phi'(alpha)
  double second = 0;  // phi''(alpha), the one-sided value of the piece [left, right]
  // No row changes case on [left, right] (left <= alpha <= right); a function that does not know
  // its kinks leaves [alpha, alpha].
  double left = -std::numeric_limits<double>::infinity();
  double right = std::numeric_limits<double>::infinity();
  bool affine = false;  // phi' is affine on [left, right]
  double rounding = 0;  // a bound on the rounding error of `first`
};

class LineSearchFunction {
 public:
  virtual ~LineSearchFunction() = default;
  virtual void Evaluate(double alpha, LineSearchSample* sample) const = 0;
};

// A LineSearchFunction that calls evaluate(alpha, sample), which it holds by reference.
template <class Function>
class LineSearchLambda final : public LineSearchFunction {
 public:
  explicit LineSearchLambda(const Function& evaluate) : evaluate_(evaluate) {}
  void Evaluate(double alpha, LineSearchSample* sample) const override { evaluate_(alpha, sample); }

 private:
  const Function& evaluate_;
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
