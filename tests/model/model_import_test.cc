// The importer against MuJoCo's own compiled model (the conversion must keep every number), on
// MuJoCo's sample scenes and on small scenes written here; and every way a scene can be bad.
#include "engine/model/model_import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace alsim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kSamples = "/usr/share/mujoco/model/";

struct MjModelDeleter {
  void operator()(mjModel* m) const { mj_deleteModel(m); }
};
using MjModelPtr = std::unique_ptr<mjModel, MjModelDeleter>;

MjModelPtr LoadWithMujoco(const std::string& path) {
  char error[1000] = "";
  MjModelPtr m(mj_loadXML(path.c_str(), nullptr, error, sizeof error));
  EXPECT_NE(m, nullptr) << error;
  return m;
}

void ExpectVec3(const Vec3& actual, const mjtNum* expected, const std::string& what) {
  for (int k = 0; k < 3; ++k) EXPECT_EQ(actual[k], expected[k]) << what << "[" << k << "]";
}
void ExpectQuat(const Quat& actual, const mjtNum* expected, const std::string& what) {
  for (int k = 0; k < 4; ++k) EXPECT_EQ(actual[k], expected[k]) << what << "[" << k << "]";
}

// Every converted number equals MuJoCo's compiled value exactly.
void ExpectSameAsMujoco(const Model& model, const mjModel* m) {
  ASSERT_EQ(model.nq, m->nq);
  ASSERT_EQ(model.nv, m->nv);
  ASSERT_EQ(model.nbody, m->nbody);
  ASSERT_EQ(model.njnt, m->njnt);
  ASSERT_EQ(model.ngeom, m->ngeom);
  ASSERT_EQ(model.nu, m->nu);
  ASSERT_EQ(model.nmesh, m->nmesh);
  for (int b = 0; b < m->nbody; ++b) {
    const std::string body = "body " + std::to_string(b);
    EXPECT_EQ(model.body_parent[b], b == 0 ? -1 : m->body_parentid[b]) << body;
    EXPECT_EQ(model.body_root[b], m->body_rootid[b]) << body;
    EXPECT_EQ(model.body_dof_num[b], m->body_dofnum[b]) << body;
    EXPECT_EQ(model.body_jnt_num[b], m->body_jntnum[b]) << body;
    EXPECT_EQ(model.body_mass[b], m->body_mass[b]) << body;
    ExpectVec3(model.body_pos[b], m->body_pos + 3 * b, body + " pos");
    ExpectQuat(model.body_quat[b], m->body_quat + 4 * b, body + " quat");
    ExpectVec3(model.body_ipos[b], m->body_ipos + 3 * b, body + " ipos");
    ExpectQuat(model.body_iquat[b], m->body_iquat + 4 * b, body + " iquat");
    ExpectVec3(model.body_inertia[b], m->body_inertia + 3 * b, body + " inertia");
  }
  for (int j = 0; j < m->njnt; ++j) {
    const std::string joint = "joint " + std::to_string(j);
    EXPECT_EQ(static_cast<int>(model.jnt_type[j]), m->jnt_type[j]) << joint;
    EXPECT_EQ(model.jnt_body[j], m->jnt_bodyid[j]) << joint;
    EXPECT_EQ(model.jnt_qpos_adr[j], m->jnt_qposadr[j]) << joint;
    EXPECT_EQ(model.jnt_dof_adr[j], m->jnt_dofadr[j]) << joint;
    ExpectVec3(model.jnt_pos[j], m->jnt_pos + 3 * j, joint + " pos");
    ExpectVec3(model.jnt_axis[j], m->jnt_axis + 3 * j, joint + " axis");
    EXPECT_EQ(model.jnt_stiffness[j], m->jnt_stiffness[j]) << joint;
    EXPECT_EQ(model.jnt_limited[j], m->jnt_limited[j] != 0) << joint;
    EXPECT_EQ(model.jnt_range_lower[j], m->jnt_range[2 * j]) << joint;
    EXPECT_EQ(model.jnt_range_upper[j], m->jnt_range[2 * j + 1]) << joint;
    EXPECT_EQ(model.jnt_name[j],
              mj_id2name(m, mjOBJ_JOINT, j) ? mj_id2name(m, mjOBJ_JOINT, j) : "");
  }
  for (int i = 0; i < m->nv; ++i) {
    EXPECT_EQ(model.dof_parent[i], m->dof_parentid[i]) << "dof " << i;
    EXPECT_EQ(model.dof_body[i], m->dof_bodyid[i]) << "dof " << i;
    EXPECT_EQ(model.dof_armature[i], m->dof_armature[i]) << "dof " << i;
    EXPECT_EQ(model.dof_damping[i], m->dof_damping[i]) << "dof " << i;
  }
  for (int i = 0; i < m->nq; ++i) {
    EXPECT_EQ(model.qpos0[i], m->qpos0[i]) << "qpos0 " << i;
    EXPECT_EQ(model.qpos_spring[i], m->qpos_spring[i]) << "qpos_spring " << i;
  }
  for (int g = 0; g < m->ngeom; ++g) {
    const std::string geom = "geom " + std::to_string(g);
    EXPECT_EQ(static_cast<int>(model.geom_type[g]), m->geom_type[g]) << geom;
    EXPECT_EQ(model.geom_body[g], m->geom_bodyid[g]) << geom;
    ExpectVec3(model.geom_pos[g], m->geom_pos + 3 * g, geom + " pos");
    ExpectQuat(model.geom_quat[g], m->geom_quat + 4 * g, geom + " quat");
    ExpectVec3(model.geom_size[g], m->geom_size + 3 * g, geom + " size");
    ExpectVec3(model.geom_friction[g], m->geom_friction + 3 * g, geom + " friction");
    EXPECT_EQ(model.geom_contype[g], m->geom_contype[g]) << geom;
    EXPECT_EQ(model.geom_conaffinity[g], m->geom_conaffinity[g]) << geom;
    EXPECT_EQ(model.geom_margin[g], m->geom_margin[g]) << geom;
    EXPECT_EQ(model.geom_rbound[g], m->geom_rbound[g]) << geom;
  }
  ASSERT_EQ(model.nsite, m->nsite);
  for (int i = 0; i < m->nsite; ++i) {
    EXPECT_EQ(model.site_body[i], m->site_bodyid[i]) << "site " << i;
    ExpectVec3(model.site_pos[i], m->site_pos + 3 * i, "site pos");
    ExpectQuat(model.site_quat[i], m->site_quat + 4 * i, "site quat");
  }
  for (int i = 0; i < m->nu; ++i) {
    if (m->actuator_trntype[i] == mjTRN_SLIDERCRANK) {
      EXPECT_EQ(model.actuator_transmission[i], ActuatorTransmission::kSliderCrank);
      EXPECT_EQ(model.actuator_crank_site[i], m->actuator_trnid[2 * i]) << "actuator " << i;
      EXPECT_EQ(model.actuator_slider_site[i], m->actuator_trnid[2 * i + 1]) << "actuator " << i;
      EXPECT_EQ(model.actuator_crank_length[i], m->actuator_cranklength[i]) << "actuator " << i;
    } else {
      EXPECT_EQ(model.actuator_transmission[i], ActuatorTransmission::kJoint);
      EXPECT_EQ(model.actuator_jnt[i], m->actuator_trnid[2 * i]) << "actuator " << i;
    }
    EXPECT_EQ(model.actuator_gear[i], m->actuator_gear[6 * i]) << "actuator " << i;
    EXPECT_EQ(model.actuator_gain[i], m->actuator_gainprm[i * mjNGAIN]) << "actuator " << i;
    EXPECT_EQ(model.actuator_ctrl_lower[i], m->actuator_ctrlrange[2 * i]) << "actuator " << i;
    EXPECT_EQ(model.actuator_ctrl_upper[i], m->actuator_ctrlrange[2 * i + 1]) << "actuator " << i;
  }
  for (int d = 0; d < 3; ++d) EXPECT_EQ(model.gravity[d], m->opt.gravity[d]);
}

