// Actuator lengths, forces and joint forces against MuJoCo's mj_forward at random states.
#include "engine/dynamics/actuation.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <random>

#include "engine/dynamics/kinematics.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

void ExpectActuationMatchesMujoco(const std::string& path) {
  testing::OracleScene scene(path);
  ASSERT_TRUE(scene.ok());
  const Model& model = scene.model();
  Data& d = scene.data();
  const mjModel* m = scene.mj_model();
  mjData* md = scene.mj_data();

  std::mt19937 random(11);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 20; ++trial) {
    scene.SetRandomState(random);
    // Up to twice the control range, so that clamping is exercised.
    for (int u = 0; u < m->nu; ++u) {
      const double half = m->actuator_ctrllimited[u]
                              ? m->actuator_ctrlrange[2 * u + 1] - m->actuator_ctrlrange[2 * u]
                              : 1.0;
      d.ctrl[u] = md->ctrl[u] = half * unit(random);
    }
    mj_forward(m, md);
    Kinematics(model, d);
    ActuatorForces(model, d);

    for (int u = 0; u < m->nu; ++u) {
      const double scale = std::max(1.0, std::abs(md->actuator_length[u]));
      EXPECT_NEAR(d.actuator_length[u], md->actuator_length[u], 1e-10 * scale)
          << path << " actuator " << u << " trial " << trial;
      EXPECT_NEAR(d.actuator_force[u], md->actuator_force[u],
                  1e-9 * std::max(1.0, std::abs(md->actuator_force[u])))
          << path << " actuator " << u << " trial " << trial;
    }
    for (int i = 0; i < m->nv; ++i) {
      EXPECT_NEAR(d.qfrc_actuator[i], md->qfrc_actuator[i],
                  1e-9 * std::max(1.0, std::abs(md->qfrc_actuator[i])))
          << path << " dof " << i << " trial " << trial;
    }
  }
}

TEST(ActuationTest, SliderCrankTransmissionsMatchMujoco) {
  ExpectActuationMatchesMujoco(testing::kMujocoSamples + "slider_crank/slider_crank.xml");
}

TEST(ActuationTest, JointMotorsMatchMujoco) {
  ExpectActuationMatchesMujoco(testing::kMujocoSamples + "humanoid/humanoid.xml");
}

TEST(ActuationTest, PositionAndVelocityServosMatchMujoco) {
  ExpectActuationMatchesMujoco(testing::WriteTempScene("servos.xml", R"(<mujoco><worldbody>
      <body><joint name="a" type="hinge"/><geom size=".1" fromto="0 0 0 .3 0 0" type="capsule"/>
        <body pos=".3 0 0"><joint name="b" type="slide" axis="1 0 0"/>
          <geom size=".05" type="sphere"/></body></body></worldbody>
      <actuator>
        <position joint="a" kp="20" gear="2" ctrlrange="-1 1" ctrllimited="true"/>
        <velocity joint="b" kv="3" forcerange="-0.5 0.5" forcelimited="true"/>
        <motor joint="b" gear="-1.5"/>
      </actuator></mujoco>)"));
}

}  // namespace
}  // namespace alsim
