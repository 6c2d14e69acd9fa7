// CollideConvex: analytic answers, antisymmetry, flat multi-point contact, and MuJoCo 2.2.2's own
// pair functions (mjCOLLISIONFUNC) as an oracle at random poses near contact.
#include "engine/collision/convex_pairs.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/math/spatial.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::OracleScene;

// ---------------------------------------------------------------- shapes

GeomShape Shape(GeomType type, const Vec3& size, const Vec3& pos = Vec3::Zero(),
                const Mat3& rot = Mat3::Identity()) {
  GeomShape s;
  s.type = type;
  s.size = size;
  s.pos = pos;
  s.rot = rot;
  return s;
}

// A convex polyhedron given by its vertices and outward triangles.
struct MeshData {
  std::vector<Vec3> vertices;
  std::vector<Eigen::Vector3i> faces;

  GeomShape At(const Vec3& pos, const Mat3& rot) const {
    GeomShape s = Shape(GeomType::kMesh, Vec3::Zero(), pos, rot);
    s.vertices = vertices.data();
    s.vertex_count = static_cast<int>(vertices.size());
    s.hull_faces = faces.data();
    s.hull_face_count = static_cast<int>(faces.size());
    return s;
  }
};

// The cube [-h, h]^3 as a mesh: 8 corners, 12 outward triangles (two per face).
MeshData CubeMesh(double h) {
  MeshData m;
  for (int i = 0; i < 8; ++i) {
    m.vertices.emplace_back(i & 1 ? h : -h, i & 2 ? h : -h, i & 4 ? h : -h);
  }
  m.faces = {{0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4},
             {2, 6, 7}, {2, 7, 3}, {0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}};
  return m;
}

Mat3 RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  const Quat q = Quat(normal(rng), normal(rng), normal(rng), normal(rng)).normalized();
  return QuatToMatrix(q);
}

Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  return Vec3(normal(rng), normal(rng), normal(rng)).normalized();
}

double Uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

int Deepest(const Contact* c, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (c[i].dist < c[best].dist) best = i;
  }
  return best;
}

// ---------------------------------------------------------------- analytic answers

// A sphere of radius r, or the ellipsoid with three semi-axes r, which must behave the same.
GeomShape Ball(GeomType type, double r, const Vec3& pos, const Mat3& rot) {
  return Shape(type, type == GeomType::kSphere ? Vec3(r, 0, 0) : Vec3(r, r, r), pos, rot);
}

// MPR stops when the portal is within kMprTolerance of the boundary; depths of smooth pairs come
// out far closer, directions to about 1e-4 (the portal is a small facet of a curved surface).
constexpr double kDepthTol = 1e-6;
constexpr double kDirectionTol = 1e-4;

TEST(ConvexPairsTest, SphereSphereMatchesClosedForm) {
  std::mt19937 rng(1);
  for (const GeomType type : {GeomType::kSphere, GeomType::kEllipsoid}) {
    for (int trial = 0; trial < 50; ++trial) {
      const double ra = Uniform(rng, 0.1, 0.6);
      const double rb = Uniform(rng, 0.1, 0.6);
      const double expected_dist = Uniform(rng, -0.05, 0.009);
      const Vec3 n = RandomUnit(rng);
      const Vec3 ca(Uniform(rng, -1, 1), Uniform(rng, -1, 1), Uniform(rng, -1, 1));
      const Vec3 cb = ca + n * (ra + rb + expected_dist);
      Contact c[kMaxContactsPerPair];
      const int count = CollideConvex(Ball(type, ra, ca, RandomRotation(rng)),
                                      Ball(type, rb, cb, RandomRotation(rng)), 0.01, c);
      ASSERT_EQ(count, 1);
      EXPECT_NEAR(c[0].dist, expected_dist, kDepthTol);
      EXPECT_LT((c[0].normal - n).norm(), kDirectionTol);
      // Midpoint between the surfaces on the line of centers.
      EXPECT_LT((c[0].pos - (ca + n * (ra + expected_dist / 2))).norm(), kDirectionTol);
    }
  }
}

// Closest point of an axis-aligned box (half sizes h) to p, in the box frame.
Vec3 ClosestOnBox(const Vec3& h, const Vec3& p) { return p.cwiseMax(-h).cwiseMin(h); }

