// The Newton solvers' loop (engine/solver/newton/newton_loop.h) on a small separable convex cost
// with a kink per coordinate, f(v) = sum_i 1/2 a_i v_i^2 - b_i v_i + 1/2 c_i max(v_i - k_i, 0)^2,
// whose minimizer is known: it converges there in a few steps, and stops at the step cap, when H
// cannot be factored, at the interrupt and on a direction that does not descend.
#include "engine/solver/newton/newton_loop.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>

namespace alsim {
namespace {

constexpr int kSize = 3;
constexpr double kA[kSize] = {1, 2, 1}, kB[kSize] = {3, 1, 2}, kC[kSize] = {4, 0, 10},
                 kK[kSize] = {1, 5, 0};

// The cost's pieces for NewtonLoop, from v = 0.
struct Kinked {
  double v[kSize] = {0, 0, 0};
  double d[kSize] = {0, 0, 0};
  bool factorable = true;
  bool ascend = false;  // direction() reports phi'(0) > 0

  double Gradient(int i, double x) const {
    return kA[i] * x - kB[i] + kC[i] * std::max(x - kK[i], 0.0);
  }
  double Curvature(int i, double x) const { return kA[i] + (x > kK[i] ? kC[i] : 0.0); }
  double GradientNorm() const {
    double sum = 0;
    for (int i = 0; i < kSize; ++i) sum += Gradient(i, v[i]) * Gradient(i, v[i]);
    return std::sqrt(sum);
  }
  bool Direction(double* slope) {
    if (!factorable) return false;
    *slope = 0;
    for (int i = 0; i < kSize; ++i) {
      d[i] = -Gradient(i, v[i]) / Curvature(i, v[i]);
      *slope += d[i] * Gradient(i, v[i]);
    }
    if (ascend) *slope = -*slope;
    return true;
  }
  void Evaluate(double alpha, LineSearchSample* sample) const {
    sample->first = sample->second = 0;
    for (int i = 0; i < kSize; ++i) {
      sample->first += d[i] * Gradient(i, v[i] + alpha * d[i]);
      sample->second += d[i] * d[i] * Curvature(i, v[i] + alpha * d[i]);
    }
  }
};

NewtonLoopResult RunLoop(Kinked& f, int max_steps, const SolverOptions& options = SolverOptions()) {
  auto evaluate = [&](double alpha, LineSearchSample* sample) { f.Evaluate(alpha, sample); };
  return NewtonLoop([&] { return f.GradientNorm() < 1e-12; },
                    [&](double* slope) { return f.Direction(slope); }, LineSearchLambda(evaluate),
                    [&](double alpha) {
                      for (int i = 0; i < kSize; ++i) f.v[i] += alpha * f.d[i];
                    },
                    max_steps, LineSearchParameters(), options, 0);
}

TEST(NewtonLoopTest, ConvergesToTheMinimizerInAFewSteps) {
  Kinked f;
  const NewtonLoopResult result = RunLoop(f, 50);
  EXPECT_TRUE(result.converged);
  EXPECT_FALSE(result.broken || result.out_of_time);
  EXPECT_GE(result.steps, 1);
  EXPECT_LE(result.steps, 4);
  EXPECT_GE(result.line_search_evaluations, result.steps);
  // v_i = b_i / a_i below the kink, else (b_i + c_i k_i) / (a_i + c_i).
  EXPECT_NEAR(f.v[0], 7.0 / 5.0, 1e-12);
  EXPECT_NEAR(f.v[1], 0.5, 1e-12);
  EXPECT_NEAR(f.v[2], 2.0 / 11.0, 1e-12);
}

TEST(NewtonLoopTest, StopsAtTheCapTheBrokenFactorTheInterruptAndAnAscent) {
  Kinked capped;
  NewtonLoopResult result = RunLoop(capped, 1);
  EXPECT_EQ(result.steps, 1);
  EXPECT_FALSE(result.converged);

  Kinked broken;
  broken.factorable = false;
  result = RunLoop(broken, 50);
  EXPECT_TRUE(result.broken);
  EXPECT_EQ(result.steps, 0);

  Kinked interrupted;
  std::atomic<bool> interrupt{true};
  SolverOptions options;
  options.interrupt = &interrupt;
  result = RunLoop(interrupted, 50, options);
  EXPECT_TRUE(result.out_of_time);
  EXPECT_EQ(result.steps, 1);  // one step always: the island keeps a solved step's impulses

  Kinked ascent;
  ascent.ascend = true;
  result = RunLoop(ascent, 50);
  EXPECT_FALSE(result.converged || result.broken || result.out_of_time);
  EXPECT_EQ(result.steps, 0);
  EXPECT_EQ(ascent.v[0], 0.0);
}

}  // namespace
}  // namespace alsim
