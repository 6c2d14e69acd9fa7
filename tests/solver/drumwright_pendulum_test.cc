// What bench/drumwright_pendulum_bench.cc (Drumwright's Figs. 4 and 6; models in
// bench/drumwright_pendulum.h) relies on, against independent answers:
// - Fig. 6's scalar step equals SolveFirstOrderStep's interior-point program step by step,
//   through the free swing, the impact and the lift-off;
// - its free swing meets the limit at the quarter period sqrt(J / (m g l)) K(1/2) (the elliptic
//   integral) with the speed sqrt(2 m g l / J), and its impacts restitute implicit Euler's
//   (1 + (omega h)^2)^(-N/2), N = pi / atan(omega h), within 0.01 at omega h 0.01, 0.1 and 1;
// - Fig. 4's energy error at k 1e15 is semi-implicit Euler's on the rigid rod: E(t) - E(0) =
//   (h/2) theta' m g (L/2) sin theta + O(h^2) by the paper's n x n form (the first-order term of
//   the modified energy that semi-implicit Euler conserves: bounded, no drift), so its largest
//   value over the first second is (h/2) max of m g (L/2) theta' sin theta along the exact
//   swing, in closed form (RodModifiedEnergyPeak).
// (Fig. 4's max |phi| of order 2 is test G's, in first_order_step_test.cc.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "bench/drumwright_pendulum.h"

namespace alsim::bench {
namespace {

// From two free steps above the limit through the impact to five steps past the lift-off, each
// step taken from the same state by both paths; the run goes on with the scalar one.
TEST(DrumwrightPendulumTest, TheScalarLimitStepIsSolveFirstOrderStep) {
  const double speed = LimitPendulum::ImpactSpeed();
  for (const double h : {1e-5, 1e-6, 1e-7, 1e-8}) {
    LimitState s;
    s.theta = 2 * h * speed;
    s.rate = -speed;
    int contact_steps = 0, after = 0;
    for (int n = 0; n < 100000 && after < 5; ++n) {
      LimitState scalar = s, dense = s;
      LimitStep(&scalar, h);
      ASSERT_TRUE(LimitStepDense(&dense, h)) << "h " << h << " step " << n;
      const double scale =
          std::abs(s.rate) +
          h * (std::abs(scalar.lambda) + std::abs(LimitPendulum::Torque(s.theta))) /
              LimitPendulum::kJ;
      EXPECT_NEAR(scalar.rate, dense.rate, 1e-12 * scale) << "h " << h << " step " << n;
      EXPECT_NEAR(scalar.lambda, dense.lambda, 1e-12 * (1 + std::abs(scalar.lambda)))
          << "h " << h << " step " << n;
      EXPECT_NEAR(scalar.theta, dense.theta, 1e-12 * h * scale + 1e-18) << "h " << h;
      if (s.theta <= 0) ++contact_steps;
      if (contact_steps > 0 && scalar.theta > 0) ++after;
      s = scalar;
    }
    EXPECT_EQ(after, 5) << "h " << h;  // it left the limit
    EXPECT_GT(contact_steps, 0) << "h " << h;
  }
}

// The free swing by the paper's scheme (semi-implicit Euler without the row) from pi/2 reaches
// theta <= 0 within a step of the exact quarter period, at the exact speed to O(h).
TEST(DrumwrightPendulumTest, TheFreeSwingMeetsTheLimitAtTheEllipticQuarterPeriod) {
  const double quarter = LimitPendulum::ImpactTime(), speed = LimitPendulum::ImpactSpeed();
  // K(1/2) = 1.8540746773 (tables): the AGM's value.
  EXPECT_NEAR(quarter, std::sqrt(LimitPendulum::kL / LimitPendulum::kG) * 1.8540746773, 1e-9);
  for (const double h : {1e-5, 1e-6}) {
    const Impact impact =
        RunLimitPendulum(LimitState{}, h, quarter + 20 * h, [](double, const LimitState&) {});
    ASSERT_TRUE(impact.found) << h;
    EXPECT_NEAR(impact.t_in, quarter, h) << h;
    EXPECT_NEAR(-impact.rate_in, speed, 10 * h * speed) << h;
  }
}

// The impact entered at the limit (theta = 0, theta' = -sqrt(2 m g l / J)) with gravity's torque
// on: restitution against (1 + (omega h)^2)^(-N/2) (0.984, 0.855, 0.25), and against the
// digest's "dead" impact at omega h = 10 (0.007; under 0.03).
TEST(DrumwrightPendulumTest, TheLimitRestitutesImplicitEulersCoefficient) {
  for (const double omega_h : {0.01, 0.1, 1.0, 10.0}) {
    const double h = omega_h / LimitPendulum::Omega();
    LimitState s;
    s.theta = 0;
    s.rate = -LimitPendulum::ImpactSpeed();
    const Impact impact = RunLimitPendulum(s, h, 20e-6 + 10 * h, [](double, const LimitState&) {});
    ASSERT_TRUE(impact.found);
    ASSERT_GT(impact.t_out, 0) << "omega h " << omega_h << ": no lift-off";
    const double expected = ImplicitEulerRestitution(omega_h);
    if (omega_h < 5) {
      EXPECT_NEAR(impact.Restitution(), expected, 0.01) << "omega h " << omega_h;
      // N = pi / atan(omega h) steps in contact, to a step.
      EXPECT_NEAR(impact.contact_steps, kPi / std::atan(omega_h), 1.0) << "omega h " << omega_h;
    } else {
      EXPECT_LT(impact.Restitution(), 0.03);
    }
    std::printf("[ limit ] omega h %g: e %.4f (implicit Euler %.4f), %ld steps in contact\n",
                omega_h, impact.Restitution(), expected, impact.contact_steps);
  }
}

TEST(DrumwrightPendulumTest, TheRodsEnergyErrorIsSemiImplicitEulersModifiedEnergyTerm) {
  const double e0 = RodPendulum::Energy(RodPendulum::Start(), Eigen::Vector3d::Zero());
  std::vector<double> hs = {1e-3, 5e-4, 2.5e-4}, largest, residuals;
  for (const double h : hs) {
    double max_change = 0, max_residual = 0;
    const RodPendulumRun run =
        RunRodPendulum(1e15, h, 1.0, BilateralForm::kConstraintSpace,
                       [&](double, const Eigen::Vector3d& q, const Eigen::Vector3d& v) {
                         const double change = RodPendulum::Energy(q, v) - e0;
                         const double term = RodModifiedEnergyTerm(q, v, h);
                         max_change = std::max(max_change, std::abs(change));
                         max_residual = std::max(max_residual, std::abs(change - term));
                       });
    ASSERT_TRUE(run.ok) << h;
    const double predicted = h / 2 * RodModifiedEnergyPeak();
    EXPECT_NEAR(max_change, predicted, 0.02 * predicted) << h;
    EXPECT_LT(max_residual, 0.05 * max_change) << h;
    largest.push_back(max_change);
    residuals.push_back(max_residual);
    std::printf(
        "[ energy ] h %g: max |E - E0| %.4e J, (h/2) max c theta' sin theta %.4e J, "
        "residual %.2e J\n",
        h, max_change, predicted, max_residual);
  }
  EXPECT_NEAR(LogLogSlope(hs, largest), 1, 0.02);
  EXPECT_NEAR(LogLogSlope(hs, residuals), 2, 0.1);  // the o(h) is O(h^2)
}

}  // namespace
}  // namespace alsim::bench
