// MJCF semantics (issue 32): every value a scene leaves unset is MuJoCo 2.2.2's default, so one
// file gives one motion in alsim and in MuJoCo. The scene below sets only what it must (sizes,
// positions, joint types, actuator kinds); each imported field is compared with MuJoCo's compiled
// model, then both step the scene without constraints and must follow one trajectory.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <string>

#include "engine/model/model.h"
#include "engine/sim/step.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

constexpr char kDefaultsScene[] = R"(<mujoco model="defaults">
  <worldbody>
    <geom type="plane" size="2 2 .1"/>
    <body name="torso" pos="0 0 1">
      <freejoint/>
      <geom type="box" size=".1 .15 .2"/>
      <body name="arm" pos=".1 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
        <body name="forearm" pos=".3 0 0">
          <joint name="elbow" type="hinge"/>
          <geom type="cylinder" size=".02 .1" pos=".1 0 0" euler="0 90 0"/>
          <body name="hand" pos=".2 0 0">
            <joint name="wrist" type="ball"/>
            <geom type="ellipsoid" size=".04 .03 .02"/>
          </body>
        </body>
      </body>
      <body name="slider" pos="-.1 0 0">
        <joint name="slide" type="slide" axis="1 0 0"/>
        <geom type="sphere" size=".05"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="shoulder"/>
    <position joint="elbow"/>
    <velocity joint="slide"/>
  </actuator>
</mujoco>)";

TEST(MjcfDefaultsTest, EveryValueTheSceneLeavesUnsetIsMujocos) {
  testing::OracleScene scene(testing::WriteTempScene("defaults.xml", kDefaultsScene));
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  const mjModel* mj = scene.mj_model();
  EXPECT_EQ(m.timestep, mj->opt.timestep);
  EXPECT_EQ(m.timestep, 0.002);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(m.gravity[i], mj->opt.gravity[i]);
  ASSERT_EQ(m.nbody, mj->nbody);
  for (int b = 0; b < m.nbody; ++b) {
    EXPECT_EQ(m.body_mass[b], mj->body_mass[b]) << b;  // density 1000 kg/m^3
    for (int i = 0; i < 3; ++i) EXPECT_EQ(m.body_inertia[b][i], mj->body_inertia[3 * b + i]) << b;
  }
  ASSERT_EQ(m.njnt, mj->njnt);
  for (int j = 0; j < m.njnt; ++j) {
    EXPECT_EQ(m.jnt_stiffness[j], mj->jnt_stiffness[j]) << j;
    EXPECT_EQ(m.jnt_limited[j], mj->jnt_limited[j] != 0) << j;
    for (int i = 0; i < 3; ++i) EXPECT_EQ(m.jnt_axis[j][i], mj->jnt_axis[3 * j + i]) << j;
  }
  ASSERT_EQ(m.nv, mj->nv);
  for (int i = 0; i < m.nv; ++i) {
    EXPECT_EQ(m.dof_armature[i], mj->dof_armature[i]) << i;
    EXPECT_EQ(m.dof_damping[i], mj->dof_damping[i]) << i;
    EXPECT_EQ(m.dof_frictionloss[i], mj->dof_frictionloss[i]) << i;
  }
  ASSERT_EQ(m.ngeom, mj->ngeom);
  for (int g = 0; g < m.ngeom; ++g) {
    for (int i = 0; i < 3; ++i) EXPECT_EQ(m.geom_friction[g][i], mj->geom_friction[3 * g + i]);
    EXPECT_EQ(m.geom_condim[g], mj->geom_condim[g]) << g;
    EXPECT_EQ(m.geom_margin[g], mj->geom_margin[g]) << g;
    EXPECT_EQ(m.geom_gap[g], mj->geom_gap[g]) << g;
    EXPECT_EQ(m.geom_contype[g], mj->geom_contype[g]) << g;
    EXPECT_EQ(m.geom_conaffinity[g], mj->geom_conaffinity[g]) << g;
    EXPECT_EQ(m.geom_priority[g], mj->geom_priority[g]) << g;
  }
  EXPECT_EQ(m.geom_friction[0][0], 1.0);  // MJCF's sliding friction
  ASSERT_EQ(m.nu, mj->nu);
  for (int a = 0; a < m.nu; ++a) {
    EXPECT_EQ(m.actuator_gear[a], mj->actuator_gear[6 * a]) << a;
    EXPECT_EQ(m.actuator_gain[a], mj->actuator_gainprm[mjNGAIN * a]) << a;
    EXPECT_EQ(m.actuator_bias1[a], mj->actuator_biasprm[mjNBIAS * a + 1]) << a;
    EXPECT_EQ(m.actuator_bias2[a], mj->actuator_biasprm[mjNBIAS * a + 2]) << a;
    EXPECT_EQ(m.actuator_ctrl_limited[a], mj->actuator_ctrllimited[a] != 0) << a;
    EXPECT_EQ(m.actuator_force_limited[a], mj->actuator_forcelimited[a] != 0) << a;
  }
  for (int i = 0; i < m.nq; ++i) EXPECT_EQ(m.qpos0[i], mj->qpos0[i]) << i;
}

// The same defaults in motion: with constraints off in both, alsim's step (theta = 0) is
// MuJoCo's Euler step (see step_test.cc), servos included as explicit forces.
TEST(MjcfDefaultsTest, TheDefaultsSceneMovesAsInMujoco) {
  testing::OracleScene scene(testing::WriteTempScene("defaults_motion.xml", kDefaultsScene));
  ASSERT_TRUE(scene.ok());
  scene.DisableConstraints();
  const Model& m = scene.model();
  Data& d = scene.data();
  mjData* md = scene.mj_data();
  for (int a = 0; a < m.nu; ++a) d.ctrl[a] = md->ctrl[a] = 0.3 * (a + 1);
  StepOptions options;
  options.constraints.implicit_servos = false;  // MuJoCo's Euler applies them explicitly
  for (int n = 0; n < 200; ++n) {
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << n;
    mj_step(scene.mutable_mj_model(), md);
  }
  double worst = 0;
  for (int i = 0; i < m.nq; ++i) worst = std::max(worst, std::abs(d.qpos[i] - md->qpos[i]));
  EXPECT_LT(worst, 1e-8);
  EXPECT_GT(std::abs(md->qpos[2] - 1.0), 0.1);  // it fell: the trajectory is not trivial
}

}  // namespace
}  // namespace alsim