// A ball over a face of a rotated box, penetrating or within the margin: the normal is the face
// normal, dist the height of the center above the face minus r.
TEST(ConvexPairsTest, BallOnABoxFaceMatchesClosedForm) {
  std::mt19937 rng(2);
  const Vec3 half(0.5, 0.3, 0.2);
  for (const GeomType type : {GeomType::kSphere, GeomType::kEllipsoid}) {
    for (int trial = 0; trial < 60; ++trial) {
      const Mat3 rot = RandomRotation(rng);
      const Vec3 box_pos(Uniform(rng, -1, 1), Uniform(rng, -1, 1), Uniform(rng, -1, 1));
      // The center stays r inside the face's edges and above the face, so that leaving through
      // the face is the shortest way out (deep near an edge, the edge would be).
      const double r = Uniform(rng, 0.05, 0.15);
      const double dist = Uniform(rng, -0.9 * r, 0.009);
      const Vec3 local(Uniform(rng, -0.5 + r, 0.5 - r), Uniform(rng, -0.3 + r, 0.3 - r),
                       0.2 + r + dist);
      Contact c[kMaxContactsPerPair];
      const int count =
          CollideConvex(Shape(GeomType::kBox, half, box_pos, rot),
                        Ball(type, r, box_pos + rot * local, RandomRotation(rng)), 0.01, c);
      ASSERT_EQ(count, 1) << trial;
      const Vec3 normal = rot.col(2);
      const Vec3 on_face = box_pos + rot * Vec3(local.x(), local.y(), 0.2);
      EXPECT_NEAR(c[0].dist, dist, kDepthTol) << trial;
      EXPECT_LT((c[0].normal - normal).norm(), kDirectionTol) << trial;
      EXPECT_LT((c[0].pos - (on_face + normal * dist / 2)).norm(), kDirectionTol) << trial;
    }
  }
}

// Near an edge or corner of the box the inflated Minkowski difference is curved, and MPR's depth
// is measured along the portal it reaches from the centers, not along the closest direction:
// MuJoCo's collider (same algorithm) has the same error, up to a few 1e-4 m in distance and a
// few tenths in the normal for these sizes. The test bounds it.
TEST(ConvexPairsTest, SphereNearABoxEdgeOrCornerIsWithinMprAccuracy) {
  std::mt19937 rng(3);
  const Vec3 half(0.5, 0.3, 0.2);
  double worst_dist = 0;
  double worst_normal = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Mat3 rot = RandomRotation(rng);
    const double r = Uniform(rng, 0.05, 0.3);
    const double dist = Uniform(rng, 0.0, 0.009);  // separated, within the margin
    const bool corner = trial % 2 == 1;
    const Vec3 out_dir = corner ? Vec3(1, -1, 1).normalized() : Vec3(1, 0, 1).normalized();
    const Vec3 feature = corner ? Vec3(0.5, -0.3, 0.2) : Vec3(0.5, 0, 0.2);
    const Vec3 local = feature + out_dir * (r + dist);
    Contact c[kMaxContactsPerPair];
    const int count = CollideConvex(Shape(GeomType::kBox, half, Vec3::Zero(), rot),
                                    Shape(GeomType::kSphere, Vec3(r, 0, 0), rot * local), 0.01, c);
    ASSERT_EQ(count, 1) << trial;
    EXPECT_EQ(ClosestOnBox(half, local), feature);
    worst_dist = std::max(worst_dist, std::abs(c[0].dist - dist));
    worst_normal = std::max(worst_normal, (c[0].normal - rot * out_dir).norm());
  }
  std::printf("sphere near box edge/corner: worst |ddist| %.2e, worst |dnormal| %.2e\n", worst_dist,
              worst_normal);
  EXPECT_LT(worst_dist, 1e-3);
  EXPECT_LT(worst_normal, 0.5);
}

TEST(ConvexPairsTest, SeparatedBeyondMarginGivesNothingWithinMarginGivesPositiveDistance) {
  const GeomShape box = Shape(GeomType::kBox, Vec3(0.5, 0.5, 0.5));
  const GeomShape far =
      Shape(GeomType::kEllipsoid, Vec3(0.2, 0.1, 0.3), Vec3(0, 0, 0.5 + 0.3 + 0.05));
  Contact c[kMaxContactsPerPair];
  EXPECT_EQ(CollideConvex(box, far, 0.0, c), 0);
  EXPECT_EQ(CollideConvex(box, far, 0.04, c), 0);
  ASSERT_EQ(CollideConvex(box, far, 0.06, c), 1);
  EXPECT_NEAR(c[0].dist, 0.05, 1e-9);
  EXPECT_LT((c[0].normal - Vec3::UnitZ()).norm(), 1e-9);
  EXPECT_LT((c[0].pos - Vec3(0, 0, 0.525)).norm(), 1e-6);
}

