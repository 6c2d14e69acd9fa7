// The hull-graph queries of mesh_hull.h and the plane-mesh contacts built on them, against
// brute-force answers computed from every vertex and every hull triangle of MuJoCo's hull.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "engine/collision/convex_pairs.h"
#include "engine/collision/mesh_hull.h"
#include "engine/collision/narrowphase.h"
#include "engine/collision/primitive_pairs.h"
#include "engine/math/spatial.h"
#include "tests/support/collision_shapes.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::OracleScene;
using testing::RandomRotation;
using testing::RandomUnit;
using testing::Shape;
using testing::VertexList;

// Three meshes: 2000 points on an ellipsoid (all on the hull), a box (8 vertices, square faces
// split in two triangles) and a 40-gon prism (two 40-vertex faces).
std::string MeshScene() {
  std::mt19937 rng(11);
  std::vector<Vec3> rock, box, prism;
  for (int i = 0; i < 2000; ++i)
    rock.push_back(RandomUnit(rng).cwiseProduct(Vec3(0.12, 0.08, 0.05)));
  for (int i = 0; i < 8; ++i) {
    box.emplace_back(i & 1 ? 0.1 : -0.1, i & 2 ? 0.05 : -0.05, i & 4 ? 0.02 : -0.02);
  }
  for (int i = 0; i < 40; ++i) {
    const double angle = 2 * M_PI * i / 40;
    prism.emplace_back(0.1 * std::cos(angle), 0.1 * std::sin(angle), -0.05);
    prism.emplace_back(0.1 * std::cos(angle), 0.1 * std::sin(angle), 0.05);
  }
  std::ostringstream xml;
  xml << "<mujoco><asset>"
      << "<mesh name='rock' vertex='" << VertexList(rock) << "'/>"
      << "<mesh name='box' vertex='" << VertexList(box) << "'/>"
      << "<mesh name='prism' vertex='" << VertexList(prism) << "'/>"
      << "</asset><worldbody>";
  for (const char* name : {"rock", "box", "prism"}) {
    xml << "<body><freejoint/><geom type='mesh' mesh='" << name << "'/></body>";
  }
  xml << "</worldbody></mujoco>";
  return xml.str();
}

class MeshHullTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scene_ = new OracleScene(testing::WriteTempScene("mesh_hull.xml", MeshScene()));
  }
  static void TearDownTestSuite() {
    delete scene_;
    scene_ = nullptr;
  }
  static GeomShape Mesh(int g) { return ShapeOfGeom(scene_->model(), scene_->data(), g); }
  static OracleScene* scene_;
};
OracleScene* MeshHullTest::scene_ = nullptr;

const Vec3& HullPoint(const GeomShape& s, int h) { return s.vertices[s.graph_vert[h]]; }

TEST_F(MeshHullTest, VerticesAboveAPlaneAreExactlyTheBruteForceSet) {
  std::mt19937 rng(3);
  for (int g = 0; g < 3; ++g) {
    const GeomShape s = Mesh(g);
    ASSERT_GT(s.graph_vert_count, 3);
    double extent = 0;
    for (int h = 0; h < s.graph_vert_count; ++h) extent = std::max(extent, HullPoint(s, h).norm());
    int nonempty = 0;
    for (int trial = 0; trial < 400; ++trial) {
      const Vec3 d = RandomUnit(rng);
      int start = -1;
      const int v = MeshSupportVertex(s, d, &start);
      ASSERT_GE(start, 0);
      const double slab = testing::Uniform(rng, 0, 0.4) * extent;
      const double min_dot = s.vertices[v].dot(d) - slab;
      std::set<int> expected;
      for (int h = 0; h < s.graph_vert_count; ++h) {
        if (HullPoint(s, h).dot(d) >= min_dot) expected.insert(h);
      }
      std::vector<int> found(kMaxHullWalk);
      const int n = MeshHullVerticesAbove(s, d, min_dot, start, kMaxHullWalk, found.data());
      if (static_cast<int>(expected.size()) > kMaxHullWalk) {
        EXPECT_EQ(n, kMaxHullWalk);
        continue;
      }
      EXPECT_EQ(std::set<int>(found.begin(), found.begin() + n), expected)
          << "mesh " << g << " trial " << trial;
      EXPECT_EQ(n, static_cast<int>(expected.size())) << "no repeats";
      nonempty += expected.size() > 1;
    }
    EXPECT_GT(nonempty, 100) << "the slabs really hold several vertices";
  }
}

// The outward unit normal of hull triangle t (outward: away from the vertices' centroid).
Vec3 OutwardNormal(const GeomShape& s, const Eigen::Vector3i& t, const Vec3& centroid) {
  const Vec3& a = s.vertices[t[0]];
  Vec3 n = (s.vertices[t[1]] - a).cross(s.vertices[t[2]] - a).normalized();
  return n.dot(a - centroid) < 0 ? Vec3(-n) : n;
}

