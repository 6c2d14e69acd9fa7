// SDF geoms and concave meshes (engine/collision/sdf_pairs.h): the surface triangulation on the
// surface and closed; each pair's contacts against closed forms (sphere, box and capsule on a
// dish, the dish on a plane, a bowl in its twin, a sphere in a concave cup); the reduction
// (deterministic, at most 120, the deepest first, spread); the scene extension's import errors;
// and scenes/bowl_sphere.xml stepped: the sphere at its analytic height, the nested bowls at
// rest, the same bits for any thread count.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/collision/collision.h"
#include "engine/collision/narrowphase.h"
#include "engine/collision/sdf_pairs.h"
#include "engine/collision/sdf_revolution.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "tests/collision/sdf_test_scene.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

using namespace sdf_test;  // Scene, Load, Geom, Collide, Deepest

using Vec2 = Eigen::Vector2d;

// The digest's 8.2 bowl and plate (meters).
constexpr char kBowl[] = "revolution a 0.04 0 b 0.08 0.06 padding 0.003";
constexpr char kPlate[] = "revolution a 0.08 0 b 0.12 0.02 padding 0.003";
constexpr double kPadding = 0.003;
// The bowl wall's unit normal into its cavity, (-e_z, e_r) / |e| for e = B - A = (0.04, 0.06).
const Vec2 kWallNormal = Vec2(-0.06, 0.04).normalized();

// A scene imported and put at its initial pose (Kinematics), or the import's error.

// A world of two geoms: `first` and `second` are geom elements (the first of them may be named
// "sdf" and carry `sdf_data` as its alsim:sdf text).
std::string TwoGeoms(const std::string& first, const std::string& second,
                     const std::string& custom) {
  return "<mujoco><custom>" + custom + "</custom><worldbody>" + first + second +
         "</worldbody></mujoco>";
}

std::string SdfText(const std::string& geom, const std::string& data) {
  return "<text name=\"alsim:sdf:" + geom + "\" data=\"" + data + "\"/>";
}

// ---------------------------------------------------------------- triangulation

TEST(SdfTriangulation, VerticesLieOnTheSurfaceAndTheSurfaceIsClosed) {
  const std::vector<SdfRevolution> shapes = {
      SdfRevolution::FromParameters(std::vector<double>{0.04, 0, 0.08, 0.06, 0.003}.data()),
      SdfRevolution::FromParameters(std::vector<double>{0.08, 0, 0.12, 0.02, 0.003}.data()),
      SdfRevolution::FromParameters(std::vector<double>{0.10, 0, 0.10, 0.12, 0.004}.data()),
      SdfRevolution::FromParameters(std::vector<double>{0.05, -0.01, 0.03, 0.09, 0.002}.data()),
      SdfRevolution::FromParameters(std::vector<double>{0.03, 0.03, 0.08, 0.09, 0.002}.data())};
  for (const SdfRevolution& shape : shapes) {
    std::vector<Vec3> vertices;
    std::vector<Eigen::Vector3i> faces;
    shape.Triangulate(64, &vertices, &faces);
    ASSERT_GT(faces.size(), 64u);
    for (const Vec3& v : vertices) EXPECT_NEAR(shape.Distance(v), 0, 1e-12);
    // Closed: every edge is shared by exactly two triangles, once in each direction.
    std::map<std::pair<int, int>, int> directed;
    for (const Eigen::Vector3i& f : faces) {
      for (int i = 0; i < 3; ++i) {
        ASSERT_GE(f[i], 0);
        ASSERT_LT(f[i], static_cast<int>(vertices.size()));
        ++directed[{f[i], f[(i + 1) % 3]}];
      }
    }
    for (const auto& [edge, count] : directed) {
      EXPECT_EQ(count, 1);
      EXPECT_EQ(directed.count({edge.second, edge.first}), 1u)
          << "edge " << edge.first << "-" << edge.second << " has no twin";
    }
    // Triangle centroids lie within the chord's sag of the surface: 2 pi R / 64 long chords
    // sag at most (2 pi R / 64)^2 / (8 rho) over a curvature radius rho >= d.
    const double radius = shape.LocalBox().hi.x();
    const double chord = 2 * 3.14159265358979 * radius / 64;
    for (const Eigen::Vector3i& f : faces) {
      const Vec3 centroid = (vertices[f[0]] + vertices[f[1]] + vertices[f[2]]) / 3;
      EXPECT_LT(std::abs(shape.Distance(centroid)), chord * chord / (8 * shape.padding) + 1e-12);
    }
  }
}

