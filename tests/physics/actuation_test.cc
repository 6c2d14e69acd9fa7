// Actuator lengths, forces and joint forces against MuJoCo's mj_forward at random states.
#include "engine/dynamics/actuation.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <random>

#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"

namespace alsim {
namespace {

void ExpectActuationMatchesMujoco(const std::string& path) {
  const ModelImport imported = ImportModelFromFile(path);
  ASSERT_TRUE(imported) << imported.error;
  const Model& model = *imported.model;
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(m, nullptr) << error;
  mjData* md = mj_makeData(m);
  Data d(model);

  std::mt19937 random(11);
  std::uniform_real_distribution<double> angle(-3.0, 3.0), unit(-1.0, 1.0);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 20; ++trial) {
    mj_resetData(m, md);
    for (int j = 0; j < m->njnt; ++j) {
      double* q = md->qpos + m->jnt_qposadr[j];
      if (m->jnt_type[j] == mjJNT_HINGE || m->jnt_type[j] == mjJNT_SLIDE) q[0] = angle(random);
    }
    for (int i = 0; i < m->nv; ++i) md->qvel[i] = normal(random);
    // Up to twice the control range, so that clamping is exercised.
    for (int u = 0; u < m->nu; ++u) {
      const double half = m->actuator_ctrllimited[u]
                              ? m->actuator_ctrlrange[2 * u + 1] - m->actuator_ctrlrange[2 * u]
                              : 1.0;
      md->ctrl[u] = half * unit(random);
    }
    mj_forward(m, md);
    std::copy(md->qpos, md->qpos + m->nq, d.qpos.begin());
    std::copy(md->qvel, md->qvel + m->nv, d.qvel.begin());
    std::copy(md->ctrl, md->ctrl + m->nu, d.ctrl.begin());
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
  mj_deleteData(md);
  mj_deleteModel(m);
}

TEST(ActuationTest, SliderCrankTransmissionsMatchMujoco) {
  ExpectActuationMatchesMujoco("/usr/share/mujoco/model/slider_crank/slider_crank.xml");
}

TEST(ActuationTest, JointMotorsMatchMujoco) {
  ExpectActuationMatchesMujoco("/usr/share/mujoco/model/humanoid/humanoid.xml");
}

TEST(ActuationTest, PositionAndVelocityServosMatchMujoco) {
  const ModelImport probe = ImportModelFromString("<mujoco/>");
  ASSERT_TRUE(probe) << probe.error;
  const std::string path = ::testing::TempDir() + "servos.xml";
  FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs(R"(<mujoco><worldbody>
      <body><joint name="a" type="hinge"/><geom size=".1" fromto="0 0 0 .3 0 0" type="capsule"/>
        <body pos=".3 0 0"><joint name="b" type="slide" axis="1 0 0"/>
          <geom size=".05" type="sphere"/></body></body></worldbody>
      <actuator>
        <position joint="a" kp="20" gear="2" ctrlrange="-1 1" ctrllimited="true"/>
        <velocity joint="b" kv="3" forcerange="-0.5 0.5" forcelimited="true"/>
        <motor joint="b" gear="-1.5"/>
      </actuator></mujoco>)",
             file);
  std::fclose(file);
  ExpectActuationMatchesMujoco(path);
}

}  // namespace
}  // namespace alsim