TEST(ConvexPairsTest, CubeMeshEqualsBox) {
  std::mt19937 rng(3);
  const MeshData cube = CubeMesh(0.2);
  for (int trial = 0; trial < 100; ++trial) {
    const Mat3 rot = RandomRotation(rng);
    const GeomShape other =
        Shape(GeomType::kBox, Vec3(0.3, 0.15, 0.1), Vec3::Zero(), RandomRotation(rng));
    const Vec3 dir = RandomUnit(rng);
    const double reach = (SupportPoint(other, dir) - other.pos).dot(dir) + 0.2 * std::sqrt(3.0);
    const Vec3 pos = dir * (reach * Uniform(rng, 0.6, 1.0));
    Contact as_box[kMaxContactsPerPair];
    Contact as_mesh[kMaxContactsPerPair];
    const int nb =
        CollideConvex(other, Shape(GeomType::kBox, Vec3(0.2, 0.2, 0.2), pos, rot), 0, as_box);
    const int nm = CollideConvex(other, cube.At(pos, rot), 0, as_mesh);
    ASSERT_EQ(nb > 0, nm > 0) << trial;
    if (nb == 0) continue;
    const Contact& b = as_box[Deepest(as_box, nb)];
    const Contact& m = as_mesh[Deepest(as_mesh, nm)];
    EXPECT_NEAR(b.dist, m.dist, 1e-9) << trial;
    EXPECT_LT((b.normal - m.normal).norm(), 1e-9) << trial;
  }
}

// ---------------------------------------------------------------- antisymmetry

TEST(ConvexPairsTest, SwappingFlipsTheNormalAndNothingElse) {
  std::mt19937 rng(5);
  const MeshData cube = CubeMesh(0.15);
  const GeomType types[] = {GeomType::kSphere,   GeomType::kCapsule, GeomType::kEllipsoid,
                            GeomType::kCylinder, GeomType::kBox,     GeomType::kMesh};
  int contacts = 0;
  for (const GeomType ta : types) {
    for (const GeomType tb : types) {
      for (int trial = 0; trial < 20; ++trial) {
        const Vec3 size_a(Uniform(rng, 0.1, 0.3), Uniform(rng, 0.1, 0.3), Uniform(rng, 0.1, 0.3));
        const Vec3 size_b(Uniform(rng, 0.1, 0.3), Uniform(rng, 0.1, 0.3), Uniform(rng, 0.1, 0.3));
        GeomShape a = ta == GeomType::kMesh ? cube.At(Vec3::Zero(), RandomRotation(rng))
                                            : Shape(ta, size_a, Vec3::Zero(), RandomRotation(rng));
        GeomShape b = tb == GeomType::kMesh ? cube.At(Vec3::Zero(), RandomRotation(rng))
                                            : Shape(tb, size_b, Vec3::Zero(), RandomRotation(rng));
        // Flat poses half of the time: both shapes axis-aligned, b on top of a.
        if (trial % 2 == 0) a.rot = b.rot = Mat3::Identity();
        const Vec3 dir = trial % 2 == 0 ? Vec3::UnitZ() : RandomUnit(rng);
        const double reach =
            (SupportPoint(a, dir) - a.pos).dot(dir) + (b.pos - SupportPoint(b, -dir)).dot(dir);
        b.pos = dir * (reach + Uniform(rng, -0.05, 0.01)) +
                Vec3(Uniform(rng, -0.05, 0.05), Uniform(rng, -0.05, 0.05), 0);
        Contact ab[kMaxContactsPerPair];
        Contact ba[kMaxContactsPerPair];
        const int nab = CollideConvex(a, b, 0.01, ab);
        const int nba = CollideConvex(b, a, 0.01, ba);
        ASSERT_EQ(nab, nba);
        contacts += nab;
        for (int i = 0; i < nab; ++i) {
          EXPECT_EQ(ab[i].dist, ba[i].dist);
          EXPECT_EQ(ab[i].pos, ba[i].pos);
          EXPECT_EQ(ab[i].normal, Vec3(-ba[i].normal));
        }
      }
    }
  }
  EXPECT_GT(contacts, 500);  // the poses really touch
}