// ---------------------------------------------------------------- pairs vs closed forms

// A bowl at a general pose and a sphere of radius 0.02 at local points whose distance is known:
// above the flat bottom, below it, beside the rim (nearest profile point B), inside the bottom.
TEST(SdfPairs, SphereAgainstBowlMatchesTheClosedForm) {
  const Eigen::Quaterniond q(Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()));
  const Vec3 origin(0.3, -0.2, 0.5);
  const double r = 0.02;
  struct Case {
    Vec3 local;
    double dist;
    Vec3 normal;  // local, from the bowl toward the sphere
  };
  const double rim = 0.08 + kPadding + r + 0.0015;
  const std::vector<Case> cases = {
      {Vec3(0.01, 0.005, kPadding + r + 0.002), 0.002, Vec3::UnitZ()},
      {Vec3(0.01, 0, -(kPadding + r + 0.001)), 0.001, -Vec3::UnitZ()},
      {Vec3(rim * std::cos(1.0), rim * std::sin(1.0), 0.06), 0.0015,
       Vec3(std::cos(1.0), std::sin(1.0), 0)},
      {Vec3(-0.005, 0.01, kPadding + r - 0.001), -0.001, Vec3::UnitZ()}};
  for (const Case& c : cases) {
    const Vec3 center = origin + q * c.local;
    std::ostringstream xml;
    xml.precision(17);
    xml << "<mujoco><custom>" << SdfText("bowl", kBowl) << "</custom><worldbody>"
        << "<body pos='" << origin.transpose() << "' quat='" << q.w() << " " << q.x() << " "
        << q.y() << " " << q.z() << "'><geom name='bowl' type='cylinder' size='0.06 0.03'/>"
        << "</body><geom name='ball' type='sphere' size='0.02' pos='" << center.transpose()
        << "'/></worldbody></mujoco>";
    const Scene scene = Load(xml.str());
    ASSERT_TRUE(scene.model) << scene.error;
    EXPECT_EQ(scene.model->geom_type[Geom(*scene.model, "bowl")], GeomType::kSdf);
    const std::vector<Contact> contacts = Collide(scene, "bowl", "ball", 0.01);
    ASSERT_EQ(contacts.size(), 1u);
    EXPECT_NEAR(contacts[0].dist, c.dist, 1e-12);
    EXPECT_LT((contacts[0].normal - q * c.normal).norm(), 1e-9);
    // The midpoint lies dist / 2 short of the sphere's surface along the normal.
    EXPECT_LT((contacts[0].pos - (center - contacts[0].normal * (r + c.dist / 2))).norm(), 1e-9);
    // The other order flips the normal.
    const std::vector<Contact> swapped = Collide(scene, "ball", "bowl", 0.01);
    ASSERT_EQ(swapped.size(), 1u);
    EXPECT_EQ(swapped[0].dist, contacts[0].dist);
    EXPECT_LT((swapped[0].normal + contacts[0].normal).norm(), 1e-15);
  }
}

// A box resting on a plate's flat floor, 0.5 mm above it and turned about z: its four bottom
// corners at dist 0.5 mm, normals up.
TEST(SdfPairs, BoxOnAPlateTouchesAtItsBottomCorners) {
  const double gap = 0.0005;
  const std::string xml =
      TwoGeoms("<geom name='plate' type='cylinder' size='0.1 0.01'/>",
               "<geom name='box' type='box' size='0.02 0.03 0.01' euler='0 0 17' pos='0.01 -0.01 " +
                   std::to_string(kPadding + 0.01 + gap) + "'/>",
               SdfText("plate", kPlate));
  const Scene scene = Load(xml);
  ASSERT_TRUE(scene.model) << scene.error;
  const std::vector<Contact> contacts = Collide(scene, "plate", "box", 0.001);
  ASSERT_EQ(contacts.size(), 4u);
  const int box = Geom(*scene.model, "box");
  for (const Contact& c : contacts) {
    EXPECT_NEAR(c.dist, gap, 1e-12);
    EXPECT_LT((c.normal - Vec3::UnitZ()).norm(), 1e-12);
    // At a bottom corner of the box, midway down to the floor.
    const Vec3 local = scene.data->geom_xmat[box].transpose() *
                       (c.pos + Vec3(0, 0, gap / 2) - scene.data->geom_xpos[box]);
    EXPECT_NEAR(std::abs(local.x()), 0.02, 1e-9);
    EXPECT_NEAR(std::abs(local.y()), 0.03, 1e-9);
    EXPECT_NEAR(local.z(), -0.01, 1e-9);
  }
}

