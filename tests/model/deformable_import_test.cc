// Deformables through the importer (engine/model/model_import.cc, ConvertDeformables): the Model's
// arrays against closed forms (lumped masses sum to rho V, an n^3 voxel cube has 12 n^2 surface
// triangles enclosing its volume outward), attachments at qpos0, the errors naming the scene, and
// the sandbox's split compile (CompileSceneText + ImportCompiledScene) equal to one import.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "engine/model/deformable_spec.h"
#include "engine/model/model_import.h"
#include "tests/support/kuhn_grid.h"

namespace alsim {
namespace {

// An n^3 grid of voxels of edge a as an inline <tetmesh> (tests/support/kuhn_grid.h).
std::string VoxelCube(int n, double a) {
  return testing::TetMeshXml(testing::MakeKuhnGrid(n, n, n, a, a, a));
}

const char* kScene =
    "<mujoco><custom><text name='alsim:deformables' data='soft.xml'/></custom>"
    "<worldbody><geom type='plane' size='5 5 0.1'/>"
    "<body name='hand' pos='1 0 0' euler='0 0 90'><freejoint/><geom type='box' size='.1 .1 .1'/>"
    "</body></worldbody><actuator><motor name='push' joint='hinge_missing'/></actuator>"
    "</mujoco>";

// The scene above without the actuator (its joint does not exist).
std::string Scene() {
  std::string xml = kScene;
  const size_t at = xml.find("<actuator>");
  return xml.substr(0, at) + "</mujoco>";
}

ModelImport ImportWith(const std::string& companion, const std::string& scene = Scene()) {
  return ImportModelFromString(scene, {{"soft.xml", companion}}, "scene.xml");
}

TEST(DeformableImportTest, AVoxelCubeHasItsMassAndTwelveNSquaredOutwardTriangles) {
  for (const int n : {1, 2, 3}) {
    const double a = 0.05, rho = 1000;
    const ModelImport imported = ImportWith(
        "<deformables><deformable name='cube' young='1e5' density='1000' pos='0 0 0.5'>" +
        VoxelCube(n, a) + "</deformable></deformables>");
    ASSERT_TRUE(imported) << imported.error;
    const Model& m = *imported.model;
    ASSERT_EQ(m.ndeform, 1);
    EXPECT_EQ(m.nvert, (n + 1) * (n + 1) * (n + 1));
    EXPECT_EQ(m.ntet, 6 * n * n * n);
    EXPECT_EQ(m.deform_tri_num[0], 12 * n * n) << n;
    const double volume = n * n * n * a * a * a;
    double mass = 0, tet_volume = 0, enclosed = 0;
    for (const double v : m.vert_mass) mass += v;
    for (const double v : m.tet_volume) tet_volume += v;
    // Divergence theorem: sum over the surface of x0 . ((x1 - x0) x (x2 - x0)) / 6 is the volume
    // when every triangle is wound outward.
    for (const auto& t : m.tri_vert) {
      const Vec3 &x0 = m.vert_pos0[t[0]], &x1 = m.vert_pos0[t[1]], &x2 = m.vert_pos0[t[2]];
      enclosed += x0.dot((x1 - x0).cross(x2 - x0)) / 6;
    }
    EXPECT_NEAR(tet_volume, volume, 1e-15);
    EXPECT_NEAR(mass, rho * volume, 1e-12);
    EXPECT_NEAR(enclosed, volume, 1e-15) << n;
    // Dm^-1 maps the rest edges to the identity.
    for (int k = 0; k < m.ntet; ++k) {
      Mat3 dm;
      for (int c = 0; c < 3; ++c) {
        dm.col(c) = m.vert_pos0[m.tet_vert[k][c + 1]] - m.vert_pos0[m.tet_vert[k][0]];
      }
      EXPECT_LT((dm * m.tet_rest_inverse[k] - Mat3::Identity()).norm(), 1e-12);
    }
    for (int v = 0; v < m.nvert; ++v) EXPECT_EQ(m.vert_body[v], -1);
  }
}

TEST(DeformableImportTest, PinsAndAttachmentsResolveToBodiesAtQpos0) {
  const ModelImport imported = ImportWith(
      "<deformables><deformable name='pad' young='1e6' density='500' friction='0.9' "
      "rgba='0 1 0 1'><tetmesh vertices='1 0 0.2  1.1 0 0.2  1 0.1 0.2  1 0 0.3' "
      "tets='0 1 2 3'/><pin vertices='3'/><attach body='hand' vertices='1 2'/>"
      "<activation name='squeeze' tets='0' range='0 2'/></deformable></deformables>");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  EXPECT_EQ(m.deform_name[0], "pad");
  EXPECT_EQ(m.deform_friction[0], 0.9);
  EXPECT_EQ(m.vert_body[0], -1);
  EXPECT_EQ(m.vert_body[3], 0);
  EXPECT_EQ(m.vert_body[1], 1);
  // The hand at (1, 0, 0) turned 90 degrees about z: world (0.1, 0, 0.2) from its origin is
  // (0, -0.1, 0.2) in its frame; world (0, 0.1, 0.2) is (0.1, 0, 0.2).
  EXPECT_LT((m.vert_body_offset[1] - Vec3(0, -0.1, 0.2)).norm(), 1e-12);
  EXPECT_LT((m.vert_body_offset[2] - Vec3(0.1, 0, 0.2)).norm(), 1e-12);
  ASSERT_EQ(m.activation_name.size(), 1u);
  EXPECT_EQ(m.activation_name[0], "squeeze");
  EXPECT_EQ(m.activation_range[0][1], 2);
  EXPECT_EQ(m.activation_tet_num[0], 1);
  // The activation is the scene's action column after MuJoCo's actuators (here none): a named
  // actuator with its range and no force.
  ASSERT_EQ(m.nu, 1);
  EXPECT_EQ(m.activation_actuator[0], 0);
  EXPECT_EQ(m.actuator_name[0], "squeeze");
  EXPECT_EQ(m.actuator_transmission[0], ActuatorTransmission::kActivation);
  EXPECT_EQ(m.actuator_activation[0], 0);
  EXPECT_TRUE(m.actuator_ctrl_limited[0]);
  EXPECT_EQ(m.actuator_ctrl_lower[0], 0);
  EXPECT_EQ(m.actuator_ctrl_upper[0], 2);
}

// Activations follow MuJoCo's actuators in the action and keyframes keep their controls, the
// activations' at 0 clamped into range.
TEST(DeformableImportTest, ActivationsAreActionColumnsAfterTheActuators) {
  const std::string scene =
      "<mujoco><custom><text name='alsim:deformables' data='soft.xml'/></custom><worldbody>"
      "<body><joint name='j' type='slide'/><geom type='sphere' size='.1'/></body></worldbody>"
      "<actuator><motor name='push' joint='j' ctrlrange='-1 1' ctrllimited='true'/></actuator>"
      "<keyframe><key name='k' ctrl='0.5'/></keyframe></mujoco>";
  const ModelImport imported = ImportWith(
      "<deformables><deformable name='d' young='1e5' density='1000'>"
      "<tetmesh vertices='0 0 1 1 0 1 0 1 1 0 0 2' tets='0 1 2 3'/>"
      "<activation name='grow' tets='0' range='0.25 1'/></deformable></deformables>",
      scene);
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  ASSERT_EQ(m.nu, 2);
  EXPECT_EQ(m.actuator_name[0], "push");
  EXPECT_EQ(m.actuator_transmission[0], ActuatorTransmission::kJoint);
  EXPECT_EQ(m.actuator_activation[0], -1);
  EXPECT_EQ(m.actuator_name[1], "grow");
  EXPECT_EQ(m.actuator_transmission[1], ActuatorTransmission::kActivation);
  EXPECT_EQ(m.actuator_ctrl_lower[1], 0.25);
  ASSERT_EQ(m.key_ctrl.size(), 2u);
  EXPECT_EQ(m.key_ctrl[0], 0.5);
  EXPECT_EQ(m.key_ctrl[1], 0.25);
  EXPECT_TRUE(m.actuators_in_trees);  // an activation drives no tree
}

TEST(DeformableImportTest, ErrorsNameTheSceneOrTheCompanionFile) {
  const std::string tet = "<tetmesh vertices='0 0 0 1 0 0 0 1 0 0 0 1' tets='0 1 2 3'/>";
  EXPECT_NE(ImportWith("<deformables><deformable name='d' young='1' density='1'>" + tet +
                       "<attach body='foot' vertices='0'/></deformable></deformables>")
                .error.find("scene.xml: deformable 'd': no body named 'foot' to attach to"),
            std::string::npos);
  EXPECT_NE(ImportModelFromString(Scene(), {}, "scene.xml")
                .error.find("custom text 'alsim:deformables': no file 'soft.xml'"),
            std::string::npos);
  EXPECT_NE(ImportWith("<deformables><deformable name='d' young='-1' density='1'>" + tet +
                       "</deformable></deformables>")
                .error.find("soft.xml:1: deformable 'd': young must be > 0"),
            std::string::npos);
  // An activation takes an actuator's name space (its action column).
  const std::string with_actuator =
      "<mujoco><custom><text name='alsim:deformables' data='soft.xml'/></custom><worldbody>"
      "<body><joint name='j' type='slide'/><geom type='sphere' size='.1'/></body></worldbody>"
      "<actuator><motor name='push' joint='j'/></actuator></mujoco>";
  EXPECT_NE(ImportWith("<deformables><deformable name='d' young='1' density='1'>" + tet +
                           "<activation name='push' tets='0'/></deformable></deformables>",
                       with_actuator)
                .error.find("activation 'push' has the name of an actuator"),
            std::string::npos);
}

// The sandbox's split: the deformables parse where the scene compiles and cross as bytes.
TEST(DeformableImportTest, TheSplitCompileGivesTheSameDeformables) {
  const std::string companion =
      "<deformables><deformable name='cube' young='1e5' density='1000' pos='0 0 0.5'>" +
      VoxelCube(2, 0.1) + "<attach body='hand' vertices='0'/></deformable></deformables>";
  const ModelImport direct = ImportWith(companion);
  ASSERT_TRUE(direct) << direct.error;
  const CompiledScene compiled = CompileSceneText(Scene(), {{"soft.xml", companion}}, "scene.xml");
  ASSERT_EQ(compiled.error, "");
  ASSERT_FALSE(compiled.deformables.empty());
  const ModelImport split = ImportCompiledScene(compiled, "scene.xml");
  ASSERT_TRUE(split) << split.error;
  EXPECT_EQ(split.model->nvert, direct.model->nvert);
  EXPECT_EQ(split.model->vert_pos0, direct.model->vert_pos0);
  EXPECT_EQ(split.model->vert_mass, direct.model->vert_mass);
  EXPECT_EQ(split.model->tri_vert, direct.model->tri_vert);
  EXPECT_EQ(split.model->vert_body_offset, direct.model->vert_body_offset);
  // Corrupt deformable bytes are an error, never a crash.
  CompiledScene damaged = compiled;
  damaged.deformables.resize(damaged.deformables.size() / 2);
  EXPECT_NE(ImportCompiledScene(damaged, "scene.xml").error.find("deformables are corrupt"),
            std::string::npos);
  // A bad companion fails the compile itself.
  EXPECT_NE(CompileSceneText(Scene(), {{"soft.xml", "<deformables/>"}}, "scene.xml")
                .error.find("soft.xml:1: no <deformable>"),
            std::string::npos);
}

// A scene on disk reads its companion and meshes next to it.
TEST(DeformableImportTest, AFileSceneReadsItsCompanionFromItsDirectory) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/scene.xml") << Scene();
  std::ofstream(dir + "/soft.xml")
      << "<deformables><deformable name='t' young='1e5' density='1000' node='t.node' "
         "ele='t.ele'/></deformables>";
  std::ofstream(dir + "/t.node") << "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
  std::ofstream(dir + "/t.ele") << "1 4 0\n0 0 1 2 3\n";
  const ModelImport imported = ImportModelFromFile(dir + "/scene.xml");
  ASSERT_TRUE(imported) << imported.error;
  EXPECT_EQ(imported.model->ntet, 1);
  EXPECT_EQ(imported.model->deform_tri_num[0], 4);
  const CompiledScene compiled = CompileSceneFile(dir + "/scene.xml");
  ASSERT_EQ(compiled.error, "");
  EXPECT_FALSE(compiled.deformables.empty());
}

}  // namespace
}  // namespace alsim