// ---------------------------------------------------------------- flat contact

TEST(ConvexPairsTest, MeshCubeRestingOnABoxGivesItsFourCorners) {
  const MeshData cube = CubeMesh(0.1);
  const GeomShape table = Shape(GeomType::kBox, Vec3(1, 1, 0.05), Vec3(0, 0, -0.05));
  const double depth = 1e-3;
  const double yaw = 0.3;
  const Mat3 rot = QuatToMatrix(QuatFromAxisAngle(Vec3::UnitZ(), yaw));
  const Vec3 center(0.2, -0.1, 0.1 - depth);
  Contact c[kMaxContactsPerPair];
  const int count = CollideConvex(table, cube.At(center, rot), 0.005, c);
  ASSERT_EQ(count, 4);
  std::vector<bool> corner_found(4, false);
  for (int i = 0; i < count; ++i) {
    EXPECT_NEAR(c[i].dist, -depth, 1e-9);
    EXPECT_LT((c[i].normal - Vec3::UnitZ()).norm(), 1e-12);
    EXPECT_NEAR(c[i].pos.z(), -depth / 2, 1e-9);
    for (int k = 0; k < 4; ++k) {
      const Vec3 corner = center + rot * Vec3(k & 1 ? 0.1 : -0.1, k & 2 ? 0.1 : -0.1, -0.1);
      if ((c[i].pos.head<2>() - corner.head<2>()).norm() < 1e-9) corner_found[k] = true;
    }
  }
  for (int k = 0; k < 4; ++k) EXPECT_TRUE(corner_found[k]) << "corner " << k;
}

TEST(ConvexPairsTest, CylinderStandingOnABoxGivesRimPoints) {
  const GeomShape table = Shape(GeomType::kBox, Vec3(1, 1, 0.05), Vec3(0, 0, -0.05));
  const double r = 0.1;
  const double h = 0.2;
  const double depth = 2e-3;
  const GeomShape cylinder = Shape(GeomType::kCylinder, Vec3(r, h, 0), Vec3(0.1, 0.2, h - depth));
  Contact c[kMaxContactsPerPair];
  const int count = CollideConvex(table, cylinder, 0, c);
  EXPECT_EQ(count, 8);
  for (int i = 0; i < count; ++i) {
    EXPECT_NEAR(c[i].dist, -depth, 1e-9);
    EXPECT_LT((c[i].normal - Vec3::UnitZ()).norm(), 1e-12);
    EXPECT_NEAR((c[i].pos.head<2>() - cylinder.pos.head<2>()).norm(), r, 1e-9);  // on the rim
  }
}

TEST(ConvexPairsTest, TiltedCylinderKeepsItsTrueDeepestRimPoint) {
  // Tilted about x by 2 degrees: the lowest rim point is at z = c - h cos(t) - r sin(t), which lies
  // between the vertices of the rim polygon used for clipping; MPR's point supplies it.
  const GeomShape table = Shape(GeomType::kBox, Vec3(1, 1, 0.05), Vec3(0, 0, -0.05));
  const double r = 0.1;
  const double h = 0.2;
  const double tilt = 2 * M_PI / 180;
  const Mat3 rot = QuatToMatrix(QuatFromAxisAngle(Vec3(1, 1, 0).normalized(), tilt));
  const double lowest = h * std::cos(tilt) + r * std::sin(tilt);
  const double depth = 1e-3;
  const GeomShape cylinder =
      Shape(GeomType::kCylinder, Vec3(r, h, 0), Vec3(0, 0, lowest - depth), rot);
  Contact c[kMaxContactsPerPair];
  const int count = CollideConvex(table, cylinder, 0.01, c);
  ASSERT_GE(count, 3);
  EXPECT_NEAR(c[Deepest(c, count)].dist, -depth, 2e-6);
  for (int i = 0; i < count; ++i) EXPECT_LT(c[i].dist, 0.01);
}

// ---------------------------------------------------------------- MuJoCo oracle

// Vertices and outward triangles, written as an OBJ file for MuJoCo.
std::string ObjText(const MeshData& mesh) {
  std::string text;
  char line[160];
  for (const Vec3& v : mesh.vertices) {
    std::snprintf(line, sizeof(line), "v %.9g %.9g %.9g\n", v.x(), v.y(), v.z());
    text += line;
  }
  for (const Eigen::Vector3i& f : mesh.faces) {
    std::snprintf(line, sizeof(line), "f %d %d %d\n", f[0] + 1, f[1] + 1, f[2] + 1);
    text += line;
  }
  return text;
}