// A capsule lying on the plate's floor: contacts along its whole length at its clearance.
TEST(SdfPairs, CapsuleLyingOnAPlateTouchesAlongItsLength) {
  const double gap = 0.0003, r = 0.01, half = 0.04;
  const std::string xml =
      TwoGeoms("<geom name='plate' type='cylinder' size='0.1 0.01'/>",
               "<geom name='rod' type='capsule' size='0.01 0.04' euler='0 90 30' pos='0 0.01 " +
                   std::to_string(kPadding + r + gap) + "'/>",
               SdfText("plate", kPlate));
  const Scene scene = Load(xml);
  ASSERT_TRUE(scene.model) << scene.error;
  const std::vector<Contact> contacts = Collide(scene, "plate", "rod", 0.001);
  ASSERT_GE(contacts.size(), 2u);
  double span = 0;
  for (const Contact& c : contacts) {
    EXPECT_NEAR(c.dist, gap, 1e-12);
    EXPECT_LT((c.normal - Vec3::UnitZ()).norm(), 1e-12);
    for (const Contact& other : contacts) span = std::max(span, (c.pos - other.pos).norm());
  }
  EXPECT_NEAR(span, 2 * half, 1e-9);
}

// The dish against a plane: upright and sunk 0.5 mm, every contact at its bottom, -0.5 mm deep;
// tilted, the deepest contact at the solid's support point along the plane's normal, within the
// triangulation's sampling (chords 2 pi R / 64, arcs every pi / 12: under 0.2 mm here).
TEST(SdfPairs, DishAgainstAPlaneAtItsSupportPoint) {
  {
    const Scene scene = Load(TwoGeoms("<geom name='floor' type='plane' size='1 1 1'/>",
                                      "<geom name='bowl' type='cylinder' size='0.06 0.03' "
                                      "pos='0.1 0 0.0025'/>",
                                      SdfText("bowl", kBowl)));
    ASSERT_TRUE(scene.model) << scene.error;
    const std::vector<Contact> contacts = Collide(scene, "floor", "bowl", 0);
    ASSERT_GE(contacts.size(), 8u);
    EXPECT_LE(contacts.size(), static_cast<size_t>(kMaxContactsPerSdfPair));
    for (const Contact& c : contacts) {
      EXPECT_NEAR(c.dist, -0.0005, 1e-12);
      EXPECT_LT((c.normal - Vec3::UnitZ()).norm(), 1e-15);
      EXPECT_LE(std::hypot(c.pos.x() - 0.1, c.pos.y()), 0.04 + 1e-9);
    }
  }
  // Tilted 0.4 rad about x, the circle of A lowest, 1 mm into the floor.
  const double tilt = 0.4, height = 0.04 * std::sin(tilt) + kPadding - 0.001;
  std::ostringstream geom;
  geom.precision(17);
  geom << "<geom name='bowl' type='cylinder' size='0.06 0.03' pos='0 0 " << height
       << "' axisangle='1 0 0 " << tilt * 180 / 3.14159265358979323846 << "'/>";
  const Scene scene = Load(TwoGeoms("<geom name='floor' type='plane' size='1 1 1'/>", geom.str(),
                                    SdfText("bowl", kBowl)));
  ASSERT_TRUE(scene.model) << scene.error;
  // The swept profile's support along -z: over the circles of O, A and B, s_r sin(tilt) - ...
  // the lowest point of the circle (s_r, s_z) tilted about x is height - s_r sin + s_z cos.
  double lowest = INFINITY;
  for (const Vec2& s : {Vec2(0, 0), Vec2(0.04, 0), Vec2(0.08, 0.06)}) {
    lowest = std::min(lowest, height - s.x() * std::sin(tilt) + s.y() * std::cos(tilt));
  }
  lowest -= kPadding;
  const std::vector<Contact> contacts = Collide(scene, "floor", "bowl", 0.01);
  ASSERT_FALSE(contacts.empty());
  EXPECT_EQ(contacts[0].dist, Deepest(contacts));
  EXPECT_NEAR(contacts[0].dist, lowest, 2e-4);
  EXPECT_GE(contacts[0].dist, lowest - 1e-12);  // vertices lie on the surface: never deeper
}