TEST_F(MeshHullTest, FaceIsTheBestAlignedHullTriangleAtTheSupportVertex) {
  std::mt19937 rng(5);
  for (int g = 0; g < 3; ++g) {
    const GeomShape s = Mesh(g);
    Vec3 centroid = Vec3::Zero();
    for (int i = 0; i < s.vertex_count; ++i) centroid += s.vertices[i];
    centroid /= s.vertex_count;
    std::vector<Vec3> directions;
    for (int i = 0; i < 500; ++i) directions.push_back(RandomUnit(rng));
    // Face normals themselves, slightly perturbed: the reference faces of flat contact.
    for (int f = 0; f < s.hull_face_count; f += std::max(1, s.hull_face_count / 200)) {
      directions.push_back(
          (OutwardNormal(s, s.hull_faces[f], centroid) + 1e-5 * RandomUnit(rng)).normalized());
    }
    for (const Vec3& d : directions) {
      Vec3 normal;
      int support = -1;
      ASSERT_TRUE(MeshHullFace(s, d, &normal, &support));
      const int v = s.graph_vert[support];
      // Brute force: every hull triangle with the scan's support vertex as a corner.
      ASSERT_EQ(s.vertices[v], s.vertices[MeshSupportScan(s, d)]);
      double best = -2;
      for (int f = 0; f < s.hull_face_count; ++f) {
        const Eigen::Vector3i& t = s.hull_faces[f];
        if (t[0] != v && t[1] != v && t[2] != v) continue;
        best = std::max(best, OutwardNormal(s, t, centroid).dot(d));
      }
      ASSERT_GT(best, -2) << "the support vertex is on the hull";
      EXPECT_NEAR(normal.dot(d), best, 1e-9) << "mesh " << g << " d " << d.transpose();
      // The plane supports the whole mesh.
      const double top = normal.dot(s.vertices[v]);
      for (int i = 0; i < s.vertex_count; ++i) {
        EXPECT_LE(normal.dot(s.vertices[i]), top + 1e-7) << "mesh " << g;
      }
    }
  }
}

TEST_F(MeshHullTest, ClimbWithinASlabReachesTheExtremeOfAFace) {
  // The prism's bottom face (z = -0.05, 40 vertices): climbing along any in-plane direction
  // within the slab z < -0.049 must end at the face's extreme vertex, as the scan finds it.
  const GeomShape s = Mesh(2);
  const Vec3 down(0, 0, -1);
  int start = -1;
  MeshSupportVertex(s, down, &start);
  ASSERT_GE(start, 0);
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    const double angle = testing::Uniform(rng, 0, 2 * M_PI);
    const Vec3 t(std::cos(angle), std::sin(angle), 0);
    const int h = MeshHullClimbWithin(s, t, down, 0.049, start);
    double best = -INFINITY;
    for (int i = 0; i < s.vertex_count; ++i) {
      if (s.vertices[i].z() < -0.049) best = std::max(best, t.dot(s.vertices[i]));
    }
    EXPECT_EQ(t.dot(HullPoint(s, h)), best) << "angle " << angle;
    EXPECT_LT(HullPoint(s, h).z(), -0.049);
  }
}

// Plane-mesh contacts against the scan: the deepest point is the lowest vertex, every point is a
// vertex within the margin, at most four, and none repeats.
TEST_F(MeshHullTest, PlaneMeshContactsAgreeWithTheScan) {
  std::mt19937 rng(21);
  const GeomShape plane = Shape(GeomType::kPlane, Vec3(5, 5, 0.1));
  int multi = 0;
  for (int g = 0; g < 3; ++g) {
    GeomShape mesh = Mesh(g);
    for (int trial = 0; trial < 300; ++trial) {
      mesh.rot = RandomRotation(rng);
      double lowest = INFINITY;
      for (int i = 0; i < mesh.vertex_count; ++i) {
        lowest = std::min(lowest, (mesh.rot * mesh.vertices[i]).z());
      }
      const double depth = testing::Uniform(rng, -0.002, 0.004);
      mesh.pos = Vec3(0.3, -0.2, -lowest - depth);
      const double margin = trial % 2 == 0 ? 0.0 : 0.003;
      Contact c[kMaxContactsPerPair];
      const int n = CollidePlaneMesh(plane, mesh, margin, c);
      int within = 0;
      double scan_deepest = INFINITY;
      for (int i = 0; i < mesh.vertex_count; ++i) {
        const double h = (mesh.pos + mesh.rot * mesh.vertices[i]).z();
        scan_deepest = std::min(scan_deepest, h);
        within += h < margin;
      }
      if (within == 0) {
        EXPECT_EQ(n, 0);
        continue;
      }
      ASSERT_GE(n, 1);
      ASSERT_LE(n, 4);
      EXPECT_NEAR(c[0].dist, scan_deepest, 1e-12);
      for (int k = 0; k < n; ++k) {
        EXPECT_LT(c[k].dist, margin);
        EXPECT_EQ(c[k].normal, Vec3::UnitZ());
        // A vertex of the mesh: pos is the vertex lifted by dist / 2.
        const Vec3 vertex = c[k].pos + Vec3::UnitZ() * (c[k].dist / 2);
        double nearest = INFINITY;
        for (int i = 0; i < mesh.vertex_count; ++i) {
          nearest = std::min(nearest, (mesh.pos + mesh.rot * mesh.vertices[i] - vertex).norm());
        }
        EXPECT_LT(nearest, 1e-12);
        // MuJoCo's spacing rule: points of one pair lie 0.3 rbound apart along the plane.
        for (int j = 0; j < k; ++j) {
          const Vec3 d = c[j].pos - c[k].pos;
          EXPECT_GT(std::hypot(d.x(), d.y()), 0.3 * mesh.rbound);
        }
      }
      multi += n > 1;
    }
  }
  EXPECT_GT(multi, 25) << "patches of several vertices were met";
}

