// Drumwright's stack of spheres (Sec. 6.5; digest seed-003-drumwright.md 9.6 and test D's static
// equilibrium; bench/drumwright_stack.h): five steel spheres (radius 0.05 m, 4.08 kg) dropped from
// 5 mm gaps onto the ground, E* 1e11 Pa, B_n 1, mu 0.5, B_t = 1e6 / h, zeta = 1 / h, h 10 ms, with
// the linearized Hertz row (bench/drumwright_hertz.h). After 200 steps (2 s) every contact rests
// at Hertz's static depth under the weight above it, d_k = ((5 - k) m g / (E* sqrt(r_eff)))^(2/3)
// (r_eff = r on the ground, r / 2 between spheres: 4.31e-6 m on the ground, 4.68e-6 m above the
// bottom sphere), to 1%, the column has not drifted sideways, and nothing moves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "bench/drumwright_stack.h"

namespace alsim {
namespace {

TEST(DrumwrightStackTest, FiveSpheresSettleToTheHertzStaticDepths) {
  bench::StackParameters stack;
  stack.spheres = 5;
  const bench::StackRun run = bench::DropStack(stack, 200);
  ASSERT_TRUE(run.ok) << "step " << run.failed_step;
  ASSERT_EQ(run.depth.size(), 5u);
  const double mass = 7800 * 4.0 / 3.0 * 3.14159265358979323846 * std::pow(0.05, 3);
  for (int k = 0; k < 5; ++k) {
    const double radius = k == 0 ? 0.05 : 0.025;
    const double load = (5 - k) * mass * 9.8;
    const double hertz = std::pow(load / (1e11 * std::sqrt(radius)), 2.0 / 3.0);
    EXPECT_NEAR(run.depth[k], hertz, 0.01 * hertz) << k;
    std::printf("[ stack ] contact %d: depth %.6e m, Hertz %.6e m\n", k, run.depth[k], hertz);
  }
  EXPECT_NEAR(run.depth[0], 4.31e-6, 0.005e-6);
  EXPECT_NEAR(run.depth[1], 4.68e-6, 0.005e-6);
  EXPECT_LT(run.max_drift, 1e-9);
  EXPECT_LT(run.max_speed, 1e-6);
}

}  // namespace
}  // namespace alsim