// A bowl nested in its twin and pushed 0.1 mm into it along z: the walls are parallel cones, so
// every contact lies on the wall band at depth 0.1 mm times the wall normal's z, with the outer
// bowl's wall normal; hundreds of raw contacts come out as at most 120, the same twice.
TEST(SdfPairs, NestedBowlsTouchAlongTheWall) {
  const double push = 0.0001;
  const double rest = 2 * kPadding / kWallNormal.y();  // the lift that parts the walls by 2 d
  const std::string xml = TwoGeoms("<geom name='outer' type='cylinder' size='0.06 0.03'/>",
                                   "<geom name='inner' type='cylinder' size='0.06 0.03' pos='0 0 " +
                                       std::to_string(rest - push) + "'/>",
                                   SdfText("outer", kBowl) + SdfText("inner", kBowl));
  const Scene scene = Load(xml);
  ASSERT_TRUE(scene.model) << scene.error;
  const double lift = scene.data->geom_xpos[1].z();  // as the scene's text rounded it
  const double depth = -(rest - lift) * kWallNormal.y();
  const std::vector<Contact> contacts = Collide(scene, "outer", "inner", 0);
  EXPECT_GT(contacts.size(), 60u);
  EXPECT_LE(contacts.size(), static_cast<size_t>(kMaxContactsPerSdfPair));
  for (const Contact& c : contacts) {
    EXPECT_NEAR(c.dist, depth, 1e-9);
    const double radial = std::hypot(c.normal.x(), c.normal.y());
    EXPECT_NEAR(c.normal.z(), kWallNormal.y(), 1e-9);
    EXPECT_NEAR(radial, -kWallNormal.x(), 1e-9);
    EXPECT_LT(c.normal.head<2>().dot(c.pos.head<2>()), 0);  // toward the axis
  }
  const std::vector<Contact> again = Collide(scene, "outer", "inner", 0);
  ASSERT_EQ(again.size(), contacts.size());
  for (size_t i = 0; i < contacts.size(); ++i) {
    EXPECT_EQ(again[i].dist, contacts[i].dist);
    EXPECT_EQ(again[i].pos, contacts[i].pos);
    EXPECT_EQ(again[i].normal, contacts[i].normal);
  }
}

// A concave cup mesh (a square floor and four walls, open at the top) with a sphere inside, off
// its floor by 1 mm: by its triangles the cup gives the floor's 1 mm; as its convex hull (without
// alsim:concave) the sphere would be deep inside it.
TEST(SdfPairs, ConcaveMeshCollidesByItsTriangles) {
  const std::string cup =
      "<asset><mesh name='cup' vertex='-0.1 -0.1 0  0.1 -0.1 0  0.1 0.1 0  -0.1 0.1 0 "
      "-0.1 -0.1 0.1  0.1 -0.1 0.1  0.1 0.1 0.1  -0.1 0.1 0.1' "
      "face='0 2 1  0 3 2  0 1 5  0 5 4  1 2 6  1 6 5  2 3 7  2 7 6  3 0 4  3 4 7'/></asset>";
  const std::string world =
      "<worldbody><geom name='cup' type='mesh' mesh='cup'/>"
      "<geom name='ball' type='sphere' size='0.02' pos='0.03 0.02 0.021'/></worldbody>";
  const Scene concave =
      Load("<mujoco>" + cup + "<custom><text name='alsim:concave:cup' data='triangles'/></custom>" +
           world + "</mujoco>");
  ASSERT_TRUE(concave.model) << concave.error;
  EXPECT_TRUE(concave.model->geom_concave[0]);
  const std::vector<Contact> contacts = Collide(concave, "cup", "ball", 0.005);
  ASSERT_GE(contacts.size(), 1u);
  // MuJoCo keeps mesh vertices as floats in the mesh's principal frame: the floor is level to
  // float rounding.
  EXPECT_NEAR(contacts[0].dist, 0.001, 1e-8);
  EXPECT_LT((contacts[0].normal - Vec3::UnitZ()).norm(), 1e-5);
  const Scene hull = Load("<mujoco>" + cup + world + "</mujoco>");
  ASSERT_TRUE(hull.model) << hull.error;
  EXPECT_LT(Deepest(Collide(hull, "cup", "ball", 0.005)), -0.02);
}