// Subsystems tile the movable bodies and all dofs, each tree contiguous.
void ExpectSubsystemsPartitionTheDofs(const Model& model) {
  int next_dof = 0;
  for (int s = 0; s < model.nsubsystem; ++s) {
    EXPECT_EQ(model.subsystem_dof_adr[s], next_dof) << "subsystem " << s;
    next_dof += model.subsystem_dof_num[s];
    const int root = model.subsystem_root_body[s];
    EXPECT_EQ(model.body_parent[root], 0) << "subsystem " << s << " root hangs from the world";
    for (int b = 0; b < model.nbody; ++b) {
      const bool in_range = b >= model.subsystem_body_adr[s] &&
                            b < model.subsystem_body_adr[s] + model.subsystem_body_num[s];
      EXPECT_EQ(in_range, model.body_root[b] == root) << "body " << b;
    }
  }
  EXPECT_EQ(next_dof, model.nv);
  for (int i = 0; i < model.nv; ++i) {
    const int body = model.dof_body[i];
    ASSERT_GE(model.body_subsystem[body], 0) << "dof " << i << " moves a body of no subsystem";
    const int s = model.body_subsystem[body];
    EXPECT_GE(i, model.subsystem_dof_adr[s]);
    EXPECT_LT(i, model.subsystem_dof_adr[s] + model.subsystem_dof_num[s]);
  }
}

