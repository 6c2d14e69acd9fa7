// ResetData / ApplyResetNoise / ResetWithNoise (engine/sim/reset.h): the model's initial state
// exactly, noise drawn in the documented order from the caller's generator, the solver kept.
#include "engine/sim/reset.h"

#include <gtest/gtest.h>

#include <random>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

constexpr char kHingeAndBall[] = R"(<mujoco><worldbody>
  <geom type="plane" size="5 5 0.1"/>
  <body pos="0 0 1"><joint type="hinge" axis="0 1 0"/><geom type="capsule" size="0.05 0.3"/>
    <body pos="0 0 -0.6"><joint type="slide" axis="1 0 0"/><geom type="sphere" size="0.1"/></body>
  </body>
  <body pos="1 0 0.5"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
</worldbody></mujoco>)";

std::shared_ptr<const Model> Load() {
  const ModelImport imported = ImportModelFromString(kHingeAndBall);
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

TEST(ResetTest, ResetDataRestoresTheInitialStateAndKeepsTheSolver) {
  const auto model = Load();
  Data d(*model);
  for (int k = 0; k < 50; ++k) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  ASSERT_GT(d.time, 0);
  const ConstraintSolver* solver = d.solver.get();
  ASSERT_NE(solver, nullptr);
  ResetData(*model, &d);
  const Data fresh(*model);
  EXPECT_EQ(d.time, 0);
  EXPECT_EQ(d.qpos, fresh.qpos);
  EXPECT_EQ(d.qvel, fresh.qvel);
  EXPECT_EQ(d.ctrl, fresh.ctrl);
  EXPECT_TRUE(d.warm_start.key.empty());
  EXPECT_EQ(d.solver.get(), solver);
}

// Uniform [-noise, noise] on the hinge and slide positions (not the free joint's), then on every
// velocity, from the generator in that order: the same draws as a copy of the generator makes.
TEST(ResetTest, NoiseFollowsTheGeneratorInJointThenDofOrder) {
  const auto model = Load();
  Data d(*model);
  std::mt19937_64 rng(42), reference(42);
  ASSERT_TRUE(ResetWithNoise(*model, 0.1, rng, &d));
  const Data fresh(*model);
  std::uniform_real_distribution<double> uniform(-0.1, 0.1);
  const double hinge = uniform(reference), slide = uniform(reference);
  EXPECT_EQ(d.qpos[0], fresh.qpos[0] + hinge);
  EXPECT_EQ(d.qpos[1], fresh.qpos[1] + slide);
  for (int i = 2; i < model->nq; ++i) EXPECT_EQ(d.qpos[i], fresh.qpos[i]) << i;  // free joint
  for (int i = 0; i < model->nv; ++i) EXPECT_EQ(d.qvel[i], uniform(reference)) << i;
  EXPECT_EQ(rng(), reference());  // both generators advanced alike
  // Kinematics ran: the free body's frame is where qpos0 puts it.
  EXPECT_EQ(d.xpos[3].z(), 0.5);
}

TEST(ResetTest, ZeroNoiseDrawsNothingAndNonFiniteNoiseIsReported) {
  const auto model = Load();
  Data d(*model);
  std::mt19937_64 rng(7), untouched(7);
  ASSERT_TRUE(ResetWithNoise(*model, 0, rng, &d));
  EXPECT_EQ(rng(), untouched());
  EXPECT_FALSE(ResetWithNoise(*model, 1e308 * 10, rng, &d));
}

}  // namespace
}  // namespace alsim