// An irregular octahedron: one vertex on each half-axis, at different distances (no parallel
// faces), and a wedge (triangular prism) with flat faces.
MeshData Octahedron() {
  MeshData m;
  m.vertices = {{0.25, 0, 0},  {-0.15, 0, 0}, {0, 0.2, 0},
                {0, -0.12, 0}, {0, 0, 0.18},  {0, 0, -0.22}};
  m.faces = {{0, 2, 4}, {2, 1, 4}, {1, 3, 4}, {3, 0, 4},
             {2, 0, 5}, {1, 2, 5}, {3, 1, 5}, {0, 3, 5}};
  return m;
}

MeshData Wedge() {
  MeshData m;
  m.vertices = {{-0.2, -0.1, -0.08}, {0.2, -0.1, -0.08}, {0, 0.15, -0.08},
                {-0.2, -0.1, 0.08},  {0.2, -0.1, 0.08},  {0, 0.15, 0.08}};
  m.faces = {{0, 2, 1}, {3, 4, 5}, {0, 1, 4}, {0, 4, 3},
             {1, 2, 5}, {1, 5, 4}, {2, 0, 3}, {2, 3, 5}};
  return m;
}

const char* TypeName(GeomType t) {
  static const char* names[] = {"plane",     "hfield",   "sphere", "capsule",
                                "ellipsoid", "cylinder", "box",    "mesh"};
  return names[static_cast<int>(t)];
}

std::string GeomXml(GeomType type, const std::string& size, const std::string& mesh) {
  if (type == GeomType::kMesh) return "<geom type=\"mesh\" mesh=\"" + mesh + "\"/>";
  return std::string("<geom type=\"") + TypeName(type) + "\" size=\"" + size + "\"/>";
}

struct OraclePair {
  GeomType a;
  std::string size_a;
  GeomType b;
  std::string size_b;
  std::string mesh;  // "octahedron" or "wedge" for the mesh geom(s)
};

// The two geoms of a scene at MuJoCo's current pose, as CollideConvex sees them.
GeomShape ShapeAt(const OracleScene& scene, int g) {
  const Model& m = scene.model();
  const mjData* d = const_cast<OracleScene&>(scene).mj_data();
  GeomShape s;
  s.type = m.geom_type[g];
  s.size = m.geom_size[g];
  s.pos = Vec3(d->geom_xpos[3 * g], d->geom_xpos[3 * g + 1], d->geom_xpos[3 * g + 2]);
  for (int i = 0; i < 9; ++i) s.rot(i / 3, i % 3) = d->geom_xmat[9 * g + i];
  const int mesh = m.geom_mesh[g];
  if (mesh >= 0) {
    s.vertices = m.mesh_vert.data() + m.mesh_vert_adr[mesh];
    s.vertex_count = m.mesh_vert_num[mesh];
    s.hull_faces = m.mesh_hull_face.data() + m.mesh_hull_face_adr[mesh];
    s.hull_face_count = m.mesh_hull_face_num[mesh];
  }
  return s;
}

struct Deviation {
  double depth = 0;     // worst |dist - MuJoCo's dist| of the deepest point
  double normal = 0;    // worst |normal - MuJoCo's normal|
  int depth_over = 0;   // poses whose dist differs by more than kDepthTol
  int normal_over = 0;  // poses whose normal differs by more than kDirectionTol
  int compared = 0;
  int decisions_differ = 0;
  // Poses where CollideConvex clipped faces (several points): its depth comes from the face
  // planes, MuJoCo's from MPR, so they are kept apart.
  int flat = 0;
  double flat_depth = 0;
};

