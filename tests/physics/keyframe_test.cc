// Keyframes (Model::key_*, ResetDataKeyframe in engine/sim/reset.h, KeyframeId and FindKeyframe
// in engine/model/model.h) against MuJoCo's mj_resetDataKeyframe: the reset state exactly, one
// step from it within the one-step oracle tolerance of tests/solver/mujoco_solver_test.cc, the
// reset noise on top, a legged robot standing from its `home` key, and bad names and indices
// refused with the scene's keyframes named and nothing changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/model/model_import.h"
#include "engine/sim/reset.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::ExpectNear;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::OracleScene;
using testing::WriteTempScene;

// A free sphere over a floor, a two-hinge arm with a motor and a position servo; three keyframes:
// one setting every field (time, the sphere touching the floor and moving, the arm bent and
// swinging, both controls), an unnamed one setting qpos only, and one setting qvel only.
constexpr char kArmAndBall[] = R"(<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size="0.1" friction="0.8"/></body>
    <body name="arm" pos="1 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      <body pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" limited="true" range="-1 1"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="shoulder" gear="2" ctrllimited="true" ctrlrange="-1 1"/>
    <position joint="elbow" kp="20"/>
  </actuator>
  <keyframe>
    <key name="drop" time="1.5" qpos="0.1 -0.2 0.099 0.9238795325112867 0 0.3826834323650898 0 0.4 -0.3"
         qvel="0.7 -0.3 -0.2 0.5 1 -2 1.5 -0.5" ctrl="0.3 0.2"/>
    <key qpos="0.5 0.5 0.5 1 0 0 0 -0.7 0.9"/>
    <key name="spin" qvel="0 0 0 0 0 30 0 0"/>
  </keyframe>
</mujoco>)";

// A Menagerie-like quadruped: a free torso, hip and knee hinges driven by position servos, joint
// damping as velocity actuators (MuJoCo 2.2.2's Euler step and alsim's theta method discretize
// joint damping differently under contact, which is not what this test is about), sphere feet.
// qpos0 holds its legs straight with the torso 0.5 m up, so it falls; its `home` key bends the
// knees with the feet on the floor and sets the servos' targets to that pose, as Menagerie's
// robots do.
std::string Quadruped() {
  std::string legs, servos, dampers;
  const char* names[] = {"fl", "fr", "rl", "rr"};
  const double x[] = {0.2, 0.2, -0.2, -0.2}, y[] = {0.1, -0.1, 0.1, -0.1};
  const std::string segment =
      "<geom type='capsule' fromto='0 0 0 0 0 -0.2' size='0.02' mass='0.3' contype='0' "
      "conaffinity='0'/>";
  for (int k = 0; k < 4; ++k) {
    const std::string leg = names[k];
    legs += "<body pos='" + std::to_string(x[k]) + " " + std::to_string(y[k]) + " 0'>";
    legs += "<joint name='" + leg + "_hip' type='hinge' axis='0 1 0'/>" + segment;
    legs += "<body pos='0 0 -0.2'><joint name='" + leg + "_knee' type='hinge' axis='0 1 0'/>";
    legs += segment + "<geom type='sphere' pos='0 0 -0.2' size='0.02' mass='0.05'/></body></body>";
    for (const char* joint : {"_hip", "_knee"}) {
      servos += "<position joint='" + leg + joint + "' kp='60'/>";
      dampers += "<velocity joint='" + leg + joint + "' kv='1'/>";
    }
  }
  // Feet 1 mm into the floor at hip 0.6 and knee -1.2 rad (both engines then see the contacts;
  // at zero distance round-off decides): the torso 0.4 cos(0.6) + 0.019 m up.
  std::string home_qpos = "0 0 " + std::to_string(0.4 * std::cos(0.6) + 0.019) + " 1 0 0 0";
  std::string home_ctrl;
  for (int k = 0; k < 4; ++k) {
    home_qpos += " 0.6 -1.2";
    home_ctrl += "0.6 -1.2 ";
  }
  home_ctrl += "0 0 0 0 0 0 0 0";  // the dampers' target velocities
  return "<mujoco model='quadruped'><option timestep='0.002'/><worldbody>"
         "<geom name='floor' type='plane' size='5 5 0.1' friction='1'/>"
         "<body name='torso' pos='0 0 0.5'><freejoint/><geom type='box' size='0.25 0.12 0.04' "
         "mass='4' contype='0' conaffinity='0'/>" +
         legs + "</body></worldbody><actuator>" + servos + dampers +
         "</actuator><keyframe><key name='home' qpos='" + home_qpos + "' ctrl='" + home_ctrl +
         "'/></keyframe></mujoco>";
}