// The step's per-tree indexes: each body's geoms as MuJoCo lists them, and every joint actuator
// once, in its joint's subsystem, in actuator order.
void ExpectTreeIndexesMatch(const Model& model, const mjModel* m) {
  ASSERT_EQ(static_cast<int>(model.body_geom_adr.size()), model.nbody + 1);
  for (int b = 0; b < model.nbody; ++b) {
    const int num = model.body_geom_adr[b + 1] - model.body_geom_adr[b];
    EXPECT_EQ(num, m->body_geomnum[b]) << "body " << b;
    if (num > 0) {
      EXPECT_EQ(model.body_geom_adr[b], m->body_geomadr[b]) << "body " << b;
    }
  }
  ASSERT_EQ(static_cast<int>(model.subsystem_actuator_adr.size()), model.nsubsystem + 1);
  std::vector<int> seen(model.nu, 0);
  bool slider_crank = false;
  for (int j = 0; j < model.nsubsystem; ++j) {
    for (int k = model.subsystem_actuator_adr[j]; k < model.subsystem_actuator_adr[j + 1]; ++k) {
      const int a = model.subsystem_actuators[k];
      ++seen[a];
      EXPECT_EQ(model.body_subsystem[model.jnt_body[model.actuator_jnt[a]]], j);
      if (k > model.subsystem_actuator_adr[j]) {
        EXPECT_GT(a, model.subsystem_actuators[k - 1]);
      }
    }
  }
  for (int a = 0; a < model.nu; ++a) {
    const bool joint = m->actuator_trntype[a] != mjTRN_SLIDERCRANK;
    slider_crank = slider_crank || !joint;
    EXPECT_EQ(seen[a], joint ? 1 : 0) << "actuator " << a;
  }
  EXPECT_EQ(model.actuators_in_trees, !slider_crank);
}

class SampleModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SampleModelTest, ImportKeepsEveryNumberOfMujocosCompiledModel) {
  const std::string path = kSamples + GetParam();
  const ModelImport imported = ImportModelFromFile(path);
  ASSERT_TRUE(imported) << imported.error;
  const MjModelPtr m = LoadWithMujoco(path);
  ASSERT_NE(m, nullptr);
  ExpectSameAsMujoco(*imported.model, m.get());
  ExpectSubsystemsPartitionTheDofs(*imported.model);
  ExpectTreeIndexesMatch(*imported.model, m.get());
  // MuJoCo's timestep, set by the scene or MJCF's default.
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const bool sets_timestep = text.find("timestep=") != std::string::npos;
  EXPECT_EQ(imported.model->timestep, m->opt.timestep);
  if (!sets_timestep) {
    EXPECT_EQ(imported.model->timestep, kDefaultTimestep);
  }
}

INSTANTIATE_TEST_SUITE_P(MujocoSamples, SampleModelTest,
                         ::testing::Values("humanoid/humanoid.xml", "humanoid/22_humanoids.xml",
                                           "humanoid100/humanoid100.xml", "mug/mug.xml",
                                           "composite/rope.xml", "composite/loop.xml",
                                           "composite/particle.xml",
                                           "slider_crank/slider_crank.xml"));

