// Geom frames and the broadphase: filtering rules on a hand-built scene, the sweep against brute
// force, and no pair MuJoCo finds in contact ever missed.
#include "engine/collision/broadphase.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <random>
#include <set>
#include <utility>

#include "engine/collision/collision_filter.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using GeomPair = std::pair<int, int>;

std::shared_ptr<const Model> Load(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

int GeomId(const Model& m, const std::string& name) {
  for (int g = 0; g < m.ngeom; ++g) {
    if (m.geom_name[g] == name) return g;
  }
  throw std::runtime_error("no geom " + name);
}

// ---- filtering rules ------------------------------------------------------------------------

const char kFilterScene[] = R"(<mujoco><worldbody>
    <geom name="floor" type="plane" size="5 5 .1"/>
    <geom name="wall" type="box" size=".1 1 1" pos="3 0 1"/>
    <body name="torso" pos="0 0 1"><freejoint/>
      <geom name="torso" size=".2"/>
      <geom name="torso_ghost" size=".2" contype="0" conaffinity="0"/>
      <body name="arm"><joint type="hinge"/><geom name="arm" size=".1" fromto="0 0 0 .5 0 0" type="capsule"/>
        <body name="hand" pos=".5 0 0"><geom name="hand" size=".05"/>
          <body name="finger"><joint type="hinge"/><geom name="finger" size=".02"/></body>
        </body>
      </body>
      <body name="leg"><joint type="hinge"/><geom name="leg" size=".1" fromto="0 0 0 0 0 -.5" type="capsule"/></body>
    </body>
    <body name="ball" pos="1 0 1"><freejoint/><geom name="ball" size=".1" contype="2" conaffinity="2"/></body>
    <body name="puck" pos="1 1 1"><freejoint/><geom name="puck" size=".1" contype="2" conaffinity="1"/></body>
  </worldbody>
  <contact><exclude body1="leg" body2="arm"/></contact></mujoco>)";

TEST(CollisionFilterTest, MujocosRulesOnAHandBuiltScene) {
  const auto model = Load(kFilterScene);
  const Model& m = *model;
  auto may = [&](const char* a, const char* b) {
    return MayCollide(m, GeomId(m, a), GeomId(m, b));
  };
  EXPECT_FALSE(may("floor", "wall")) << "both welded to the world";
  EXPECT_TRUE(may("floor", "torso"));
  EXPECT_FALSE(may("torso", "torso_ghost")) << "same body";
  EXPECT_FALSE(may("floor", "torso_ghost")) << "contype = conaffinity = 0";
  EXPECT_FALSE(may("torso", "arm")) << "parent and child";
  EXPECT_FALSE(may("arm", "hand")) << "the hand is welded to the arm: same rigid body";
  EXPECT_FALSE(may("hand", "finger")) << "the finger's parent is the arm by weld";
  EXPECT_TRUE(may("torso", "finger")) << "grandparent";
  EXPECT_TRUE(may("torso", "leg") == false) << "parent and child";
  EXPECT_FALSE(may("arm", "leg")) << "excluded";
  EXPECT_TRUE(may("hand", "leg")) << "the exclude names the arm body, not its welded hand";
  EXPECT_FALSE(may("ball", "torso")) << "contype 2 vs conaffinity 1 and contype 1 vs conaffinity 2";
  EXPECT_TRUE(may("ball", "puck")) << "contype 2 & conaffinity 2";
  EXPECT_TRUE(may("puck", "torso")) << "contype 1 of the torso meets conaffinity 1 of the puck";
}

TEST(CollisionFilterTest, ParentFilteringCanBeDisabledButNotForOneBody) {
  std::string xml = kFilterScene;
  xml.replace(xml.find("<worldbody>"), 11,
              R"(<option><flag filterparent="disable"/></option><worldbody>)");
  const auto model = Load(xml);
  const Model& m = *model;
  EXPECT_FALSE(m.filter_parent);
  EXPECT_TRUE(MayCollide(m, GeomId(m, "torso"), GeomId(m, "arm")));
  EXPECT_FALSE(MayCollide(m, GeomId(m, "arm"), GeomId(m, "hand")));
}

TEST(CollisionFilterTest, DisabledContactsGiveNoCandidates) {
  std::string xml = kFilterScene;
  xml.replace(xml.find("<worldbody>"), 11,
              R"(<option><flag contact="disable"/></option><worldbody>)");
  const auto model = Load(xml);
  Data d(*model);
  Kinematics(*model, d);
  Broadphase(*model, d);
  EXPECT_TRUE(d.collision_candidates.empty());
}

