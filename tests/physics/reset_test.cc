// ResetData / ApplyResetNoise / ResetWithNoise (engine/sim/reset.h): the model's initial state
// exactly, noise drawn in the documented order from the caller's generator, the solver kept.
#include "engine/sim/reset.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include <Eigen/Geometry>

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

// A tet with one free vertex (0), two carried by the hinged arm (1, 2) and one pinned in the
// world (3), from a companion file (custom text alsim:deformables).
std::shared_ptr<const Model> LoadWithDeformable() {
  const char* scene =
      "<mujoco><custom><text name='alsim:deformables' data='soft.xml'/></custom><worldbody>"
      "<body name='arm' pos='0 0 1'><joint type='hinge' axis='0 1 0'/>"
      "<geom type='capsule' size='0.05 0.3'/></body></worldbody>"
      "<keyframe><key qpos='0.5'/></keyframe></mujoco>";
  const char* soft =
      "<deformables><deformable name='pad' young='1e6' density='500'>"
      "<tetmesh vertices='1 0 0.2  0.3 0 1.2  0.3 0.1 1  1 0.1 0.3' tets='0 2 1 3'/>"
      "<pin vertices='3'/><attach body='arm' vertices='1 2'/></deformable></deformables>";
  const ModelImport imported = ImportModelFromString(scene, {{"soft.xml", soft}}, "scene.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

// The vertex state: rest positions and zero velocity from construction, ResetData and
// ResetDataKeyframe; ApplyResetNoise then puts the carried vertices at their body (here the arm
// turned by the keyframe's 0.5 rad about y through (0, 0, 1)) and leaves the others at rest.
TEST(ResetTest, VerticesStartAtRestAndFollowTheirBodyAfterKinematics) {
  const auto model = LoadWithDeformable();
  ASSERT_NE(model, nullptr);
  ASSERT_EQ(model->nvert, 4);
  ASSERT_EQ(model->vert_body[1], 1);
  ASSERT_EQ(model->vert_body[3], 0);
  Data d(*model);
  ASSERT_EQ(d.vert_xpos.size(), 4u);
  EXPECT_EQ(d.vert_xpos, model->vert_pos0);
  EXPECT_EQ(d.vert_xvel, std::vector<Vec3>(4, Vec3::Zero()));
  d.vert_xpos[0] = Vec3(5, 6, 7);
  d.vert_xvel[2] = Vec3(1, 2, 3);
  ResetData(*model, &d);
  EXPECT_EQ(d.vert_xpos, model->vert_pos0);
  EXPECT_EQ(d.vert_xvel, std::vector<Vec3>(4, Vec3::Zero()));

  d.vert_xvel[1] = Vec3(1, 2, 3);
  ASSERT_TRUE(ResetDataKeyframe(*model, &d, 0));
  EXPECT_EQ(d.qpos[0], 0.5);
  EXPECT_EQ(d.vert_xpos, model->vert_pos0);  // rest positions until kinematics
  EXPECT_EQ(d.vert_xvel[1], Vec3::Zero());
  std::mt19937_64 rng(1);
  ASSERT_TRUE(ApplyResetNoise(*model, 0, rng, &d));
  const Vec3 anchor(0, 0, 1);
  const Mat3 turn = Eigen::AngleAxisd(0.5, Vec3::UnitY()).toRotationMatrix();
  for (const int v : {1, 2}) {
    const Vec3 expected = anchor + turn * (model->vert_pos0[v] - anchor);
    EXPECT_LT((d.vert_xpos[v] - expected).norm(), 1e-12) << v;
    EXPECT_EQ(d.vert_xvel[v], Vec3::Zero()) << v;
  }
  EXPECT_EQ(d.vert_xpos[0], model->vert_pos0[0]);  // free
  EXPECT_EQ(d.vert_xpos[3], model->vert_pos0[3]);  // pinned in the world

  // At qpos0 the carried vertices land on their rest positions, to rounding.
  ASSERT_TRUE(ResetWithNoise(*model, 0, rng, &d));
  for (int v = 0; v < model->nvert; ++v) {
    EXPECT_LT((d.vert_xpos[v] - model->vert_pos0[v]).norm(), 1e-12) << v;
  }
}

}  // namespace
}  // namespace alsim