TEST(ModelImportTest, HumanoidHasTheExpectedStructure) {
  const ModelImport imported = ImportModelFromFile(kSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& model = *imported.model;
  // A floating base (free joint: 7 qpos, 6 dofs) and 21 hinges; one actuator per hinge.
  EXPECT_EQ(model.nq, 7 + 21);
  EXPECT_EQ(model.nv, 6 + 21);
  EXPECT_EQ(model.nu, 21);
  EXPECT_EQ(model.jnt_type[0], JointType::kFree);
  EXPECT_EQ(model.nsubsystem, 1);
  EXPECT_EQ(model.subsystem_dof_num[0], 27);
}

TEST(ModelImportTest, TwentyTwoHumanoidsAreTwentyTwoSubsystems) {
  const ModelImport imported = ImportModelFromFile(kSamples + "humanoid/22_humanoids.xml");
  ASSERT_TRUE(imported) << imported.error;
  ASSERT_EQ(imported.model->nsubsystem, 22);
  for (int s = 0; s < 22; ++s) EXPECT_EQ(imported.model->subsystem_dof_num[s], 27);
}

TEST(ModelImportTest, ScenesWithForceProducingFeaturesAreRefusedByName) {
  const ModelImport arm = ImportModelFromFile(kSamples + "tendon_arm/arm26.xml");
  EXPECT_FALSE(arm);
  EXPECT_THAT(arm.error, StartsWith(kSamples + "tendon_arm/arm26.xml: "));
  EXPECT_THAT(arm.error, HasSubstr("tendon"));

  const ModelImport flag = ImportModelFromFile(kSamples + "flag/flag.xml");
  EXPECT_FALSE(flag);
  EXPECT_THAT(flag.error, HasSubstr("fluid forces"));
}

// ---- scenes from text ------------------------------------------------------------------------

// MJCF semantics: a scene without option/timestep runs at MJCF's default, MuJoCo's compiled
// value (the oracle), so that one file gives one motion in alsim and in MuJoCo.
TEST(ModelImportTest, TimestepIsMjcfsDefaultUnlessTheSceneSetsIt) {
  const std::string body = R"(<worldbody><body><freejoint/><geom size=".1"/></body></worldbody>)";
  const ModelImport unset = ImportModelFromString("<mujoco>" + body + "</mujoco>");
  ASSERT_TRUE(unset) << unset.error;
  char error[1000] = "";
  mjVFS vfs;
  mj_defaultVFS(&vfs);
  const std::string xml = "<mujoco>" + body + "</mujoco>";
  ASSERT_EQ(mj_makeEmptyFileVFS(&vfs, "unset.xml", static_cast<int>(xml.size())), 0);
  std::memcpy(vfs.filedata[vfs.nfile - 1], xml.data(), xml.size());
  mjModel* oracle = mj_loadXML("unset.xml", &vfs, error, sizeof(error));
  ASSERT_NE(oracle, nullptr) << error;
  EXPECT_EQ(unset.model->timestep, oracle->opt.timestep);
  EXPECT_EQ(unset.model->timestep, 0.002);
  mj_deleteModel(oracle);
  mj_deleteVFS(&vfs);

  // Even MuJoCo's own default value counts when the scene states it.
  const ModelImport explicit_default =
      ImportModelFromString(R"(<mujoco><option timestep="0.002"/>)" + body + "</mujoco>");
  ASSERT_TRUE(explicit_default) << explicit_default.error;
  EXPECT_DOUBLE_EQ(explicit_default.model->timestep, 0.002);

  // An option in an included file counts too.
  const ModelImport included =
      ImportModelFromString(R"(<mujoco><include file="options.xml"/>)" + body + "</mujoco>",
                            {{"options.xml", R"(<mujoco><option timestep="0.001"/></mujoco>)"}});
  ASSERT_TRUE(included) << included.error;
  EXPECT_DOUBLE_EQ(included.model->timestep, 0.001);
}

TEST(ModelImportTest, DisabledGravityIsZeroGravity) {
  const ModelImport imported = ImportModelFromString(
      R"(<mujoco><option><flag gravity="disable"/></option>
         <worldbody><body><freejoint/><geom size=".1"/></body></worldbody></mujoco>)");
  ASSERT_TRUE(imported) << imported.error;
  EXPECT_EQ(imported.model->gravity, Vec3::Zero());
}

TEST(ModelImportTest, UrdfLoadsThroughMujocosCompiler) {
  const ModelImport imported = ImportModelFromString(R"(<robot name="pendulum">
      <link name="base"/>
      <link name="arm">
        <inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
          <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.01"/></inertial>
      </link>
      <joint name="swing" type="revolute">
        <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
        <limit lower="-1" upper="1" effort="10" velocity="5"/>
      </joint>
    </robot>)",
                                                     {}, "pendulum.urdf");
  ASSERT_TRUE(imported) << imported.error;
  const Model& model = *imported.model;
  EXPECT_EQ(model.nv, 1);
  EXPECT_EQ(model.jnt_type[0], JointType::kHinge);
  EXPECT_EQ(model.jnt_name[0], "swing");
  EXPECT_TRUE(model.jnt_limited[0]);
  EXPECT_DOUBLE_EQ(model.jnt_range_upper[0], 1.0);
  EXPECT_DOUBLE_EQ(model.timestep, 0.002);  // MJCF's default: URDF sets none
  EXPECT_DOUBLE_EQ(model.body_mass[model.dof_body[0]], 2.0);
}

