// The exact line search of the Newton solvers (engine/solver/newton/exact_line_search.h) on
// functions with known roots: a kinked quadratic found past the first bracket, a piecewise affine
// phi' with many kinks whose pieces it must use, and phi' that is all rounding noise.
#include "engine/solver/newton/exact_line_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

namespace alsim {
namespace {

// phi(alpha) = 1/2 (alpha - 3)^2 + max(alpha - 2, 0)^2: phi' = alpha - 3 + 2 max(alpha - 2, 0)
// has its root at 7/3, beyond the first bracket [0, 1] (found by doubling to 4).
struct KinkedQuadratic final : LineSearchFunction {
  mutable int calls = 0;
  void Evaluate(double alpha, LineSearchSample* sample) const override {
    ++calls;
    sample->first = alpha - 3 + 2 * std::max(alpha - 2, 0.0);
    sample->second = 1 + (alpha > 2 ? 2 : 0);
  }
};

TEST(ExactLineSearchTest, FindsTheRootOfAPiecewiseSmoothDerivative) {
  KinkedQuadratic phi;
  const LineSearchResult result = ExactLineSearch(phi, -3, LineSearchParameters());
  EXPECT_TRUE(result.converged);
  EXPECT_NEAR(result.alpha, 7.0 / 3.0, 1e-12);
  EXPECT_EQ(result.iterations, phi.calls);
  EXPECT_LT(result.iterations, 10);
  EXPECT_EQ(ExactLineSearch(phi, 0.5, LineSearchParameters()).alpha, 0.0);  // no descent
}

// phi' = alpha - 1/2 + sum_k c_k max(alpha - a_k, 0) with 400 kinks a_k in (0, 4), c_k in
// [0.5, 50]: a piecewise affine, increasing phi' like a line through many contacts that engage,
// reporting its pieces as CANAL's Phi does. The root, computed independently by sorting the kinks
// and walking the pieces, must come out exactly, in a few evaluations (a bisection to 1e-14 needs
// about 47, rtsafe with the halving test took dozens on such functions).
struct ManyKinks final : LineSearchFunction {
  std::vector<double> kink, weight;
  mutable int calls = 0;
  void Evaluate(double alpha, LineSearchSample* sample) const override {
    ++calls;
    sample->first = alpha - 0.5;
    sample->second = 1;
    sample->left = -std::numeric_limits<double>::infinity();
    sample->right = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k < kink.size(); ++k) {
      if (alpha > kink[k]) {
        sample->first += weight[k] * (alpha - kink[k]);
        sample->second += weight[k];
        sample->left = std::max(sample->left, kink[k]);
      } else {
        sample->right = std::min(sample->right, kink[k]);
      }
    }
    sample->affine = true;
  }
};

TEST(ExactLineSearchTest, UsesTheAffinePiecesOfAFunctionWithManyKinks) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> where(0.0, 4.0), how_much(0.5, 50.0);
  int total = 0, searches = 0;
  for (int trial = 0; trial < 50; ++trial) {
    ManyKinks phi;
    for (int k = 0; k < 400; ++k) {
      phi.kink.push_back(where(rng));
      phi.weight.push_back(how_much(rng));
    }
    // The reference root: walk the sorted kinks until phi' changes sign within a piece.
    std::vector<int> order(phi.kink.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return phi.kink[a] < phi.kink[b]; });
    double slope = 1, intercept = -0.5, root = 0;  // phi' = slope alpha + intercept
    for (size_t k = 0;; ++k) {
      const double end = k < order.size() ? phi.kink[order[k]] : 1e300;
      root = -intercept / slope;
      if (root <= end) break;
      slope += phi.weight[order[k]];
      intercept -= phi.weight[order[k]] * phi.kink[order[k]];
    }
    const LineSearchResult result = ExactLineSearch(phi, -0.5, LineSearchParameters());
    EXPECT_TRUE(result.converged) << trial;
    EXPECT_NEAR(result.alpha, root, 1e-12 * root) << trial;
    EXPECT_EQ(result.iterations, phi.calls);
    EXPECT_LE(result.iterations, 12) << trial;
    total += result.iterations;
    ++searches;
  }
  EXPECT_LE(total, 8 * searches);  // fewer than log2(400) per search on average
}

// A function whose phi' is all rounding noise past the root (a flat line: |phi''| tiny) stops as
// soon as |phi'| is within the rounding bound it reports, not after a bisection to 1e-14.
struct NoisyFlat final : LineSearchFunction {
  mutable int calls = 0;
  void Evaluate(double alpha, LineSearchSample* sample) const override {
    ++calls;
    sample->first = ((calls % 2) != 0 ? 1e-21 : -3e-21) + 1e-30 * (alpha - 1);
    sample->second = 4e-12;
    sample->rounding = 1e-20;
  }
};

TEST(ExactLineSearchTest, StopsAtTheRoundingOfPhiPrime) {
  NoisyFlat phi;
  const LineSearchResult result = ExactLineSearch(phi, -4e-12, LineSearchParameters());
  EXPECT_TRUE(result.converged);
  EXPECT_EQ(result.iterations, 1);
  EXPECT_EQ(result.alpha, 1.0);
}

}  // namespace
}  // namespace alsim
