// The project's scenes (scenes/*.xml) import as designed: sizes, masses, servos, friction and
// collision filters, and their initial states, checked with the engine's own kinematics and
// collision detection (nothing overlaps; the quadrupeds' q = 0 posture stands on its four feet).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "engine/collision/collision.h"
#include "engine/core/parallel.h"
#include "engine/data/data.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"

namespace alsim {
namespace {

const std::string kScenes = std::string(ALSIM_SCENES_DIR) + "/";

std::shared_ptr<const Model> LoadScene(const std::string& file) {
  const ModelImport imported = ImportModelFromFile(kScenes + file);
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

std::string ReadScene(const std::string& file) {
  std::ifstream in(kScenes + file);
  EXPECT_TRUE(in) << file;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// MuJoCo's rule: two geoms may collide when either one's contype meets the other's conaffinity.
bool MayCollide(const Model& m, int g1, int g2) {
  return (m.geom_contype[g1] & m.geom_conaffinity[g2]) != 0 ||
         (m.geom_contype[g2] & m.geom_conaffinity[g1]) != 0;
}

// Lowest world z of a sphere, capsule or box at the current kinematics.
double LowestZ(const Model& m, const Data& d, int g) {
  const Vec3& size = m.geom_size[g];
  const Mat3& r = d.geom_xmat[g];
  const double z = d.geom_xpos[g].z();
  switch (m.geom_type[g]) {
    case GeomType::kSphere:
      return z - size[0];
    case GeomType::kCapsule:
      return z - size[0] - size[1] * std::abs(r(2, 2));
    case GeomType::kBox:
      return z - (size[0] * std::abs(r(2, 0)) + size[1] * std::abs(r(2, 1)) +
                  size[2] * std::abs(r(2, 2)));
    default:
      ADD_FAILURE() << "no lowest point for geom " << g;
      return 0;
  }
}

std::vector<Contact> ContactsAt(const Model& m, Data& d) {
  Kinematics(m, d);
  Collision(m, d);
  return d.contact;
}

// ---- what every scene shares ---------------------------------------------------------------

class EveryScene : public ::testing::TestWithParam<const char*> {};

TEST_P(EveryScene, LoadsWithoutWarningsAt240HzWithPrimitiveGeomsAndPlainContacts) {
  const auto model = LoadScene(GetParam());
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  EXPECT_EQ(m.timestep, 1.0 / 240.0);
  EXPECT_EQ(m.gravity, Vec3(0, 0, -9.81));
  EXPECT_TRUE(m.contact_enabled);
  EXPECT_EQ(m.neq, 0);
  EXPECT_EQ(m.npair, 0);
  EXPECT_EQ(m.nexclude, 0);
  int planes = 0;
  for (int g = 0; g < m.ngeom; ++g) {
    const GeomType type = m.geom_type[g];
    EXPECT_TRUE(type == GeomType::kPlane || type == GeomType::kBox || type == GeomType::kSphere ||
                type == GeomType::kCapsule)
        << "geom " << m.geom_name[g];
    planes += type == GeomType::kPlane;
    EXPECT_EQ(m.geom_condim[g], 3) << m.geom_name[g];
    EXPECT_EQ(m.geom_margin[g], 0) << m.geom_name[g];
    EXPECT_EQ(m.geom_gap[g], 0) << m.geom_name[g];
    EXPECT_GT(m.geom_friction[g][0], 0) << m.geom_name[g];
  }
  EXPECT_EQ(planes, 1);
  for (int b = 1; b < m.nbody; ++b) EXPECT_GT(m.body_mass[b], 0) << m.body_name[b];
  for (int j = 0; j < m.njnt; ++j) {
    if (m.jnt_type[j] == JointType::kFree) continue;
    EXPECT_TRUE(m.jnt_limited[j]) << m.jnt_name[j];
    EXPECT_LT(m.jnt_range_lower[j], 0) << m.jnt_name[j];
    EXPECT_GT(m.jnt_range_upper[j], 0) << m.jnt_name[j];
  }
}

// Nothing starts overlapping: every contact in the initial state is at distance >= 0 (round-off).
TEST_P(EveryScene, StartsWithoutOverlaps) {
  const auto model = LoadScene(GetParam());
  ASSERT_NE(model, nullptr);
  Data d(*model);
  for (const Contact& c : ContactsAt(*model, d)) {
    EXPECT_GT(c.dist, -1e-12) << model->geom_name[c.geom1] << " / " << model->geom_name[c.geom2];
  }
}

INSTANTIATE_TEST_SUITE_P(Scenes, EveryScene,
                         ::testing::Values("quadruped_drop_8.xml", "quadruped_drop_27.xml",
                                           "box_stack.xml", "box_incline.xml", "ball_pile.xml",
                                           "heavy_on_light.xml", "heavy_on_three_light.xml",
                                           "frictionloss_arm.xml", "tendon_gripper.xml"));

// ---- the mesh scenes (issue 32) --------------------------------------------------------------

class MeshScene : public ::testing::TestWithParam<const char*> {};

// Every geom but the floor is a convex mesh of thousands of vertices with MuJoCo's hull graph
// (the support walks need it); 1/240 s, plain contacts, limited hinges, no overlap at the start.
TEST_P(MeshScene, LoadsWithHullGraphsOfThousandsOfVerticesAndStartsApart) {
  const auto model = LoadScene(GetParam());
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  EXPECT_EQ(m.timestep, 1.0 / 240.0);
  int planes = 0;
  for (int g = 0; g < m.ngeom; ++g) {
    EXPECT_EQ(m.geom_condim[g], 3) << m.geom_name[g];
    EXPECT_EQ(m.geom_margin[g], 0) << m.geom_name[g];
    if (m.geom_type[g] == GeomType::kPlane) {
      ++planes;
      continue;
    }
    ASSERT_EQ(m.geom_type[g], GeomType::kMesh) << m.geom_name[g];
    const int mesh = m.geom_mesh[g];
    EXPECT_GE(m.mesh_vert_num[mesh], 2000) << m.geom_name[g];
    EXPECT_GE(m.mesh_graph_vert_num[mesh], 1000) << m.geom_name[g] << ": most on the hull";
  }
  EXPECT_EQ(planes, 1);
  for (int j = 0; j < m.njnt; ++j) {
    if (m.jnt_type[j] == JointType::kFree) continue;
    EXPECT_TRUE(m.jnt_limited[j]) << m.jnt_name[j];
  }
  Data d(m);
  for (const Contact& c : ContactsAt(m, d)) {
    EXPECT_GT(c.dist, -1e-12) << m.geom_name[c.geom1] << " / " << m.geom_name[c.geom2];
  }
}

// 5 s of falling and settling: no body sinks through the floor, penetration stays at millimetres,
// and 1 and 2 threads give the same bits. The humanoid then rests: over the last second every
// body's origin moves less than 2 mm and tilts by less than 0.01 rad. The rocks need not: a
// convex rock rolling on its smooth bottom without slipping loses no energy (condim 3 has no
// rolling or torsional friction), so it rocks on like a rocking chair.
TEST_P(MeshScene, SettlesWithSmallPenetrationAndIsThreadCountIndependent) {
  const bool must_rest = std::string(GetParam()) == "mesh_humanoid.xml";
  const auto model = LoadScene(GetParam());
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  const int steps = 1200;
  const int last_second = 240;
  std::uint64_t hash[2] = {0, 0};
  for (int threads = 1; threads <= 2; ++threads) {
    Data d(m);
    double max_penetration = 0;
    std::vector<Vec3> pos;
    std::vector<Vec3> up;  // each body's local z axis in the world
    double moved = 0;
    double tilted = 0;
    RunWithThreads(threads, [&] {
      for (int n = 0; n < steps; ++n) {
        Step(m, d, StepOptions{});
        for (const Contact& c : d.contact) max_penetration = std::max(max_penetration, -c.dist);
        if (n < steps - last_second) continue;
        Kinematics(m, d);
        for (int b = 1; b < m.nbody; ++b) {
          const Vec3 axis = d.xmat[b].col(2);
          if (n == steps - last_second) {
            pos.push_back(d.xpos[b]);
            up.push_back(axis);
            continue;
          }
          moved = std::max(moved, (d.xpos[b] - pos[b - 1]).norm());
          tilted = std::max(tilted, std::acos(std::clamp(axis.dot(up[b - 1]), -1.0, 1.0)));
        }
      }
    });
    hash[threads - 1] = StateHash(m, d);
    EXPECT_LT(max_penetration, 0.005) << threads << " threads";
    if (must_rest) {
      EXPECT_LT(moved, 0.002) << threads << " threads";
      EXPECT_LT(tilted, 0.01) << threads << " threads";
    }
    for (int b = 1; b < m.nbody; ++b) EXPECT_GT(d.xpos[b].z(), 0) << m.body_name[b];
  }
  EXPECT_EQ(hash[0], hash[1]);
}

INSTANTIATE_TEST_SUITE_P(Scenes, MeshScene,
                         ::testing::Values("mesh_rocks.xml", "mesh_humanoid.xml"));

// ---- quadruped_drop_8 and quadruped_drop_27 --------------------------------------------------

constexpr double kLaikagoMassLow = 22;  // kg: Laikago weighs about 22-25 kg
constexpr double kLaikagoMassHigh = 27;
constexpr double kRobotMass = 13.733 + 4 * (1.096 + 1.528 + 0.241);
constexpr double kFootRadius = 0.0265;
// Trunk centre above the floor when standing at q = 0: legs splayed by 0.1 rad, feet 0.40 m from
// the pitch joints, which sit 0.037 m out from the abduction joints.
const double kStandingHeight = 0.40 * std::cos(0.1) - 0.037 * std::sin(0.1) + kFootRadius;

struct QuadrupedScene {
  const char* file;
  int robots;
};

class Quadrupeds : public ::testing::TestWithParam<QuadrupedScene> {};

TEST_P(Quadrupeds, AreEighteenDofRobotsOfLaikagoMassWithTwelveServos) {
  const int n = GetParam().robots;
  const auto model = LoadScene(GetParam().file);
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_EQ(m.nv, 18 * n);
  EXPECT_EQ(m.nq, 19 * n);
  EXPECT_EQ(m.nu, 12 * n);
  EXPECT_EQ(m.nbody, 1 + 13 * n);
  EXPECT_EQ(m.njnt, 13 * n);
  ASSERT_EQ(m.nsubsystem, n);
  for (int s = 0; s < n; ++s) {
    const std::string prefix = "r" + std::to_string(s) + "_";
    EXPECT_EQ(m.subsystem_dof_num[s], 18);
    EXPECT_EQ(m.subsystem_body_num[s], 13);
    EXPECT_EQ(m.body_name[m.subsystem_root_body[s]], prefix + "trunk");
    double mass = 0;
    for (int b = 0; b < m.subsystem_body_num[s]; ++b) {
      const int body = m.subsystem_body_adr[s] + b;
      EXPECT_THAT(m.body_name[body], ::testing::StartsWith(prefix));
      mass += m.body_mass[body];
    }
    EXPECT_NEAR(mass, kRobotMass, 1e-9) << prefix;
    EXPECT_GT(mass, kLaikagoMassLow);
    EXPECT_LT(mass, kLaikagoMassHigh);
  }
  int hinges = 0;
  for (int j = 0; j < m.njnt; ++j) {
    if (m.jnt_type[j] == JointType::kFree) {
      EXPECT_EQ(m.body_parent[m.jnt_body[j]], 0) << m.jnt_name[j];
      continue;
    }
    ++hinges;
    EXPECT_EQ(m.jnt_type[j], JointType::kHinge) << m.jnt_name[j];
    EXPECT_EQ(m.dof_armature[m.jnt_dof_adr[j]], 0.01) << m.jnt_name[j];
    EXPECT_EQ(m.dof_damping[m.jnt_dof_adr[j]], 0) << m.jnt_name[j];
  }
  EXPECT_EQ(hinges, 12 * n);
  // One PD servo per hinge: force = 150 ctrl - 150 q - 4 qdot, clamped to +-35 N m.
  std::vector<int> driven(m.njnt, 0);
  for (int u = 0; u < m.nu; ++u) {
    ASSERT_EQ(m.actuator_transmission[u], ActuatorTransmission::kJoint);
    const int j = m.actuator_jnt[u];
    ASSERT_GE(j, 0);
    ++driven[j];
    EXPECT_EQ(m.actuator_name[u], m.jnt_name[j]);
    EXPECT_EQ(m.jnt_type[j], JointType::kHinge);
    EXPECT_EQ(m.actuator_gear[u], 1);
    EXPECT_EQ(m.actuator_gain[u], 150);
    EXPECT_EQ(m.actuator_bias0[u], 0);
    EXPECT_EQ(m.actuator_bias1[u], -150);
    EXPECT_EQ(m.actuator_bias2[u], -4);
    EXPECT_TRUE(m.actuator_force_limited[u]);
    EXPECT_EQ(m.actuator_force_lower[u], -35);
    EXPECT_EQ(m.actuator_force_upper[u], 35);
  }
  for (int j = 0; j < m.njnt; ++j) {
    EXPECT_EQ(driven[j], m.jnt_type[j] == JointType::kHinge ? 1 : 0) << m.jnt_name[j];
  }
}

// Robots collide with the floor and with each other, never with themselves; friction 0.5.
TEST_P(Quadrupeds, CollideWithTheFloorAndEachOtherButNotThemselves) {
  const auto model = LoadScene(GetParam().file);
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  ASSERT_EQ(m.geom_type[0], GeomType::kPlane);
  for (int g1 = 0; g1 < m.ngeom; ++g1) {
    EXPECT_EQ(m.geom_friction[g1][0], 0.5) << m.geom_name[g1];
    for (int g2 = g1 + 1; g2 < m.ngeom; ++g2) {
      const int robot1 = m.body_subsystem[m.geom_body[g1]];
      const int robot2 = m.body_subsystem[m.geom_body[g2]];
      EXPECT_EQ(MayCollide(m, g1, g2), robot1 != robot2)
          << m.geom_name[g1] << " / " << m.geom_name[g2];
    }
  }
}

// At q = 0 an upright robot stands on its four feet: with the trunk centre at the standing height
// (minus 0.1 mm), the only contacts are foot-floor ones, four per robot, 0.1 mm deep.
TEST_P(Quadrupeds, ZeroJointAnglesAreAStandingPostureOnFourFeet) {
  const int n = GetParam().robots;
  const auto model = LoadScene(GetParam().file);
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  Data d(m);
  const double sink = 1e-4;
  for (int s = 0; s < n; ++s) {
    const int root = m.subsystem_root_body[s];
    const int q = m.jnt_qpos_adr[m.body_jnt_adr[root]];
    d.qpos[q + 2] = kStandingHeight - sink;
    d.qpos[q + 3] = 1;
    d.qpos[q + 4] = d.qpos[q + 5] = d.qpos[q + 6] = 0;
  }
  const std::vector<Contact> contacts = ContactsAt(m, d);
  ASSERT_EQ(static_cast<int>(contacts.size()), 4 * n);
  for (const Contact& c : contacts) {
    EXPECT_EQ(c.geom1, 0);
    EXPECT_TRUE(EndsWith(m.geom_name[c.geom2], "_foot")) << m.geom_name[c.geom2];
    EXPECT_NEAR(c.dist, -sink, 1e-12);
  }
  // Every other part of the robot clears the floor by at least 3 cm (the calves' lower ends).
  for (int g = 1; g < m.ngeom; ++g) {
    if (EndsWith(m.geom_name[g], "_foot")) continue;
    EXPECT_GT(LowestZ(m, d, g), 0.03) << m.geom_name[g];
  }
}

// The drop: nothing touches at the start, the robots are apart, and they are 0.5-0.65 m up.
TEST_P(Quadrupeds, StartInTheAirOnAGridWithoutTouching) {
  const int n = GetParam().robots;
  const auto model = LoadScene(GetParam().file);
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  Data d(m);
  EXPECT_THAT(ContactsAt(m, d), ::testing::IsEmpty());
  for (int s = 0; s < n; ++s) {
    const Vec3 p = d.xpos[m.subsystem_root_body[s]];
    EXPECT_GE(p.z(), 0.5);
    EXPECT_LE(p.z(), 0.65);
    for (int t = 0; t < s; ++t) {
      const Vec3 other = d.xpos[m.subsystem_root_body[t]];
      EXPECT_GE((p - other).head<2>().norm(), 0.9 - 1e-9) << "robots " << t << " and " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenes, Quadrupeds,
                         ::testing::Values(QuadrupedScene{"quadruped_drop_8.xml", 8},
                                           QuadrupedScene{"quadruped_drop_27.xml", 27}));

// ---- box_stack -------------------------------------------------------------------------------

TEST(BoxStackScene, IsTenOneKilogramBoxesRestingExactlyOnEachOther) {
  const auto model = LoadScene("box_stack.xml");
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_EQ(m.nv, 60);
  EXPECT_EQ(m.nq, 70);
  EXPECT_EQ(m.nu, 0);
  ASSERT_EQ(m.nsubsystem, 10);
  ASSERT_EQ(m.ngeom, 11);
  Data d(m);
  Kinematics(m, d);
  for (int k = 0; k < 10; ++k) {
    const int g = k + 1;
    EXPECT_EQ(m.subsystem_dof_num[k], 6);
    EXPECT_EQ(m.body_mass[m.geom_body[g]], 1);
    EXPECT_EQ(m.geom_type[g], GeomType::kBox);
    EXPECT_EQ(m.geom_size[g], Vec3(0.1, 0.1, 0.05));
    EXPECT_TRUE(d.geom_xmat[g].isIdentity(0));
    EXPECT_EQ(d.geom_xpos[g].x(), 0);
    EXPECT_EQ(d.geom_xpos[g].y(), 0);
    // Bottom face on the top face of the box below (or on the floor), to round-off.
    EXPECT_NEAR(d.geom_xpos[g].z(), 0.05 + 0.1 * k, 1e-15);
  }
  for (int g = 0; g < m.ngeom; ++g) EXPECT_EQ(m.geom_friction[g][0], 0.8) << m.geom_name[g];
}

// ---- heavy_on_light --------------------------------------------------------------------------

TEST(HeavyOnLightScene, IsAFiveKilogramBoxRestingOnATenthOfAKilogramBox) {
  const auto model = LoadScene("heavy_on_light.xml");
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_EQ(m.nv, 12);
  EXPECT_EQ(m.nu, 0);
  ASSERT_EQ(m.nsubsystem, 2);
  ASSERT_EQ(m.ngeom, 3);
  const double masses[2] = {0.1, 5};
  const Vec3 sizes[2] = {Vec3(0.2, 0.2, 0.05), Vec3(0.15, 0.15, 0.05)};
  Data d(m);
  for (int k = 0; k < 2; ++k) {
    const int g = k + 1;
    EXPECT_EQ(m.body_mass[m.geom_body[g]], masses[k]);
    EXPECT_EQ(m.geom_type[g], GeomType::kBox);
    EXPECT_EQ(m.geom_size[g], sizes[k]);
  }
  for (int g = 0; g < m.ngeom; ++g) EXPECT_EQ(m.geom_friction[g][0], 0.5) << m.geom_name[g];
  // The bottom faces rest exactly on the floor and on the light box's top face.
  Kinematics(m, d);
  EXPECT_NEAR(d.geom_xpos[1].z() - sizes[0].z(), 0, 1e-15);
  EXPECT_NEAR(d.geom_xpos[2].z() - sizes[1].z(), d.geom_xpos[1].z() + sizes[0].z(), 1e-15);
  // A step (with its speculative margins) finds four corners on the floor and four corners of the
  // heavy box on the light one, all touching.
  ASSERT_EQ(Step(m, d), StepStatus::kOk);
  int floor = 0, between = 0;
  for (const Contact& c : d.contact) {
    EXPECT_NEAR(c.dist, 0, 1e-6);
    (c.geom1 == 0 || c.geom2 == 0 ? floor : between) += 1;
  }
  EXPECT_EQ(floor, 4);
  EXPECT_EQ(between, 4);
}

// ---- heavy_on_three_light --------------------------------------------------------------------

TEST(HeavyOnThreeLightScene, IsAFiveKilogramBoxOnThreeTenthOfAKilogramBoxes) {
  const auto model = LoadScene("heavy_on_three_light.xml");
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_EQ(m.nv, 24);
  EXPECT_EQ(m.nu, 0);
  ASSERT_EQ(m.nsubsystem, 4);
  ASSERT_EQ(m.ngeom, 5);
  const double masses[4] = {0.1, 0.1, 0.1, 5};
  const Vec3 sizes[4] = {Vec3(0.2, 0.2, 0.05), Vec3(0.18, 0.18, 0.05), Vec3(0.16, 0.16, 0.025),
                         Vec3(0.12, 0.12, 0.05)};
  Data d(m);
  for (int k = 0; k < 4; ++k) {
    const int g = k + 1;
    EXPECT_EQ(m.body_mass[m.geom_body[g]], masses[k]);
    EXPECT_EQ(m.geom_type[g], GeomType::kBox);
    EXPECT_EQ(m.geom_size[g], sizes[k]);
  }
  for (int g = 0; g < m.ngeom; ++g) EXPECT_EQ(m.geom_friction[g][0], 0.5) << m.geom_name[g];
  // Each bottom face rests exactly on the floor or on the top face of the box below.
  Kinematics(m, d);
  EXPECT_NEAR(d.geom_xpos[1].z() - sizes[0].z(), 0, 1e-15);
  for (int k = 1; k < 4; ++k) {
    EXPECT_NEAR(d.geom_xpos[k + 1].z() - sizes[k].z(), d.geom_xpos[k].z() + sizes[k - 1].z(),
                1e-15);
  }
  // A step finds four touching corners at each of the four interfaces.
  ASSERT_EQ(Step(m, d), StepStatus::kOk);
  int per_interface[4] = {0, 0, 0, 0};
  for (const Contact& c : d.contact) {
    EXPECT_NEAR(c.dist, 0, 1e-6);
    per_interface[std::max(c.geom1, c.geom2) - 1] += 1;
  }
  for (int k = 0; k < 4; ++k) EXPECT_EQ(per_interface[k], 4) << "interface " << k;
}

// ---- box_incline -----------------------------------------------------------------------------

TEST(BoxInclineScene, IsABoxLyingFlatOnAThirtyDegreeIncline) {
  const auto model = LoadScene("box_incline.xml");
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_EQ(m.nv, 6);
  EXPECT_EQ(m.nsubsystem, 1);
  EXPECT_EQ(m.nu, 0);
  ASSERT_EQ(m.ngeom, 2);
  ASSERT_EQ(m.geom_type[0], GeomType::kPlane);
  ASSERT_EQ(m.geom_type[1], GeomType::kBox);
  EXPECT_EQ(m.body_mass[m.geom_body[1]], 1);
  EXPECT_EQ(m.geom_size[1], Vec3(0.5, 0.5, 0.1));
  EXPECT_EQ(m.geom_friction[0][0], 0.8);
  EXPECT_EQ(m.geom_friction[1][0], 0.8);
  Data d(m);
  Kinematics(m, d);
  const double pi = std::acos(-1.0);
  const Vec3 normal = d.geom_xmat[0].col(2);
  EXPECT_NEAR(std::acos(normal.z()), pi / 6, 1e-12);  // 30 degrees from horizontal
  EXPECT_NEAR(normal.y(), 0, 1e-15);
  EXPECT_GT(normal.x(), 0);  // so downhill is +x
  // The box is turned like the incline, its centre 0.1 m (half its thickness) above the plane.
  EXPECT_LT((d.geom_xmat[1] - d.geom_xmat[0]).norm(), 1e-15);
  EXPECT_NEAR(normal.dot(d.geom_xpos[1] - d.geom_xpos[0]), 0.1, 1e-15);
}

// The friction lives in one attribute that a test can rewrite; at 0.3 < tan 30 the box slides.
TEST(BoxInclineScene, FrictionIsOneAttributeThatCanBeRewritten) {
  std::string xml = ReadScene("box_incline.xml");
  const std::string stick = "friction=\"0.8 ";
  const size_t at = xml.find(stick);
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(xml.find(stick, at + 1), std::string::npos) << "the friction is set in one place";
  xml.replace(at, stick.size(), "friction=\"0.3 ");
  const ModelImport imported = ImportModelFromString(xml, {}, "box_incline.xml");
  ASSERT_TRUE(imported) << imported.error;
  for (int g = 0; g < imported.model->ngeom; ++g) {
    EXPECT_EQ(imported.model->geom_friction[g][0], 0.3);
  }
}

// ---- ball_pile -------------------------------------------------------------------------------

TEST(BallPileScene, IsAHundredBallsAboveASquareBin) {
  const auto model = LoadScene("ball_pile.xml");
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_EQ(m.nv, 600);
  EXPECT_EQ(m.nq, 700);
  EXPECT_EQ(m.nu, 0);
  ASSERT_EQ(m.nsubsystem, 100);
  Data d(m);
  EXPECT_THAT(ContactsAt(m, d), ::testing::IsEmpty());
  const double inner_half = 0.33;  // the bin's inner half width
  int balls = 0;
  int walls = 0;
  double highest = 0;
  for (int g = 0; g < m.ngeom; ++g) {
    EXPECT_EQ(m.geom_friction[g][0], 0.5) << m.geom_name[g];
    if (m.geom_type[g] == GeomType::kBox) {
      ++walls;
      EXPECT_EQ(m.geom_body[g], 0) << "walls are static";
      EXPECT_NEAR(LowestZ(m, d, g), 0, 1e-15) << "walls stand on the floor";
      // The wall's inner face is on the bin's boundary.
      const Vec3 p = d.geom_xpos[g].cwiseAbs();
      const Vec3& size = m.geom_size[g];
      EXPECT_NEAR(std::max(p.x() - size.x(), p.y() - size.y()), inner_half, 1e-12);
    } else if (m.geom_type[g] == GeomType::kSphere) {
      ++balls;
      EXPECT_EQ(m.geom_size[g].x(), 0.05);
      EXPECT_EQ(m.body_mass[m.geom_body[g]], 0.5);
      const Vec3& p = d.geom_xpos[g];
      EXPECT_LT(std::max(std::abs(p.x()), std::abs(p.y())) + 0.05, inner_half) << m.geom_name[g];
      highest = std::max(highest, p.z());
    }
  }
  EXPECT_EQ(balls, 100);
  EXPECT_EQ(walls, 4);
  EXPECT_EQ(highest, 1.5);
}

// spinning_top.xml: a free top resting on its condim-6 tip, the only geom touching the floor, the
// contact condim 6 with the tip's coefficients (the max of the tip's and the floor's).
TEST(SpinningTopScene, IsATopRestingOnACondimSixTip) {
  const auto model = LoadScene("spinning_top.xml");
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  EXPECT_EQ(m.timestep, 0.001);
  EXPECT_EQ(m.nv, 6);
  EXPECT_EQ(m.nu, 0);
  EXPECT_NEAR(m.body_mass[1], 0.05, 0.01);
  Data d(*model);
  // At zero distance the tip touches; a step's speculative margin reports the contact.
  for (const Contact& c : ContactsAt(m, d)) EXPECT_GE(c.dist, -1e-12);
  ASSERT_EQ(Step(m, d), StepStatus::kOk);
  const std::vector<Contact>& contacts = d.contact;
  ASSERT_EQ(contacts.size(), 1u);
  EXPECT_EQ(m.geom_name[contacts[0].geom2], "tip");
  EXPECT_NEAR(contacts[0].dist, 0, 1e-6);
  EXPECT_EQ(contacts[0].dim, 6);
  EXPECT_EQ(contacts[0].friction, 0.8);
  EXPECT_EQ(contacts[0].friction_torsion, 0.002);
  EXPECT_EQ(contacts[0].friction_rolling, 0.0005);
}

}  // namespace
}  // namespace alsim