// A binary STL of the axis-aligned cube [-h, h]^3: 80-byte header, triangle count, then per
// triangle a normal, three vertices (float32) and a 2-byte attribute.
std::string CubeStl(float h) {
  const float corner[8][3] = {{-h, -h, -h}, {h, -h, -h}, {h, h, -h}, {-h, h, -h},
                              {-h, -h, h},  {h, -h, h},  {h, h, h},  {-h, h, h}};
  const int faces[12][3] = {{0, 2, 1}, {0, 3, 2}, {4, 5, 6}, {4, 6, 7}, {0, 1, 5}, {0, 5, 4},
                            {1, 2, 6}, {1, 6, 5}, {2, 3, 7}, {2, 7, 6}, {3, 0, 4}, {3, 4, 7}};
  std::string stl(80, '\0');
  const uint32_t count = 12;
  stl.append(reinterpret_cast<const char*>(&count), 4);
  for (const auto& face : faces) {
    const float normal[3] = {0, 0, 0};
    stl.append(reinterpret_cast<const char*>(normal), 12);
    for (int v : face) stl.append(reinterpret_cast<const char*>(corner[v]), 12);
    stl.append(2, '\0');
  }
  return stl;
}

TEST(ModelImportTest, MeshAssetsComeAsBytesAndKeepTheirHull) {
  const ModelImport imported = ImportModelFromString(R"(<mujoco>
      <asset><mesh name="cube" file="meshes/cube.stl"/></asset>
      <worldbody><body><freejoint/><geom type="mesh" mesh="cube"/></body></worldbody>
    </mujoco>)",
                                                     {{"cube.stl", CubeStl(0.5f)}});
  ASSERT_TRUE(imported) << imported.error;
  const Model& model = *imported.model;
  ASSERT_EQ(model.nmesh, 1);
  EXPECT_EQ(model.geom_mesh[0], 0);
  std::set<std::tuple<double, double, double>> distinct;
  for (int v = 0; v < model.mesh_vert_num[0]; ++v) {
    const Vec3& p = model.mesh_vert[model.mesh_vert_adr[0] + v];
    EXPECT_NEAR(p.cwiseAbs().maxCoeff(), 0.5, 1e-6) << "vertex " << v << " is on the cube";
    distinct.emplace(p.x(), p.y(), p.z());
  }
  EXPECT_EQ(distinct.size(), 8u);
  // The hull of a cube: 6 square faces, 12 triangles, every index a valid vertex.
  EXPECT_EQ(model.mesh_hull_face_num[0], 12);
  for (int f = 0; f < model.mesh_hull_face_num[0]; ++f) {
    const auto& t = model.mesh_hull_face[model.mesh_hull_face_adr[0] + f];
    EXPECT_GE(t.minCoeff(), 0);
    EXPECT_LT(t.maxCoeff(), model.mesh_vert_num[0]);
  }
  // MuJoCo computes the inertia of the solid cube: mass = density * volume = 1000 kg.
  EXPECT_NEAR(model.body_mass[1], 1000.0, 1e-6);
}

TEST(ModelImportTest, EqualityDataKeepsAnchorsAndRelativePose) {
  const ModelImport imported = ImportModelFromString(R"(<mujoco><worldbody>
      <body name="a" pos="0 0 1"><freejoint/><geom size=".1"/></body>
      <body name="b" pos="0.5 0 1"><freejoint/><geom size=".1"/></body></worldbody>
      <equality>
        <connect body1="a" body2="b" anchor="0.1 0.2 0.3"/>
        <weld body1="a" body2="b" relpose="1 2 3 1 0 0 0"/>
      </equality></mujoco>)");
  ASSERT_TRUE(imported) << imported.error;
  const Model& model = *imported.model;
  ASSERT_EQ(model.neq, 2);
  EXPECT_EQ(model.eq_type[0], EqualityType::kConnect);
  EXPECT_EQ(model.eq_anchor[0], Vec3(0.1, 0.2, 0.3));
  EXPECT_EQ(model.eq_type[1], EqualityType::kWeld);
  EXPECT_EQ(model.eq_relpos[1], Vec3(1, 2, 3));
  EXPECT_EQ(model.eq_relquat[1], Quat(1, 0, 0, 0));
  EXPECT_EQ(model.eq_body1[1], 1);
  EXPECT_EQ(model.eq_body2[1], 2);
}