// A bowl SDF against a concave mesh tile lying on its floor 0.2 mm up: the tile's corners.
TEST(SdfPairs, BowlAgainstAConcaveMeshTile) {
  const std::string xml =
      "<mujoco><asset><mesh name='tile' vertex='-0.01 -0.01 0  0.01 -0.01 0  0.01 0.01 0  "
      "-0.01 0.01 0  0 0 0.005' face='0 2 1  0 3 2  0 1 4  1 2 4  2 3 4  3 0 4'/></asset>"
      "<custom>" +
      SdfText("bowl", kBowl) +
      "<text name='alsim:concave:tile' data='triangles'/></custom><worldbody>"
      "<geom name='bowl' type='cylinder' size='0.06 0.03'/>"
      "<geom name='tile' type='mesh' mesh='tile' pos='0 0 0.0032'/></worldbody></mujoco>";
  const Scene scene = Load(xml);
  ASSERT_TRUE(scene.model) << scene.error;
  const std::vector<Contact> contacts = Collide(scene, "bowl", "tile", 0.001);
  ASSERT_EQ(contacts.size(), 4u);
  for (const Contact& c : contacts) {
    EXPECT_NEAR(c.dist, 0.0002, 1e-8);  // mesh vertices are floats
    EXPECT_LT((c.normal - Vec3::UnitZ()).norm(), 1e-5);
  }
}

// The M48 thread (kind thread) against a sphere beside a crest: at theta = 0, z = 0 the crest
// flat (P/8 wide) is centered, where the field is r - r_maj exactly, radial.
TEST(SdfPairs, SphereBesideTheThreadsCrest) {
  const double r = 0.001, gap = 0.0004;
  const Scene scene =
      Load(TwoGeoms("<geom name='bolt' type='cylinder' size='0.024 0.05'/>",
                    "<geom name='ball' type='sphere' size='0.001' pos='" +
                        std::to_string(0.024 + r + gap) + " 0 0'/>",
                    SdfText("bolt",
                            "thread major_diameter 0.048 pitch 0.005 z0 -0.05 z1 0.05 handedness "
                            "right")));
  ASSERT_TRUE(scene.model) << scene.error;
  const int bolt = Geom(*scene.model, "bolt");
  EXPECT_EQ(scene.model->sdf_kind[scene.model->geom_sdf[bolt]], SdfKind::kThread);
  EXPECT_DOUBLE_EQ(scene.model->geom_rbound[bolt], std::hypot(0.024, 0.05));
  const std::vector<Contact> contacts = Collide(scene, "bolt", "ball", 0.001);
  ASSERT_EQ(contacts.size(), 1u);
  EXPECT_NEAR(contacts[0].dist, gap, 1e-12);
  EXPECT_LT((contacts[0].normal - Vec3::UnitX()).norm(), 1e-12);
}