// Poses b around a near contact, runs both engines, returns the worst differences of the deepest
// point's dist and normal.
Deviation CompareWithMujoco(const OraclePair& pair, double margin, int poses, unsigned seed) {
  std::string xml = "<mujoco><compiler meshdir=\"" + ::testing::TempDir() + "\"/><asset>" +
                    "<mesh name=\"octahedron\" file=\"convex_octahedron.obj\"/>" +
                    "<mesh name=\"wedge\" file=\"convex_wedge.obj\"/></asset><worldbody>" +
                    "<body><freejoint/>" + GeomXml(pair.a, pair.size_a, pair.mesh) + "</body>" +
                    "<body pos=\"0 0 1\"><freejoint/>" + GeomXml(pair.b, pair.size_b, pair.mesh) +
                    "</body></worldbody></mujoco>";
  testing::WriteTempScene("convex_octahedron.obj", ObjText(Octahedron()));
  testing::WriteTempScene("convex_wedge.obj", ObjText(Wedge()));
  OracleScene scene(testing::WriteTempScene("convex_oracle.xml", xml));
  Deviation dev;
  if (!scene.ok()) return dev;
  const mjModel* mj = scene.mj_model();
  mjData* d = scene.mj_data();
  const mjfCollision collide = mjCOLLISIONFUNC[static_cast<int>(pair.a)][static_cast<int>(pair.b)];
  std::mt19937 rng(seed);
  std::array<mjContact, mjMAXCONPAIR> mj_contacts;
  for (int trial = 0; trial < poses; ++trial) {
    // a at the origin, b along a random direction at about touching distance, both rotated.
    mju_zero(d->qpos, mj->nq);
    for (int body = 0; body < 2; ++body) {
      std::normal_distribution<double> normal;
      Quat q = Quat(normal(rng), normal(rng), normal(rng), normal(rng)).normalized();
      for (int k = 0; k < 4; ++k) d->qpos[7 * body + 3 + k] = q[k];
    }
    mj_kinematics(mj, d);
    const Vec3 dir = RandomUnit(rng);
    const GeomShape a0 = ShapeAt(scene, 0);
    const GeomShape b0 = ShapeAt(scene, 1);
    const double touch =
        (SupportPoint(a0, dir) - a0.pos).dot(dir) + (b0.pos - SupportPoint(b0, -dir)).dot(dir);
    // Overlaps of up to 8 cm, gaps of up to 1 cm; the geom may sit off its body's origin (meshes).
    const Vec3 geom_offset = b0.pos - Vec3(d->qpos[7], d->qpos[8], d->qpos[9]);
    const Vec3 offset = a0.pos + dir * (touch + Uniform(rng, -0.08, 0.01)) - geom_offset;
    for (int k = 0; k < 3; ++k) d->qpos[7 + k] = offset[k];
    mj_kinematics(mj, d);

    // MPR's answer depends on which shape comes first (by up to a few 1e-4 m). CollideConvex
    // solves a same-type pair in a canonical order, by position when the types are equal: call
    // MuJoCo in that order too, and turn its normals to point from geom 0 to geom 1.
    const GeomShape a1 = ShapeAt(scene, 0);
    const GeomShape b1 = ShapeAt(scene, 1);
    const bool swap =
        pair.a == pair.b && std::lexicographical_compare(b1.pos.data(), b1.pos.data() + 3,
                                                         a1.pos.data(), a1.pos.data() + 3);
    const int n_mj = collide(mj, d, mj_contacts.data(), swap ? 1 : 0, swap ? 0 : 1, margin);
    for (int i = 0; swap && i < n_mj; ++i) {
      for (int k = 0; k < 3; ++k) mj_contacts[i].frame[k] = -mj_contacts[i].frame[k];
    }
    Contact c[kMaxContactsPerPair];
    const int n = CollideConvex(a1, b1, margin, c);
    if ((n > 0) != (n_mj > 0)) {
      // Only acceptable right at the margin boundary (MPR's tolerance decides there).
      const double boundary_gap =
          n > 0 ? margin - c[Deepest(c, n)].dist : margin - mj_contacts[0].dist;
      EXPECT_LT(std::abs(boundary_gap), 1e-5)
          << TypeName(pair.a) << "-" << TypeName(pair.b) << " pose " << trial;
      ++dev.decisions_differ;
      continue;
    }
    if (n == 0) continue;
    int mj_deepest = 0;
    for (int i = 1; i < n_mj; ++i) {
      if (mj_contacts[i].dist < mj_contacts[mj_deepest].dist) mj_deepest = i;
    }
    const mjContact& ref = mj_contacts[mj_deepest];
    const Contact& ours = c[Deepest(c, n)];
    const Vec3 ref_normal(ref.frame[0], ref.frame[1], ref.frame[2]);
    const double depth_error = std::abs(ours.dist - ref.dist);
    const double normal_error = (ours.normal - ref_normal).norm();
    if (n > 1) {
      ++dev.flat;
      dev.flat_depth = std::max(dev.flat_depth, depth_error);
      continue;
    }
    dev.depth = std::max(dev.depth, depth_error);
    dev.normal = std::max(dev.normal, normal_error);
    dev.depth_over += depth_error > kDepthTol;
    dev.normal_over += normal_error > kDirectionTol;
    ++dev.compared;
  }
  return dev;
}