TEST(ModelImportTest, IgnoredFeaturesAreReportedAsWarnings) {
  const ModelImport imported = ImportModelFromString(R"(<mujoco><worldbody>
      <body><joint name="j" type="hinge" frictionloss="0.5"/><geom size=".1" condim="6"/>
        <site name="s"/></body></worldbody>
      <sensor><jointpos joint="j"/></sensor>
      <keyframe><key qpos="0.3"/></keyframe></mujoco>)");
  ASSERT_TRUE(imported) << imported.error;
  const std::string all = ::testing::PrintToString(imported.model->warnings);
  EXPECT_THAT(all, HasSubstr("1 sensor(s) ignored"));
  EXPECT_THAT(all, ::testing::Not(HasSubstr("keyframe")));  // imported (keyframe_test.cc)
  EXPECT_THAT(all, ::testing::Not(HasSubstr("frictionloss")));
  // condim 4 and 6 are modelled (torsional and rolling rows), not ignored: no warning.
  EXPECT_THAT(all, ::testing::Not(HasSubstr("condim")));
  EXPECT_EQ(imported.model->high_condim_geom, 0);
}

// Joint frictionloss is modelled (a friction row per dof, engine/constraint): imported per dof,
// with MuJoCo's disable flag honoured and no warning.
TEST(ModelImportTest, FrictionlossIsImportedPerDofAndItsFlagHonoured) {
  const auto scene = [](const std::string& option) {
    return "<mujoco>" + option + R"(<worldbody>
      <body><joint type="hinge" frictionloss="0.5"/><geom size=".1"/>
        <body pos="0 0 -.3"><joint type="ball" frictionloss="0.25"/><geom size=".1"/>
          <body pos="0 0 -.3"><joint type="slide"/><geom size=".1"/></body></body></body>
      </worldbody></mujoco>)";
  };
  const ModelImport imported = ImportModelFromString(scene(""));
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  EXPECT_TRUE(m.frictionloss_enabled);
  EXPECT_EQ(m.dof_frictionloss, (std::vector<double>{0.5, 0.25, 0.25, 0.25, 0}));
  const ModelImport disabled =
      ImportModelFromString(scene(R"(<option><flag frictionloss="disable"/></option>)"));
  ASSERT_TRUE(disabled) << disabled.error;
  EXPECT_FALSE(disabled.model->frictionloss_enabled);
  EXPECT_THAT(disabled.model->warnings, ::testing::IsEmpty());
}

// ---- bad scenes: an error value naming the file and line, never an exit -------------------

TEST(ModelImportTest, MalformedXmlNamesTheLine) {
  const ModelImport imported = ImportModelFromString(
      "<mujoco>\n  <worldbody>\n    <body>\n      <geom size=\"0.1\"\n  </worldbody>\n</mujoco>\n",
      {}, "broken.xml");
  EXPECT_FALSE(imported);
  EXPECT_THAT(imported.error, StartsWith("broken.xml:4: "));
  EXPECT_THAT(imported.error, HasSubstr("XML"));
}

TEST(ModelImportTest, UnknownElementNamesItAndTheLine) {
  const ModelImport imported = ImportModelFromString(
      "<mujoco>\n  <worldbody>\n    <body>\n      <bogus/>\n    </body>\n  </worldbody>\n</mujoco>",
      {}, "scene.xml");
  EXPECT_FALSE(imported);
  EXPECT_THAT(imported.error, StartsWith("scene.xml:4: "));
  EXPECT_THAT(imported.error, HasSubstr("'bogus'"));
  EXPECT_EQ(imported.error.find('\n'), std::string::npos) << "one line";
}

TEST(ModelImportTest, MissingMeshAssetNamesTheFile) {
  const ModelImport imported = ImportModelFromString(
      "<mujoco>\n  <asset>\n    <mesh name=\"m\" file=\"missing.stl\"/>\n  </asset>\n"
      "  <worldbody><geom type=\"mesh\" mesh=\"m\"/></worldbody>\n</mujoco>",
      {}, "scene.xml");
  EXPECT_FALSE(imported);
  EXPECT_THAT(imported.error, StartsWith("scene.xml:3: "));
  EXPECT_THAT(imported.error, HasSubstr("missing.stl"));
}

TEST(ModelImportTest, MissingFileIsAnError) {
  const ModelImport imported = ImportModelFromFile("/nonexistent/scene.xml");
  EXPECT_FALSE(imported);
  EXPECT_EQ(imported.error, "/nonexistent/scene.xml: cannot open the file");
}

TEST(ModelImportTest, DuplicateAssetIsAnError) {
  const ModelImport imported =
      ImportModelFromString("<mujoco/>", {{"a.stl", "x"}, {"dir/a.stl", "y"}}, "scene.xml");
  EXPECT_FALSE(imported);
  EXPECT_THAT(imported.error, HasSubstr("asset 'a.stl' given twice"));
}

