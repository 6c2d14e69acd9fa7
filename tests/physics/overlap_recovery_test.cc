// Recovery from overlapped and limit-violating starts (issue 32): the bias that removes an error
// asks for at most ConstraintOptions::max_correction_speed, so the body returns without being
// thrown (before the cap, a 10 kg box started 5 cm into the floor at h = 1 ms left at 10 m/s).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"

namespace alsim {
namespace {

std::shared_ptr<const Model> Load(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

// A 10 kg cube of half-size 0.1 m started with its center 5 cm below its resting height (0.1 m).
TEST(OverlapRecoveryTest, BoxStartedInTheFloorSettlesWithoutBeingThrown) {
  const auto model = Load(R"(<mujoco><option timestep="0.001"/><worldbody>
    <geom type="plane" size="2 2 0.1"/>
    <body pos="0 0 0.05"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="10"/></body>
  </worldbody></mujoco>)");
  Data d(*model);
  const StepOptions options;
  const double rest = 0.1;
  const double cap = options.constraints.max_correction_speed;
  double highest = 0, fastest = 0;
  for (int k = 0; k < 2000; ++k) {
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk) << k;
    highest = std::max(highest, d.qpos[2]);
    fastest = std::max(fastest, d.qvel[2]);
  }
  // Pushed out at the cap (to the solver's tolerance), never faster; a body leaving the surface
  // at v rises v^2 / (2 g).
  EXPECT_LE(fastest, cap + 1e-5);
  EXPECT_GT(fastest, 0.5 * cap);
  EXPECT_LE(highest, rest + 1e-3);
  EXPECT_NEAR(d.qpos[2], rest, 1e-3);
  EXPECT_LT(std::abs(d.qvel[2]), 1e-3);
}

// A hinge started 0.5 rad past its upper limit returns into its range at the angular cap.
TEST(OverlapRecoveryTest, JointStartedPastItsLimitReturnsWithBoundedSpeed) {
  const auto model = Load(R"(<mujoco><option timestep="0.002" gravity="0 0 0"/><worldbody>
    <body><joint name="j" type="hinge" axis="0 1 0" limited="true" range="-0.5 0.5"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/></body>
  </worldbody></mujoco>)");
  Data d(*model);
  d.qpos[0] = 1.0;
  const StepOptions options;
  const double cap = options.constraints.max_correction_angular_speed;
  double fastest = 0;
  int back = -1;  // the first step that ends inside the range
  for (int k = 0; k < 1000; ++k) {
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk) << k;
    fastest = std::max(fastest, std::abs(d.qvel[0]));
    if (back < 0 && d.qpos[0] <= 0.5) back = k;
    // Back inside, it keeps the speed it returned with (no gravity, no damping) until the other
    // limit stops it: it stays within the range from then on.
    if (back >= 0) {
      EXPECT_LE(d.qpos[0], 0.5 + 1e-3) << k;
      EXPECT_GE(d.qpos[0], -0.5 - 1e-2) << k;
    }
  }
  EXPECT_LE(fastest, cap + 1e-5);
  EXPECT_GT(fastest, 0.5 * cap);
  // 0.5 rad at the cap takes 0.5 s (250 steps), plus the first steps that reach the cap.
  EXPECT_GE(back, 0);
  EXPECT_LT(back, 300);
}

}  // namespace
}  // namespace alsim
