// SAP's cone (engine/solver/sap/sap_cone.h) against the projection's defining properties: the
// impulse lies in the friction cone, is the R-norm projection (the residual y - gamma is
// R-orthogonal to it, so g . gamma = 0 exactly), the cost's derivative is -gamma and its Hessian
// G matches finite differences of -gamma in every region (digest seed-001-sap.md, T1-T3).
#include "engine/solver/sap/sap_cone.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace alsim {
namespace {

constexpr double kRn = 0.02, kRt = 0.003, kMu = 0.7;

// x with y = -R^-1 x at (y_n, y_t1, y_t2).
void XOfY(double yn, double y1, double y2, double* x) {
  x[0] = -kRn * yn;
  x[1] = -kRt * y1;
  x[2] = -kRt * y2;
}

TEST(SapConeTest, RegionsFollowEquation18) {
  double x[3];
  XOfY(1.0, 0.3, -0.2, x);  // |y_t| = 0.36 <= mu y_n: stiction, gamma = y
  SapConeState s = SapConeAt(x, kRn, kRt, kMu, nullptr);
  EXPECT_EQ(s.zone, 1);
  EXPECT_DOUBLE_EQ(s.impulse[0], 1.0);
  EXPECT_DOUBLE_EQ(s.impulse[1], 0.3);
  XOfY(-5.0, 0.1, 0.0, x);  // y_n <= -muhat y_r: no contact
  s = SapConeAt(x, kRn, kRt, kMu, nullptr);
  EXPECT_EQ(s.zone, 0);
  EXPECT_EQ(s.impulse[0], 0.0);
  XOfY(0.2, 3.0, 4.0, x);  // sliding: gamma_n = (y_n + muhat y_r) / (1 + mutilde^2)
  s = SapConeAt(x, kRn, kRt, kMu, nullptr);
  EXPECT_EQ(s.zone, 2);
  const double muhat = kMu * kRt / kRn, mutilde2 = kMu * muhat;
  EXPECT_NEAR(s.impulse[0], (0.2 + muhat * 5.0) / (1 + mutilde2), 1e-14);
  EXPECT_NEAR(std::hypot(s.impulse[1], s.impulse[2]), kMu * s.impulse[0], 1e-14);
  EXPECT_NEAR(s.impulse[1] / s.impulse[2], 3.0 / 4.0, 1e-14);  // along y_t
}

TEST(SapConeTest, ImpulseIsTheRNormProjectionWithExactComplementarity) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int k = 0; k < 2000; ++k) {
    const double x[3] = {normal(rng) * 0.05, normal(rng) * 0.05, normal(rng) * 0.05};
    const SapConeState s = SapConeAt(x, kRn, kRt, kMu, nullptr);
    const double g[3] = {-x[0] / kRn, -x[1] / kRt, -x[2] / kRt};  // y
    EXPECT_LE(std::hypot(s.impulse[1], s.impulse[2]), kMu * s.impulse[0] + 1e-12);
    // (y - gamma)^T R gamma = 0 (the projection's orthogonality).
    const double dot = kRn * (g[0] - s.impulse[0]) * s.impulse[0] +
                       kRt * (g[1] - s.impulse[1]) * s.impulse[1] +
                       kRt * (g[2] - s.impulse[2]) * s.impulse[2];
    EXPECT_NEAR(dot, 0.0, 1e-10 * (1 + std::abs(s.cost)));
    // The cost is 1/2 gamma^T R gamma.
    const double cost = 0.5 * (kRn * s.impulse[0] * s.impulse[0] +
                               kRt * (s.impulse[1] * s.impulse[1] + s.impulse[2] * s.impulse[2]));
    EXPECT_NEAR(s.cost, cost, 1e-12 * (1 + cost));
  }
}

TEST(SapConeTest, GradientAndHessianMatchFiniteDifferences) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  int zones[3] = {0, 0, 0};
  for (int k = 0; k < 3000; ++k) {
    // Tangents at three scales, so that every region is sampled.
    const double tangent = 0.05 * std::pow(0.1, k % 3);
    const double x[3] = {normal(rng) * 0.05, normal(rng) * tangent, normal(rng) * tangent};
    double hessian[9];
    const SapConeState s = SapConeAt(x, kRn, kRt, kMu, hessian);
    ++zones[static_cast<int>(s.zone)];
    const double step = 1e-7;
    for (int c = 0; c < 3; ++c) {
      double plus[3] = {x[0], x[1], x[2]}, minus[3] = {x[0], x[1], x[2]};
      plus[c] += step;
      minus[c] -= step;
      const SapConeState sp = SapConeAt(plus, kRn, kRt, kMu, nullptr);
      const SapConeState sm = SapConeAt(minus, kRn, kRt, kMu, nullptr);
      if (sp.zone != s.zone || sm.zone != s.zone) continue;  // across a region's boundary
      // d cost / dx = -gamma.
      EXPECT_NEAR((sp.cost - sm.cost) / (2 * step), -s.impulse[c],
                  1e-5 * (1 + std::abs(s.impulse[c])));
      for (int r = 0; r < 3; ++r) {
        const double fd = -(sp.impulse[r] - sm.impulse[r]) / (2 * step);
        EXPECT_NEAR(hessian[r + 3 * c], fd, 1e-5 * (1 + std::abs(fd))) << r << "," << c;
        EXPECT_NEAR(hessian[r + 3 * c], hessian[c + 3 * r], 1e-9 * (1 + std::abs(fd)));
      }
    }
  }
  EXPECT_GT(zones[0], 100);
  EXPECT_GT(zones[1], 100);
  EXPECT_GT(zones[2], 100);
}

TEST(SapConeTest, FrictionlessKeepsTheNormalOnly) {
  double x[3];
  XOfY(2.0, 5.0, -1.0, x);
  const SapConeState s = SapConeAt(x, kRn, kRt, 0.0, nullptr);
  EXPECT_DOUBLE_EQ(s.impulse[0], 2.0);
  EXPECT_EQ(s.impulse[1], 0.0);
  EXPECT_EQ(s.impulse[2], 0.0);
}

}  // namespace
}  // namespace alsim