// libmujoco 2.2.2 leaks on an <include> of a directory; the importer refuses it first, naming it,
// in the main text and in an included asset alike (scene_import_fuzzer's finding).
TEST(ModelImportTest, AnIncludeOfADirectoryIsAnError) {
  // The include forms are read as MuJoCo's parser reads them (scene_import_fuzzer's findings):
  // the element name in any case, entities decoded, a '>' inside a quoted value, '\' a separator.
  const std::vector<std::pair<std::string, std::string>> refused = {
      {R"(<include file="/dev/"/>)", "/dev/"}, {R"(<include file="sub/"/>)", "sub/"},
      {R"(<inClude file="/dev/"/>)", "/dev/"}, {R"(<INCLUDE file="sub/"/>)", "sub/"},
      {R"(<include file="et>v/"/>)", "et>v/"}, {R"(<include file="/dev&#47;"/>)", "/dev/"},
      {R"(<include file="sub\"/>)", "sub\\"},
  };
  for (const auto& [include, file] : refused) {
    const std::string xml = "<mujoco>" + include + "</mujoco>";
    const ModelImport direct = ImportModelFromString(xml, {}, "s.xml");
    EXPECT_FALSE(direct) << include;
    EXPECT_THAT(direct.error, HasSubstr("<include file=\"" + file + "\"> names a directory"));
    const CompiledScene compiled = CompileSceneText(xml, {}, "s.xml");
    EXPECT_TRUE(compiled.mjb.empty()) << include;
    EXPECT_THAT(compiled.error, HasSubstr("names a directory"));
  }
  const ModelImport nested =
      ImportModelFromString("<mujoco><include file=\"a.xml\"/></mujoco>",
                            {{"a.xml", "<mujoco><include file=\"d/\"/></mujoco>"}}, "s.xml");
  EXPECT_THAT(nested.error, HasSubstr("<include file=\"d/\"> names a directory"));
}

// Comments and the include's case as MuJoCo reads them, beyond the refusals above.
TEST(ModelImportTest, IncludesAreReadAsMujocoReadsThem) {
  // A commented-out include is not one.
  const std::string body = R"(<worldbody><body><freejoint/><geom size=".1"/></body></worldbody>)";
  const ModelImport commented =
      ImportModelFromString(R"(<mujoco><!-- <include file="sub/"/> -->)" + body + "</mujoco>");
  EXPECT_TRUE(commented) << commented.error;

  // An option in a file included by <INCLUDE> sets the timestep, as MuJoCo compiles it.
  const ModelImport upper =
      ImportModelFromString(R"(<mujoco><INCLUDE file="options.xml"/>)" + body + "</mujoco>",
                            {{"options.xml", R"(<mujoco><option timestep="0.001"/></mujoco>)"}});
  ASSERT_TRUE(upper) << upper.error;
  EXPECT_DOUBLE_EQ(upper.model->timestep, 0.001);
}

TEST(ModelImportTest, ConcurrentImportsAreSerializedAndAllSucceed) {
  std::vector<ModelImport> results(4);
  std::vector<std::thread> threads;
  threads.reserve(results.size());
  for (auto& result : results) {
    threads.emplace_back(
        [&result] { result = ImportModelFromFile(kSamples + "humanoid/humanoid.xml"); });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) {
    ASSERT_TRUE(result) << result.error;
    EXPECT_EQ(result.model->nv, 27);
  }
}

// ---- what a client could send to crash a server (issue: hardening) ----------------------

// Each was an exit(1) from inside mj_makeEmptyFileVFS: now an error value.
TEST(ModelImportTest, EmptyTextEmptyAssetsAndOverlongNamesAreErrors) {
  EXPECT_THAT(ImportModelFromString("", {}, "scene.xml").error, HasSubstr("scene text is empty"));
  EXPECT_THAT(ImportModelFromString("<mujoco/>", {{"empty.stl", ""}}, "scene.xml").error,
              HasSubstr("'empty.stl' is empty"));
  const std::string long_name(1000, 'a');
  EXPECT_THAT(ImportModelFromString("<mujoco/>", {}, long_name).error, HasSubstr("MuJoCo's limit"));
  EXPECT_THAT(ImportModelFromString("<mujoco/>", {{long_name, "x"}}, "scene.xml").error,
              HasSubstr("MuJoCo's limit is 999"));
  EXPECT_THAT(CompileSceneText("", {}, "scene.xml").error, HasSubstr("scene text is empty"));
  EXPECT_THAT(CompileSceneText("<mujoco/>", {{"x.stl", ""}}, "scene.xml").error,
              HasSubstr("is empty"));
  // The process is still fine, and MuJoCo still compiles.
  EXPECT_TRUE(ImportModelFromString("<mujoco/>"));
}

// A file that includes itself many times is read once (it cost k^9 reads; found by fuzzing).
TEST(ModelImportTest, RepeatedIncludesAreReadOnce) {
  std::string fanout = "<mujoco>";
  for (int k = 0; k < 8; ++k) fanout += "<include file=\"loop.xml\"/>";
  fanout += "</mujoco>";
  const auto started = std::chrono::steady_clock::now();
  const CompiledScene compiled =
      CompileSceneText(fanout, {{"loop.xml", fanout}, {"t.xml", "<mujoco/>"}}, "scene.xml");
  EXPECT_FALSE(compiled.error.empty()) << "MuJoCo refuses the recursion itself";
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  // And a timestep set in a file included twice is still found.
  const CompiledScene twice = CompileSceneText(
      "<mujoco><include file=\"a.xml\"/><include file=\"a.xml\"/>"
      "<worldbody><body><freejoint/><geom size=\".1\"/></body></worldbody></mujoco>",
      {{"a.xml", "<mujoco><option timestep=\"0.01\"/></mujoco>"}}, "scene.xml");
  EXPECT_TRUE(twice.sets_timestep);
}

TEST(ModelImportTest, TimestepMustBePositive) {
  for (const char* timestep : {"0", "-0.01"}) {
    const ModelImport imported = ImportModelFromString(
        std::string(R"(<mujoco><option timestep=")") + timestep +
            R"("/><worldbody><body><freejoint/><geom size=".1"/></body></worldbody></mujoco>)",
        {}, "scene.xml");
    EXPECT_FALSE(imported) << timestep;
    EXPECT_THAT(imported.error, HasSubstr("not a positive number of seconds")) << timestep;
  }
}