TEST_F(MeshHullTest, BoxMeshLyingFlatGivesItsFourBottomCorners) {
  GeomShape box = Mesh(1);  // half sizes 0.1, 0.05, 0.02, in whatever axes MuJoCo's frame gives
  Vec3 half = Vec3::Zero();
  for (int i = 0; i < box.vertex_count; ++i) half = half.cwiseMax(box.vertices[i].cwiseAbs());
  int thin = 0;
  half.minCoeff(&thin);
  ASSERT_NEAR(half[thin], 0.02, 1e-7);
  // Lying on its largest face, turned 0.7 rad about the vertical, 1 mm into the plane.
  const Mat3 flat =
      Eigen::Quaterniond::FromTwoVectors(Vec3::Unit(thin), Vec3::UnitZ()).toRotationMatrix();
  box.rot = QuatToMatrix(QuatFromAxisAngle(Vec3::UnitZ(), 0.7)) * flat;
  box.pos = Vec3(0.1, 0.2, half[thin] - 1e-3);
  const GeomShape plane = Shape(GeomType::kPlane, Vec3(5, 5, 0.1));
  Contact c[kMaxContactsPerPair];
  ASSERT_EQ(CollidePlaneMesh(plane, box, 0.0, c), 4);
  std::set<std::pair<bool, bool>> corners;
  const int j = (thin + 1) % 3;
  const int k = (thin + 2) % 3;
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(c[i].dist, -1e-3, 1e-9);
    const Vec3 local = box.rot.transpose() * (c[i].pos - box.pos);
    EXPECT_NEAR(std::abs(local[j]), half[j], 1e-7);
    EXPECT_NEAR(std::abs(local[k]), half[k], 1e-7);
    corners.insert({local[j] > 0, local[k] > 0});
  }
  EXPECT_EQ(corners.size(), 4u) << "the four corners of the bottom face";
}

// The ellipsoid rock lying on its flattest side, 1 mm into the plane: every vertex within about
// 2 cm of the lowest one touches, but points that close add no moment arm and only crowd the
// solver with near-duplicate rows, so the pair gives its deepest vertex alone (MuJoCo's rule:
// points at least 0.3 rbound apart).
TEST_F(MeshHullTest, RoundMeshRestingGivesItsDeepestVertexAlone) {
  GeomShape rock = Mesh(0);  // semi-axes 0.12, 0.08, 0.05
  Vec3 half = Vec3::Zero();
  for (int i = 0; i < rock.vertex_count; ++i) half = half.cwiseMax(rock.vertices[i].cwiseAbs());
  int thin = 0;
  half.minCoeff(&thin);
  const GeomShape plane = Shape(GeomType::kPlane, Vec3(5, 5, 0.1));
  for (const double turn : {0.0, 0.4, 1.3}) {
    const Mat3 flat =
        Eigen::Quaterniond::FromTwoVectors(Vec3::Unit(thin), Vec3::UnitZ()).toRotationMatrix();
    rock.rot = QuatToMatrix(QuatFromAxisAngle(Vec3::UnitZ(), turn)) * flat;
    double lowest = INFINITY;
    int touching = 0;
    for (int i = 0; i < rock.vertex_count; ++i) {
      lowest = std::min(lowest, (rock.rot * rock.vertices[i]).z());
    }
    rock.pos = Vec3(0, 0, -lowest - 1e-3);
    for (int i = 0; i < rock.vertex_count; ++i) {
      touching += (rock.pos + rock.rot * rock.vertices[i]).z() < 0;
    }
    ASSERT_GT(touching, 3) << "a patch of several vertices touches";
    Contact c[kMaxContactsPerPair];
    ASSERT_EQ(CollidePlaneMesh(plane, rock, 0.0, c), 1) << "turn " << turn;
    EXPECT_NEAR(c[0].dist, -1e-3, 1e-12);
  }
}