StepOptions MujocoOptions() {
  StepOptions options;
  options.solver.type = SolverType::kMujoco;
  options.solver.mujoco.tolerance = 1e-12;
  options.constraints.implicit_servos = false;  // MuJoCo's Euler applies them explicitly
  return options;
}

Eigen::VectorXd Vector(const double* values, int size) {
  return Eigen::Map<const Eigen::VectorXd>(values, size);
}

// Resets both engines to each keyframe (alsim's Data stepped first, so that the reset has
// something to undo) and expects MuJoCo's state exactly, then one step of --solver mujoco to
// match mj_step within the one-step oracle tolerance.
void ExpectEveryKeyframeMatchesMujoco(const std::string& name, const std::string& xml) {
  OracleScene scene(WriteTempScene(name + ".xml", xml));
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  mjData* md = scene.mj_data();
  scene.mutable_mj_model()->opt.tolerance = 1e-12;
  ASSERT_EQ(m.nkey, scene.mj_model()->nkey);
  ASSERT_GT(m.nkey, 0);
  for (int key = 0; key < m.nkey; ++key) {
    SCOPED_TRACE(name + " keyframe " + std::to_string(key));
    for (int n = 0; n < 5; ++n) ASSERT_EQ(Step(m, d, MujocoOptions()), StepStatus::kOk);
    ASSERT_TRUE(ResetDataKeyframe(m, &d, key));
    mj_resetDataKeyframe(scene.mj_model(), md, key);
    EXPECT_EQ(d.time, md->time);
    EXPECT_EQ(d.qpos, std::vector<double>(md->qpos, md->qpos + m.nq));
    EXPECT_EQ(d.qvel, std::vector<double>(md->qvel, md->qvel + m.nv));
    EXPECT_EQ(d.ctrl, std::vector<double>(md->ctrl, md->ctrl + m.nu));
    EXPECT_EQ(scene.mj_model()->na, 0);  // no activations to compare
    EXPECT_TRUE(d.warm_start.key.empty());

    ASSERT_EQ(Step(m, d, MujocoOptions()), StepStatus::kOk);
    mj_step(scene.mj_model(), md);
    EXPECT_EQ(d.time, md->time);
    ExpectNear(Vector(d.qvel.data(), m.nv), Vector(md->qvel, m.nv), 1e-6, "qvel");
    ExpectNear(Vector(d.qpos.data(), m.nq), Vector(md->qpos, m.nq), 1e-6, "qpos");
  }
}

TEST(KeyframeTest, ImportKeepsEveryKeyframeAsMujocoCompilesIt) {
  const ModelImport imported = ImportModelFromString(kArmAndBall);
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  ASSERT_EQ(m.nkey, 3);
  EXPECT_EQ(m.key_name, (std::vector<std::string>{"drop", "", "spin"}));
  EXPECT_EQ(m.key_time, (std::vector<double>{1.5, 0, 0}));
  ASSERT_EQ(m.key_qpos.size(), 3u * m.nq);
  ASSERT_EQ(m.key_qvel.size(), 3u * m.nv);
  ASSERT_EQ(m.key_ctrl.size(), 3u * m.nu);
  // The unnamed key sets qpos only: zero velocity and controls.
  EXPECT_EQ(m.key_qpos[m.nq + 7], -0.7);
  for (int i = 0; i < m.nv; ++i) EXPECT_EQ(m.key_qvel[m.nv + i], 0.0);
  // The spin key sets qvel only: qpos0 there.
  for (int i = 0; i < m.nq; ++i) EXPECT_EQ(m.key_qpos[2 * m.nq + i], m.qpos0[i]);
  EXPECT_EQ(m.key_qvel[2 * m.nv + 5], 30.0);
  EXPECT_EQ(m.key_ctrl[1], 0.2);
  for (const std::string& warning : m.warnings) EXPECT_THAT(warning, Not(HasSubstr("keyframe")));
}