// The split import (compile to MuJoCo's binary model, then convert) gives the direct import's
// model, number for number, for a scene with a mesh asset and an include.
TEST(ModelImportTest, CompiledSceneImportsAsTheDirectImport) {
  const std::string scene = R"(<mujoco><include file="parts/options.xml"/>
      <asset><mesh name="cube" file="meshes/cube.stl"/></asset>
      <worldbody><geom type="plane" size="1 1 .1"/>
        <body pos="0 0 1"><freejoint/><geom type="mesh" mesh="cube"/></body></worldbody>
    </mujoco>)";
  const std::vector<ModelAsset> assets = {
      {"cube.stl", CubeStl(0.25f)},
      {"options.xml", R"(<mujoco><option timestep="0.005" gravity="0 0 -3"/></mujoco>)"}};
  const ModelImport direct = ImportModelFromString(scene, assets, "scene.xml");
  ASSERT_TRUE(direct) << direct.error;
  const CompiledScene compiled = CompileSceneText(scene, assets, "scene.xml");
  ASSERT_TRUE(compiled.error.empty()) << compiled.error;
  EXPECT_TRUE(compiled.sets_timestep) << "found through the included asset";
  const ModelImport split = ImportCompiledScene(compiled, "scene.xml");
  ASSERT_TRUE(split) << split.error;
  EXPECT_EQ(split.model->timestep, 0.005);
  EXPECT_EQ(split.model->gravity, direct.model->gravity);
  EXPECT_EQ(split.model->body_mass, direct.model->body_mass);
  EXPECT_EQ(split.model->mesh_vert, direct.model->mesh_vert);
  EXPECT_EQ(split.model->mesh_hull_face, direct.model->mesh_hull_face);
  EXPECT_EQ(split.model->geom_size, direct.model->geom_size);
}

TEST(ModelImportTest, ACorruptCompiledSceneIsAnError) {
  CompiledScene compiled = CompileSceneText(
      "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>", {},
      "scene.xml");
  ASSERT_TRUE(compiled.error.empty()) << compiled.error;
  for (const std::size_t keep : {std::size_t{0}, std::size_t{7}, compiled.mjb.size() / 2}) {
    CompiledScene cut = compiled;
    cut.mjb.resize(keep);
    EXPECT_FALSE(ImportCompiledScene(cut, "scene.xml")) << keep << " bytes";
  }
  CompiledScene scrambled = compiled;
  for (std::size_t i = 0; i < 16 && i < scrambled.mjb.size(); ++i) scrambled.mjb[i] ^= 0x5a;
  EXPECT_FALSE(ImportCompiledScene(scrambled, "scene.xml"));
}

}  // namespace
}  // namespace alsim