// A box mesh tipped 10 degrees about its longest axis, its low edge 1 mm into the plane: the two
// corners of that edge touch and are kept; of the two raised bottom corners (about 16 mm up,
// within the 20 mm margin) only one, the lowest, stays as a speculative point.
TEST_F(MeshHullTest, TippedBoxKeepsItsTouchingEdgeAndOneRaisedCorner) {
  GeomShape box = Mesh(1);
  Vec3 half = Vec3::Zero();
  for (int i = 0; i < box.vertex_count; ++i) half = half.cwiseMax(box.vertices[i].cwiseAbs());
  int thin = 0;
  int longest = 0;
  half.minCoeff(&thin);
  half.maxCoeff(&longest);
  const Mat3 flat =
      Eigen::Quaterniond::FromTwoVectors(Vec3::Unit(thin), Vec3::UnitZ()).toRotationMatrix();
  const double tilt = 10 * M_PI / 180;
  box.rot = QuatToMatrix(QuatFromAxisAngle(flat * Vec3::Unit(longest), tilt)) * flat;
  double lowest = INFINITY;
  for (int i = 0; i < box.vertex_count; ++i) {
    lowest = std::min(lowest, (box.rot * box.vertices[i]).z());
  }
  box.pos = Vec3(0, 0, -lowest - 1e-3);
  const GeomShape plane = Shape(GeomType::kPlane, Vec3(5, 5, 0.1));
  Contact c[kMaxContactsPerPair];
  ASSERT_EQ(CollidePlaneMesh(plane, box, 0.02, c), 3);
  const int middle = 3 - thin - longest;
  const double raised = 2 * half[middle] * std::sin(tilt) - 1e-3;
  int touching = 0;
  for (int k = 0; k < 3; ++k) {
    if (c[k].dist < 0) {
      EXPECT_NEAR(c[k].dist, -1e-3, 1e-7);
      ++touching;
    } else {
      EXPECT_NEAR(c[k].dist, raised, 1e-6);
    }
  }
  EXPECT_EQ(touching, 2);
}

// CollideShapes drops mesh pairs whose bounding spheres or boxes are apart before the general
// routine runs: that must never lose a contact. Random poses of the rock and the box mesh against
// each other and against primitives, from overlapping to just beyond reach, with and without a
// margin, must give exactly what CollideConvex gives on its own.
TEST_F(MeshHullTest, BoundingVolumeRejectionNeverDropsAContact) {
  std::mt19937 rng(33);
  const GeomShape rock = Mesh(0);
  const GeomShape box_mesh = Mesh(1);
  std::vector<GeomShape> others = {box_mesh, rock, Shape(GeomType::kBox, Vec3(0.1, 0.03, 0.05)),
                                   Shape(GeomType::kCapsule, Vec3(0.03, 0.1, 0)),
                                   Shape(GeomType::kSphere, Vec3(0.05, 0, 0))};
  others[2].rbound = Vec3(0.1, 0.03, 0.05).norm();
  others[3].rbound = 0.13;
  others[4].rbound = 0.05;
  int touching = 0;
  int apart = 0;
  for (const GeomShape* first : {&rock, &box_mesh}) {
    for (const GeomShape& other : others) {
      for (int trial = 0; trial < 400; ++trial) {
        GeomShape a = *first;
        GeomShape b = other;
        a.rot = RandomRotation(rng);
        b.rot = RandomRotation(rng);
        a.pos = Vec3(0.1, 0.2, 0.3);
        const double distance = testing::Uniform(rng, 0.0, a.rbound + b.rbound + 0.02);
        const Vec3 direction = RandomUnit(rng);
        b.pos = a.pos + distance * direction;
        const double margin = trial % 2 == 0 ? 0.0 : 0.01;
        Contact expected[kMaxContactsPerPair];
        Contact got[kMaxContactsPerPair];
        const int n = CollideConvex(a, b, margin, expected);
        ASSERT_EQ(CollideShapes(a, b, margin, got), n) << "trial " << trial;
        for (int k = 0; k < n; ++k) {
          EXPECT_EQ(got[k].dist, expected[k].dist);
          EXPECT_EQ(got[k].pos, expected[k].pos);
          EXPECT_EQ(got[k].normal, expected[k].normal);
        }
        (n > 0 ? touching : apart) += 1;
      }
    }
  }
  EXPECT_GT(touching, 500);
  EXPECT_GT(apart, 500);
}

}  // namespace
}  // namespace alsim