TEST(ConvexPairsOracleTest, AgreesWithMujocoNearContact) {
  const std::vector<OraclePair> pairs = {
      {GeomType::kSphere, "0.15", GeomType::kEllipsoid, "0.2 0.1 0.15", ""},
      {GeomType::kSphere, "0.15", GeomType::kCylinder, "0.1 0.2", ""},
      {GeomType::kSphere, "0.15", GeomType::kMesh, "", "octahedron"},
      {GeomType::kCapsule, "0.1 0.2", GeomType::kEllipsoid, "0.2 0.1 0.15", ""},
      {GeomType::kCapsule, "0.1 0.2", GeomType::kCylinder, "0.15 0.1", ""},
      {GeomType::kCapsule, "0.1 0.2", GeomType::kMesh, "", "octahedron"},
      {GeomType::kEllipsoid, "0.2 0.1 0.15", GeomType::kEllipsoid, "0.1 0.25 0.12", ""},
      {GeomType::kEllipsoid, "0.2 0.1 0.15", GeomType::kCylinder, "0.1 0.2", ""},
      {GeomType::kEllipsoid, "0.2 0.1 0.15", GeomType::kBox, "0.2 0.15 0.1", ""},
      {GeomType::kEllipsoid, "0.2 0.1 0.15", GeomType::kMesh, "", "octahedron"},
      {GeomType::kCylinder, "0.1 0.2", GeomType::kCylinder, "0.15 0.1", ""},
      {GeomType::kCylinder, "0.1 0.2", GeomType::kBox, "0.2 0.15 0.1", ""},
      {GeomType::kCylinder, "0.1 0.2", GeomType::kMesh, "", "wedge"},
      {GeomType::kBox, "0.2 0.15 0.1", GeomType::kMesh, "", "octahedron"},
      {GeomType::kBox, "0.2 0.15 0.1", GeomType::kMesh, "", "wedge"},
      {GeomType::kMesh, "", GeomType::kMesh, "", "octahedron"},
      {GeomType::kMesh, "", GeomType::kMesh, "", "wedge"},
  };
  unsigned seed = 100;
  for (const OraclePair& pair : pairs) {
    // MuJoCo replaces the MPR normal of spheres, capsules, ellipsoids and cylinders by the
    // surface normal at its contact point (its mjc_fixNormal); alsim keeps MPR's normal.
    const bool curved = pair.a != GeomType::kBox && pair.a != GeomType::kMesh;
    for (const double margin : {0.0, 0.02}) {
      const Deviation dev = CompareWithMujoco(pair, margin, 600, seed++);
      std::printf(
          "%-9s %-9s %-10s margin %.2f: %3d single-point poses, %d decisions differ; dist: "
          "worst %.1e, %2d over %.0e; normal: worst %.1e, %3d over %.0e; %3d flat poses, dist "
          "worst %.1e\n",
          TypeName(pair.a), TypeName(pair.b), pair.mesh.c_str(), margin, dev.compared,
          dev.decisions_differ, dev.depth, dev.depth_over, kDepthTol, dev.normal, dev.normal_over,
          kDirectionTol, dev.flat, dev.flat_depth);
      EXPECT_GE(dev.compared + dev.flat, 200);
      EXPECT_LT(dev.flat_depth, 5e-3);  // face clipping against MPR's portal
      // Same algorithm, same settings: most poses agree to 1e-13. Pairs with a cylinder differ on
      // up to ~17% of poses by up to 5e-4, and a wedge mesh pair on 1% by up to 4e-3: MPR jumps
      // to another portal after a rounding or tie-breaking difference in the supports (alsim's
      // are its own; MuJoCo hill-climbs mesh vertices). The cause is not pinned down further.
      EXPECT_LE(dev.depth_over, dev.compared / 5);
      EXPECT_LT(dev.depth, 5e-3);
      if (!curved) {
        EXPECT_LE(dev.normal_over, dev.compared / 20);
      }
    }
  }
}

}  // namespace
}  // namespace alsim