TEST(KeyframeTest, ResetToEachKeyframeIsMujocosAndItsStepAgrees) {
  ExpectEveryKeyframeMatchesMujoco("keyframe_arm_and_ball", kArmAndBall);
}

TEST(KeyframeTest, QuadrupedHomeResetIsMujocosAndItsStepAgrees) {
  ExpectEveryKeyframeMatchesMujoco("keyframe_quadruped", Quadruped());
}

// Menagerie's robots stand only from their `home` key: from it, with its controls held, the
// quadruped stays up and level, under --solver mujoco where MuJoCo's does and under the default
// solver; from qpos0 (zero controls) it falls onto straight legs instead.
TEST(KeyframeTest, QuadrupedStandsFromItsHomeKeyframe) {
  OracleScene scene(WriteTempScene("keyframe_quadruped_stand.xml", Quadruped()));
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  mjData* md = scene.mj_data();
  const int home = KeyframeId(m, "home");
  ASSERT_EQ(home, 0);
  const double home_z = m.key_qpos[static_cast<std::size_t>(home) * m.nq + 2];
  const auto run = [&](const StepOptions& options, bool with_mujoco) {
    for (int n = 0; n < 500; ++n) {
      ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << "step " << n;
      if (with_mujoco) mj_step(scene.mj_model(), md);
    }
  };
  ASSERT_TRUE(ResetDataKeyframe(m, &d, home));
  mj_resetDataKeyframe(scene.mj_model(), md, home);
  run(MujocoOptions(), true);
  EXPECT_NEAR(d.qpos[2], home_z, 0.01) << "the torso stays up";
  EXPECT_NEAR(d.qpos[3], 1.0, 1e-3) << "and level";
  EXPECT_NEAR(d.qpos[2], md->qpos[2], 1e-3) << "where MuJoCo's does";

  ASSERT_TRUE(ResetDataKeyframe(m, &d, home));
  run(StepOptions(), false);
  EXPECT_NEAR(d.qpos[2], home_z, 0.01) << "the torso stays up under the default solver";
  EXPECT_NEAR(d.qpos[3], 1.0, 1e-3);

  ResetData(m, &d);
  EXPECT_EQ(d.qpos[2], 0.5);
  run(StepOptions(), false);
  EXPECT_GT(d.qpos[2], home_z + 0.05) << "from qpos0 it stands on straight legs";
}

// The reset noise goes on top of the keyframe's state: the keyframe's hinge positions and
// velocities plus the draws of a copy of the generator, in ApplyResetNoise's order.
TEST(KeyframeTest, ResetNoiseIsAddedToTheKeyframeState) {
  const ModelImport imported = ImportModelFromString(kArmAndBall);
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  std::mt19937_64 rng(5), reference(5);
  ASSERT_TRUE(ResetDataKeyframe(m, &d, 0));
  ASSERT_TRUE(ApplyResetNoise(m, 0.1, rng, &d));
  std::uniform_real_distribution<double> uniform(-0.1, 0.1);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(d.qpos[i], m.key_qpos[i]) << i;  // the free joint
  EXPECT_EQ(d.qpos[7], m.key_qpos[7] + uniform(reference));
  EXPECT_EQ(d.qpos[8], m.key_qpos[8] + uniform(reference));
  for (int i = 0; i < m.nv; ++i) EXPECT_EQ(d.qvel[i], m.key_qvel[i] + uniform(reference)) << i;
  EXPECT_EQ(d.time, 1.5);
  EXPECT_EQ(d.ctrl, (std::vector<double>{0.3, 0.2}));
  EXPECT_EQ(rng(), reference());
  // Kinematics ran on the noisy state: the ball is where the keyframe puts it.
  EXPECT_EQ(d.xpos[1].z(), m.key_qpos[2]);
}