// The M48 nut mesh (scenes/assets/m48_nut.stl, concave) on the bolt's thread, both in SdfThread's
// frame: its internal thread lies 50 um outside the bolt's profile along every normal, every face
// within 10 um of that (thread_collision_tests), so every contact is 40 to 50 um apart (the field
// overestimates distance by under 0.07% here), each with a unit normal.
TEST(SdfPairs, NutMeshOnTheBoltsThread) {
  const std::string xml =
      "<mujoco><compiler exactmeshinertia='true'/><asset><mesh name='nut' file='" +
      std::string(ALSIM_SCENES_DIR) +
      "/assets/m48_nut.stl'/></asset><custom>"
      "<text name='alsim:sdf:bolt' data='thread'/>"
      "<text name='alsim:concave:nut' data='triangles'/></custom><worldbody>"
      "<geom name='bolt' type='cylinder' size='0.024 0.05'/>"
      "<geom name='nut' type='mesh' mesh='nut'/></worldbody></mujoco>";
  const Scene scene = Load(xml);
  ASSERT_TRUE(scene.model) << scene.error;
  const std::vector<Contact> contacts = Collide(scene, "bolt", "nut", 1e-4);
  EXPECT_GT(contacts.size(), 60u);
  EXPECT_LE(contacts.size(), static_cast<size_t>(kMaxContactsPerSdfPair));
  for (const Contact& c : contacts) {
    EXPECT_GE(c.dist, 40e-6 - 1e-7);
    EXPECT_LE(c.dist, 50e-6 * 1.0007 + 1e-7);
    EXPECT_NEAR(c.normal.norm(), 1, 1e-12);
  }
}

// ---------------------------------------------------------------- reduction

TEST(SdfPairs, ReductionKeepsTheDeepestFirstAtMost120SpreadAndDeterministic) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> depth(-0.002, 0.0);
  std::vector<RawContact> raw;
  for (int i = 0; i < 25; ++i) {
    for (int j = 0; j < 20; ++j) {
      raw.push_back({Vec3(0.001 * i, 0.001 * j, 0), Vec3::UnitZ(), depth(rng)});
    }
  }
  raw.push_back({Vec3(0.01, 0.01, 0), -Vec3::UnitZ(), -0.0001});  // an opposing normal
  const int n = static_cast<int>(raw.size());
  const double deepest =
      std::min_element(raw.begin(), raw.end(), [](const RawContact& a, const RawContact& b) {
        return a.dist < b.dist;
      })->dist;
  std::vector<RawContact> first = raw, second = raw;
  const int count = ReduceContacts(first.data(), n, kMaxContactsPerSdfPair, 1e-6);
  ASSERT_EQ(ReduceContacts(second.data(), n, kMaxContactsPerSdfPair, 1e-6), count);
  EXPECT_LE(count, kMaxContactsPerSdfPair);
  EXPECT_GT(count, 60);
  EXPECT_EQ(first[0].dist, deepest);
  Vec3 lo = first[0].pos, hi = first[0].pos;
  bool opposing = false;
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(std::memcmp(&first[i], &second[i], sizeof(RawContact)), 0);
    if (i > 0) {
      EXPECT_GE(first[i].dist, first[i - 1].dist);
    }
    lo = lo.cwiseMin(first[i].pos);
    hi = hi.cwiseMax(first[i].pos);
    opposing = opposing || first[i].normal.z() < 0;
  }
  // Spread over the patch (24 x 19 mm), and the contact facing the other way kept.
  EXPECT_GT(hi.x() - lo.x(), 0.02);
  EXPECT_GT(hi.y() - lo.y(), 0.015);
  EXPECT_TRUE(opposing);
  // Fewer than the limit: all kept, deepest first.
  std::vector<RawContact> few(raw.begin(), raw.begin() + 50);
  EXPECT_EQ(ReduceContacts(few.data(), 50, kMaxContactsPerSdfPair, 1e-6), 50);
}

// ---------------------------------------------------------------- import

