// AndersonAccelerator on fixed-point iterations with known answers: a linear contraction that
// plain iteration solves slowly, and the safeguard that drops a history that made things worse.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/solver/admm/anderson.h"

namespace alsim {
namespace {

// G(w) = A w + b with A = diag(a_i), a_i in [0.5, 0.99]: the fixed point is b_i / (1 - a_i) and
// plain iteration contracts by 0.99 per step at worst (about 2300 steps to 1e-10).
struct LinearMap {
  std::vector<double> a, b;
  explicit LinearMap(int n) : a(n), b(n) {
    for (int i = 0; i < n; ++i) {
      a[i] = 0.5 + 0.49 * i / (n - 1);
      b[i] = std::sin(1.0 + i);
    }
  }
  void Apply(const std::vector<double>& w, std::vector<double>* g) const {
    for (size_t i = 0; i < w.size(); ++i) (*g)[i] = a[i] * w[i] + b[i];
  }
  double Error(const std::vector<double>& w) const {
    double largest = 0;
    for (size_t i = 0; i < w.size(); ++i)
      largest = std::max(largest, std::abs(w[i] - b[i] / (1 - a[i])));
    return largest;
  }
};

int IterationsTo(double tolerance, int memory, const LinearMap& map, int n) {
  std::vector<double> storage(AndersonAccelerator::StorageSize(n, memory));
  AndersonAccelerator anderson(storage.data(), n, memory);
  std::vector<double> w(n, 0.0), g(n);
  for (int iteration = 1; iteration <= 5000; ++iteration) {
    map.Apply(w, &g);
    if (memory > 0) anderson.Step(w.data(), g.data());
    w = g;
    if (map.Error(w) < tolerance) return iteration;
  }
  return 5000;
}

TEST(AndersonAcceleratorTest, SolvesALinearContractionInFewIterations) {
  const int n = 12;
  const LinearMap map(n);
  const int plain = IterationsTo(1e-10, 0, map, n);
  const int accelerated = IterationsTo(1e-10, 5, map, n);
  EXPECT_GT(plain, 2000);
  EXPECT_LT(accelerated, plain / 10);
  std::printf("[ anderson ] plain %d iterations, memory 5: %d\n", plain, accelerated);
}

TEST(AndersonAcceleratorTest, AGrowingResidualDropsTheHistoryAndKeepsThePlainIterate) {
  const int n = 4, memory = 3;
  std::vector<double> storage(AndersonAccelerator::StorageSize(n, memory));
  AndersonAccelerator anderson(storage.data(), n, memory);
  std::vector<double> w = {0, 0, 0, 0}, g = {1, 1, 1, 1};
  EXPECT_FALSE(anderson.Step(w.data(), g.data()));  // no history yet: g stays
  EXPECT_EQ(g[0], 1.0);
  w = g;
  g = {1.5, 1.5, 1.5, 1.5};  // ||f|| fell from 2 to 1: extrapolated
  EXPECT_TRUE(anderson.Step(w.data(), g.data()));
  w = g;
  std::vector<double> far = {w[0] + 10, w[1] + 10, w[2] + 10, w[3] + 10};  // ||f|| = 20 grew
  const std::vector<double> plain = far;
  EXPECT_FALSE(anderson.Step(w.data(), far.data()));
  EXPECT_EQ(far, plain);
}

// Where the caller cannot check an extrapolation (the iteration ends first), Step only records:
// g stays the plain iterate, and the history still serves the next call.
TEST(AndersonAcceleratorTest, WithoutExtrapolationTheHistoryIsStillKept) {
  const int n = 4, memory = 3;
  std::vector<double> storage(AndersonAccelerator::StorageSize(n, memory));
  AndersonAccelerator anderson(storage.data(), n, memory);
  std::vector<double> w = {0, 0, 0, 0}, g = {1, 1, 1, 1};
  EXPECT_FALSE(anderson.Step(w.data(), g.data(), /*extrapolate=*/false));
  w = g;
  g = {1.5, 1.5, 1.5, 1.5};  // ||f|| fell from 2 to 1: a history column, but no extrapolation
  const std::vector<double> plain = g;
  EXPECT_FALSE(anderson.Step(w.data(), g.data(), /*extrapolate=*/false));
  EXPECT_EQ(g, plain);
  w = g;
  g = {1.75, 1.75, 1.75, 1.75};  // ||f|| fell again: extrapolated from the kept history
  EXPECT_TRUE(anderson.Step(w.data(), g.data()));
  EXPECT_NEAR(g[0], 2.0, 1e-6);  // the fixed point of w -> (w + 2) / 2
}

// w -> rho w + 1 from w = 0: the first plain steps have length 1 and rho, and the fixed point
// 1 / (1 - rho) lies about 1 / (1 - rho) plain steps away, where one history column puts the
// extrapolation. At rho = 0.99 (100 steps away) it is taken; at rho = 0.9999 (10^4 steps) the
// safeguard refuses it and keeps the plain iterate.
bool ExtrapolatesLinearIteration(double rho, double* result) {
  const int n = 4, memory = 3;
  std::vector<double> storage(AndersonAccelerator::StorageSize(n, memory));
  AndersonAccelerator anderson(storage.data(), n, memory);
  std::vector<double> w(n, 0.0), g(n, 1.0);
  EXPECT_FALSE(anderson.Step(w.data(), g.data()));  // no history yet
  w = g;
  for (double& x : g) x = rho * x + 1;
  const std::vector<double> plain = g;
  const bool extrapolated = anderson.Step(w.data(), g.data());
  if (!extrapolated) {
    EXPECT_EQ(g, plain);
  }
  *result = g[0];
  return extrapolated;
}

TEST(AndersonAcceleratorTest, AnExtrapolationFartherThanAThousandPlainStepsIsRefused) {
  double result = 0;
  EXPECT_TRUE(ExtrapolatesLinearIteration(0.99, &result));
  EXPECT_NEAR(result, 100.0, 1e-3);
  EXPECT_FALSE(ExtrapolatesLinearIteration(0.9999, &result));
  EXPECT_DOUBLE_EQ(result, 0.9999 + 1);
}

}  // namespace
}  // namespace alsim