// ---- geom frames ----------------------------------------------------------------------------

TEST(GeomFramesTest, MatchMujocoAtRandomStates) {
  for (const char* scene_file : {"humanoid/22_humanoids.xml", "mug/mug.xml"}) {
    testing::OracleScene scene(testing::kMujocoSamples + scene_file);
    ASSERT_TRUE(scene.ok());
    std::mt19937 random(5);
    for (int trial = 0; trial < 20; ++trial) {
      scene.SetRandomState(random);
      Kinematics(scene.model(), scene.data());
      mj_kinematics(scene.mj_model(), scene.mj_data());
      for (int g = 0; g < scene.model().ngeom; ++g) {
        const mjtNum* pos = scene.mj_data()->geom_xpos + 3 * g;
        const mjtNum* mat = scene.mj_data()->geom_xmat + 9 * g;
        EXPECT_LT((scene.data().geom_xpos[g] - Vec3(pos[0], pos[1], pos[2])).norm(), 1e-12);
        // MuJoCo stores matrices row-major.
        EXPECT_LT((scene.data().geom_xmat[g] -
                   Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(mat))
                      .norm(),
                  1e-12);
      }
    }
  }
}

// ---- broadphase -----------------------------------------------------------------------------

std::set<GeomPair> Candidates(const Data& d) {
  std::set<GeomPair> pairs;
  for (const auto& c : d.collision_candidates) {
    EXPECT_LT(c.geom1, c.geom2);
    pairs.emplace(c.geom1, c.geom2);
  }
  return pairs;
}

// Every pair that may collide and whose margin-grown boxes overlap, by checking all pairs.
std::set<GeomPair> BruteForcePairs(const Model& m, const Data& d) {
  std::set<GeomPair> pairs;
  for (const int a : d.sweep_order) {
    for (const int b : d.sweep_order) {
      if (a >= b || !MayCollide(m, a, b)) continue;
      if ((d.geom_aabb_lo[a].array() <= d.geom_aabb_hi[b].array()).all() &&
          (d.geom_aabb_lo[b].array() <= d.geom_aabb_hi[a].array()).all()) {
        pairs.emplace(a, b);
      }
    }
  }
  return pairs;
}

class BroadphaseTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BroadphaseTest, FindsWhatBruteForceFindsAndEveryMujocoContact) {
  testing::OracleScene scene(testing::kMujocoSamples + GetParam());
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  std::mt19937 random(9);
  int mujoco_contacts = 0;
  for (int trial = 0; trial < 20; ++trial) {
    scene.SetRandomState(random, 0.0);
    Kinematics(m, d);
    Broadphase(m, d);
    const std::set<GeomPair> candidates = Candidates(d);
    EXPECT_EQ(candidates.size(), d.collision_candidates.size()) << "no duplicates";

    // The sweep finds exactly the overlapping boxes (plane pairs come on top of those).
    std::set<GeomPair> swept;
    for (const auto& pair : candidates) {
      if (m.geom_type[pair.first] != GeomType::kPlane) swept.insert(pair);
    }
    EXPECT_EQ(swept, BruteForcePairs(m, d)) << GetParam() << " trial " << trial;

    // Conservative: every pair in contact according to MuJoCo is a candidate.
    mj_forward(scene.mj_model(), scene.mj_data());
    const mjData* md = scene.mj_data();
    mujoco_contacts += md->ncon;
    for (int i = 0; i < md->ncon; ++i) {
      const GeomPair pair(std::min(md->contact[i].geom1, md->contact[i].geom2),
                          std::max(md->contact[i].geom1, md->contact[i].geom2));
      EXPECT_EQ(candidates.count(pair), 1u)
          << GetParam() << " trial " << trial << ": MuJoCo's contact " << pair.first << "-"
          << pair.second << " is not a candidate";
    }
  }
  EXPECT_GT(mujoco_contacts, 0) << "random poses should touch something: the check above ran";
}

INSTANTIATE_TEST_SUITE_P(MujocoSamples, BroadphaseTest,
                         ::testing::Values("humanoid/humanoid.xml", "humanoid/22_humanoids.xml",
                                           "humanoid100/humanoid100.xml", "mug/mug.xml"));

}  // namespace
}  // namespace alsim