TEST(SdfImport, RefusesBadDeclarationsNamingTheGeom) {
  const std::string world =
      "<asset><mesh name='m' vertex='0 0 0  1 0 0  0 1 0  0 0 1'/></asset>"
      "<worldbody><geom name='dish' type='cylinder' size='0.06 0.03'/>"
      "<geom name='rock' type='mesh' mesh='m' pos='1 0 0'/></worldbody>";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {SdfText("nothing", kBowl), "no geom named 'nothing'"},
      {SdfText("dish", "revolution a 0.04 x b 0.08 0.06 padding 0.003"), "'x' is not a finite"},
      {SdfText("dish", "revolution a 0.04 0 b 0.08 0.06 padding -0.003"), "not a valid revolution"},
      {SdfText("dish", "revolution a -0.04 0 b 0.08 0.06 padding 0.003"), "not a valid revolution"},
      {SdfText("dish", "revolution a 0.04 0 b 0.08 0.06"), "needs 'a AR AZ'"},
      {SdfText("dish", "revolution a 0.04 0 b 0.08 0.06 padding 0.003 a 0 0"), "given twice"},
      {SdfText("dish", "revolution a 0.04 0 b 0.08 0.06 thickness 0.003"), "unknown key"},
      {SdfText("dish", "revolution a 0.04"), "'a' needs 2 numbers"},
      {SdfText("dish", "torus 0.1"), "unknown kind 'torus'"},
      {SdfText("dish", "thread pitch 0"), "not a valid thread"},
      {SdfText("dish", "thread handedness up"), "handedness is right or left"},
      {SdfText("dish", "thread lead 0.005"), "unknown key 'lead'"},
      {"<text name='alsim:concave:dish' data='triangles'/>", "'dish' is not a mesh"},
      {"<text name='alsim:concave:rock' data='yes'/>", "data must be 'triangles'"},
      {SdfText("rock", kBowl) + "<text name='alsim:concave:rock' data='triangles'/>",
       "both an SDF and a concave mesh"}};
  for (const auto& [custom, expected] : cases) {
    const ModelImport imported =
        ImportModelFromString("<mujoco><custom>" + custom + "</custom>" + world + "</mujoco>");
    EXPECT_FALSE(imported) << custom;
    EXPECT_NE(imported.error.find(expected), std::string::npos)
        << custom << "\n  gave: " << imported.error;
  }
  const ModelImport good = ImportModelFromString("<mujoco><custom>" + SdfText("dish", kBowl) +
                                                 "</custom>" + world + "</mujoco>");
  ASSERT_TRUE(good) << good.error;
  const Model& m = *good.model;
  EXPECT_EQ(m.nsdf, 1);
  EXPECT_EQ(m.geom_type[0], GeomType::kSdf);
  EXPECT_EQ(m.geom_sdf[0], 0);
  EXPECT_EQ(m.geom_sdf[1], -1);
  EXPECT_TRUE(m.geom_many_contacts[0]);
  EXPECT_FALSE(m.geom_many_contacts[1]);
  EXPECT_DOUBLE_EQ(m.geom_rbound[0], std::hypot(0.08, 0.06) + 0.003);
  EXPECT_GT(m.sdf_face_num[0], 0);
}

// ---------------------------------------------------------------- stepped

struct BowlRun {
  std::vector<double> qpos_1s;
  std::vector<double> qpos_2s;
  std::uint64_t hash = 0;
  int max_contacts = 0;
};

// Steps the scene for `seconds`, keeping qpos at 1 s and at the end.
BowlRun RunBowls(SolverType solver, int threads, double seconds = 2) {
  BowlRun run;
  const ModelImport imported =
      ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/bowl_sphere.xml");
  EXPECT_TRUE(imported) << imported.error;
  if (!imported) return run;
  const Model& m = *imported.model;
  Data d(m);
  StepOptions options;
  options.solver.type = solver;
  const int steps = static_cast<int>(std::lround(1.0 / m.timestep));
  RunWithThreads(threads, [&] {
    for (int k = 0; k < std::lround(seconds * steps); ++k) {
      EXPECT_EQ(Step(m, d, options), StepStatus::kOk);
      run.max_contacts = std::max(run.max_contacts, static_cast<int>(d.contact.size()));
      if (k + 1 == steps) run.qpos_1s = d.qpos;
    }
  });
  run.qpos_2s = d.qpos;
  run.hash = StateHash(m, d);
  return run;
}

// qpos layout of scenes/bowl_sphere.xml: four free joints, 7 entries each: bowl_a, ball, bowl_b,
// bowl_c.
Vec3 Position(const std::vector<double>& qpos, int body) {
  return Vec3(qpos[7 * body], qpos[7 * body + 1], qpos[7 * body + 2]);
}

class SdfScene : public ::testing::TestWithParam<SolverType> {};