TEST(KeyframeTest, NamesAndIndicesAreLookedUp) {
  const ModelImport imported = ImportModelFromString(kArmAndBall);
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  EXPECT_EQ(KeyframeId(m, "drop"), 0);
  EXPECT_EQ(KeyframeId(m, "spin"), 2);
  EXPECT_EQ(KeyframeId(m, ""), -1);  // the unnamed keyframe has no name to find
  EXPECT_EQ(KeyframeId(m, "home"), -1);
  int key = -1;
  EXPECT_EQ(FindKeyframe(m, "spin", &key), "");
  EXPECT_EQ(key, 2);
  EXPECT_EQ(FindKeyframe(m, "1", &key), "");
  EXPECT_EQ(key, 1);
  EXPECT_EQ(FindKeyframe(m, "0", &key), "");
  EXPECT_EQ(key, 0);
  EXPECT_EQ(DescribeKeyframes(m), "0 'drop', 1 (unnamed), 2 'spin'");

  // A name wins over an index.
  const ModelImport numbered = ImportModelFromString(R"(<mujoco><worldbody><body>
      <joint type="slide"/><geom size="0.1"/></body></worldbody>
      <keyframe><key name="first" qpos="1"/><key name="0" qpos="2"/></keyframe></mujoco>)");
  ASSERT_TRUE(numbered) << numbered.error;
  EXPECT_EQ(FindKeyframe(*numbered.model, "0", &key), "");
  EXPECT_EQ(key, 1);
  EXPECT_EQ(FindKeyframe(*numbered.model, "1", &key), "");
  EXPECT_EQ(key, 1);
}

TEST(KeyframeTest, UnknownNamesAndIndicesAreRefusedAndChangeNothing) {
  const ModelImport imported = ImportModelFromString(kArmAndBall);
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  int key = 7;
  for (const std::string spec : {"home", "3", "-1", "+1", "1.0", " 1", "", "99999999999"}) {
    const std::string error = FindKeyframe(m, spec, &key);
    EXPECT_THAT(error, HasSubstr("the scene's keyframes: 0 'drop', 1 (unnamed), 2 'spin'")) << spec;
    EXPECT_EQ(key, 7) << spec;
  }
  EXPECT_THAT(FindKeyframe(m, "home", &key), HasSubstr("no keyframe is named 'home'"));
  EXPECT_THAT(FindKeyframe(m, "3", &key), HasSubstr("keyframe index 3 is out of range"));

  Data d(m);
  for (int n = 0; n < 10; ++n) ASSERT_EQ(Step(m, d), StepStatus::kOk);
  const double time = d.time;
  const std::vector<double> qpos = d.qpos, qvel = d.qvel;
  d.ctrl = {0.5, -0.5};
  for (const int bad : {3, -2, 1 << 30}) {
    EXPECT_FALSE(ResetDataKeyframe(m, &d, bad)) << bad;
    EXPECT_EQ(d.time, time);
    EXPECT_EQ(d.qpos, qpos);
    EXPECT_EQ(d.qvel, qvel);
    EXPECT_EQ(d.ctrl, (std::vector<double>{0.5, -0.5}));
  }
  // -1 is the model's initial state, as ResetData.
  ASSERT_TRUE(ResetDataKeyframe(m, &d, -1));
  EXPECT_EQ(d.time, 0);
  EXPECT_EQ(d.qpos, m.qpos0);
  EXPECT_EQ(d.ctrl, (std::vector<double>{0, 0}));

  const ModelImport none = ImportModelFromString("<mujoco><worldbody/></mujoco>");
  ASSERT_TRUE(none) << none.error;
  EXPECT_EQ(FindKeyframe(*none.model, "0", &key),
            "keyframe index 0 is out of range; the scene's keyframes: none");
}

// alsim has no mocap state: a keyframe that moves a mocap body is imported without that pose,
// with a warning naming both; one that leaves it where the model puts it warns of nothing.
TEST(KeyframeTest, AKeyframeThatMovesAMocapBodyIsReported) {
  const std::string scene = R"(<mujoco><worldbody>
      <body name="target" mocap="true" pos="1 2 3"><geom size="0.1" contype="0" conaffinity="0"/></body>
      <body><joint type="slide"/><geom size="0.1"/></body></worldbody>
      <keyframe><key name="still" qpos="0.5"/><key name="moved" mpos="4 5 6"/></keyframe></mujoco>)";
  const ModelImport imported = ImportModelFromString(scene);
  ASSERT_TRUE(imported) << imported.error;
  const std::string all = ::testing::PrintToString(imported.model->warnings);
  EXPECT_THAT(all, HasSubstr("keyframe 'moved' moves mocap body 'target'"));
  EXPECT_THAT(all, Not(HasSubstr("'still'")));
  EXPECT_EQ(imported.model->nkey, 2);
}

}  // namespace
}  // namespace alsim