// The sphere settles on the bowl's flat floor with its center where the field along the axis
// equals its radius, SDF(0, 0, z) = z - d = r, so z = d + r = 0.023 above the bowl's origin; the
// nested bowl stays where the parallel walls put it. Both contact sets are exact (the floor's is
// the closed form, the walls' lie at triangulation vertices on the surface), so the error left is
// the solver's, which ends each step within its tolerance of zero normal velocity: 20 micrometers
// (0.1% of the sphere's radius) bounds the heights and 10 micrometers the drift over 1 s.
TEST_P(SdfScene, SphereSettlesAtTheAnalyticHeightAndNestedBowlsStayAtRest) {
  const BowlRun run = RunBowls(GetParam(), 1);
  ASSERT_EQ(run.qpos_2s.size(), 28u);
  const Vec3 bowl_a = Position(run.qpos_2s, 0), ball = Position(run.qpos_2s, 1);
  EXPECT_NEAR(ball.z() - bowl_a.z(), kPadding + 0.02, 2e-5);
  EXPECT_NEAR(bowl_a.z(), kPadding, 2e-5);
  EXPECT_LT((ball - bowl_a).head<2>().norm(), 1e-3);
  const double rest = 2 * kPadding / kWallNormal.y();
  const Vec3 outer = Position(run.qpos_2s, 2), inner = Position(run.qpos_2s, 3);
  EXPECT_NEAR(inner.z() - outer.z(), rest, 2e-5);
  EXPECT_LT((inner - outer).head<2>().norm(), 1e-4);
  EXPECT_LT((Position(run.qpos_2s, 3) - Position(run.qpos_1s, 3)).norm(), 1e-5);
  EXPECT_LT((Position(run.qpos_2s, 2) - Position(run.qpos_1s, 2)).norm(), 1e-5);
  EXPECT_GT(run.max_contacts, 100);
}

INSTANTIATE_TEST_SUITE_P(Solvers, SdfScene,
                         ::testing::Values(SolverType::kSubAdmm, SolverType::kCanal));

// MuJoCo 2.2.2 loads the scene (it sees the proxy cylinders) and alsim takes its masses.
TEST(SdfSceneFile, LoadsInMujocoWithTheProxiesMasses) {
  const std::string path = std::string(ALSIM_SCENES_DIR) + "/bowl_sphere.xml";
  char error[1024] = "";
  mjModel* mj = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  ASSERT_NE(mj, nullptr) << error;
  const ModelImport imported = ImportModelFromFile(path);
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  ASSERT_EQ(m.nbody, mj->nbody);
  for (int b = 0; b < m.nbody; ++b) EXPECT_EQ(m.body_mass[b], mj->body_mass[b]);
  EXPECT_EQ(m.nsdf, 3);
  EXPECT_TRUE(m.warnings.empty());
  mj_deleteModel(mj);
}

// After the first steps have sized the buffers, stepping 200 conforming contacts allocates nothing.
TEST(SdfSceneFile, StepsAllocateNothing) {
  const ModelImport imported =
      ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/bowl_sphere.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  RunWithThreads(1, [&] {
    for (int k = 0; k < 60; ++k) ASSERT_EQ(Step(m, d), StepStatus::kOk);
    const testing::AllocationCounter allocations;
    for (int k = 0; k < 20; ++k) ASSERT_EQ(Step(m, d), StepStatus::kOk);
    EXPECT_EQ(allocations.count(), 0);
  });
  EXPECT_GT(d.contact.size(), 100u);
}

TEST(SdfSceneThreads, BitIdenticalForAnyThreadCount) {
  // Half a second: the sphere lands at 0.11 s, and 300 contacts a step are in play.
  const BowlRun one = RunBowls(SolverType::kSubAdmm, 1, 0.5);
  const BowlRun two = RunBowls(SolverType::kSubAdmm, 2, 0.5);
  const BowlRun four = RunBowls(SolverType::kSubAdmm, 4, 0.5);
  EXPECT_GT(one.max_contacts, 100);
  EXPECT_EQ(one.hash, two.hash);
  EXPECT_EQ(one.hash, four.hash);
}

}  // namespace
}  // namespace alsim
