// CollideConvex: analytic answers, antisymmetry, flat multi-point contact, and MuJoCo 2.2.2's own
// pair functions (mjCOLLISIONFUNC) as an oracle at random poses near contact.
#include "engine/collision/convex_pairs.h"
#include "engine/collision/mesh_hull.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/collision/gjk_distance.h"
#include "engine/collision/narrowphase.h"
#include "engine/math/spatial.h"
#include "tests/support/collision_shapes.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::Deepest;
using testing::OracleScene;
using testing::RandomOffset;
using testing::RandomRotation;
using testing::RandomUnit;
using testing::Shape;
using testing::Uniform;
using testing::UniformVec3;

// ---------------------------------------------------------------- shapes

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
      const Vec3 ca = UniformVec3(rng, -1, 1);
      const Vec3 cb = ca + n * (ra + rb + expected_dist);
      const Mat3 rot_a = RandomRotation(rng);
      const Mat3 rot_b = RandomRotation(rng);
      Contact c[kMaxContactsPerPair];
      const int count =
          CollideConvex(Ball(type, ra, ca, rot_a), Ball(type, rb, cb, rot_b), 0.01, c);
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
      const Vec3 box_pos = UniformVec3(rng, -1, 1);
      // The center stays r inside the face's edges and above the face, so that leaving through
      // the face is the shortest way out (deep near an edge, the edge would be).
      const double r = Uniform(rng, 0.05, 0.15);
      const double dist = Uniform(rng, -0.9 * r, 0.009);
      const double local_x = Uniform(rng, -0.5 + r, 0.5 - r);
      const double local_y = Uniform(rng, -0.3 + r, 0.3 - r);
      const Vec3 local(local_x, local_y, 0.2 + r + dist);
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

// Near an edge or corner of the box MPR on the inflated shapes measured its depth along the
// portal it reached from the centers, off by up to 5e-4 m and 0.34 in the normal (as MuJoCo's
// collider still is). GJK between the sphere's center and the box is exact.
TEST(ConvexPairsTest, SphereNearABoxEdgeOrCornerIsExact) {
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
  EXPECT_LT(worst_dist, 1e-12);
  EXPECT_LT(worst_normal, 1e-12);
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

// GjkDistance's stop_beyond, which CollideConvex sets from the margin: a bound below the distance
// stops the search early with a lower bound above the bound; a bound above the distance changes
// nothing.
TEST(GjkDistanceTest, StopsOnceTheDistanceIsKnownToExceedTheBound) {
  std::mt19937 rng(21);
  const auto support = [](const void* set, const Vec3& dir) {
    return SupportPoint(*static_cast<const GeomShape*>(set), dir);
  };
  int stopped = 0, trials = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const GeomShape a =
        Shape(GeomType::kCylinder, Vec3(0.1, 0.05, 0), Vec3::Zero(), RandomRotation(rng));
    const Vec3 offset = RandomOffset(rng, 0.2, 0.6);
    const GeomShape b =
        Shape(GeomType::kEllipsoid, Vec3(0.15, 0.1, 0.07), offset, RandomRotation(rng));
    const SupportMapping mapping_a{support, &a, a.pos}, mapping_b{support, &b, b.pos};
    const GjkDistanceResult full = GjkDistance(mapping_a, mapping_b);
    if (!full.separated) continue;
    ++trials;
    EXPECT_FALSE(full.beyond);

    const GjkDistanceResult below =
        GjkDistance(mapping_a, mapping_b, kGjkRelativeTolerance, 0.5 * full.distance);
    if (below.beyond) {
      ++stopped;
      EXPECT_GT(below.distance, 0.5 * full.distance);
      EXPECT_LE(below.distance, full.distance * (1 + 1e-12));
      EXPECT_LE(below.iterations, full.iterations);
    } else {  // converged in the same iteration that passed the bound
      EXPECT_EQ(below.distance, full.distance);
    }

    const GjkDistanceResult above =
        GjkDistance(mapping_a, mapping_b, kGjkRelativeTolerance, 2 * full.distance);
    EXPECT_FALSE(above.beyond);
    EXPECT_EQ(above.distance, full.distance);
    EXPECT_EQ(above.point_a, full.point_a);
    EXPECT_EQ(above.point_b, full.point_b);
  }
  EXPECT_GT(trials, 150);
  EXPECT_GT(stopped, trials / 2);
}

// The overlap of a and b along the unit n (how far b must move along n to clear a):
// h_a(n) + h_b(-n); the least over all n is minus the distance or the penetration depth.
double OverlapAlong(const GeomShape& a, const GeomShape& b, const Vec3& n) {
  return n.dot(SupportPoint(a, n)) - n.dot(SupportPoint(b, -n));
}

// A cube as a mesh and as a box give the same contacts. Both are polytopes, so an overlapping
// pair keeps MPR's answer (no refinement, convex_pairs.cc), and MPR's portal is path-dependent:
// in a deep overlap the two support mappings of the one cube (a box's sign pattern, a mesh's
// farthest vertex) can lead it to different directions, along which its depth need not be the
// overlap. The answers may differ only there (a known gap of MPR on polytope pairs), rarely.
TEST(ConvexPairsTest, CubeMeshEqualsBox) {
  std::mt19937 rng(3);
  const MeshData cube = CubeMesh(0.2);
  int compared = 0;
  int diverged = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const Mat3 rot = RandomRotation(rng);
    const GeomShape other =
        Shape(GeomType::kBox, Vec3(0.3, 0.15, 0.1), Vec3::Zero(), RandomRotation(rng));
    const Vec3 dir = RandomUnit(rng);
    const double reach = (SupportPoint(other, dir) - other.pos).dot(dir) + 0.2 * std::sqrt(3.0);
    const Vec3 pos = dir * (reach * Uniform(rng, 0.6, 1.0));
    const GeomShape box = Shape(GeomType::kBox, Vec3(0.2, 0.2, 0.2), pos, rot);
    Contact as_box[kMaxContactsPerPair];
    Contact as_mesh[kMaxContactsPerPair];
    const int nb = CollideConvex(other, box, 0, as_box);
    const int nm = CollideConvex(other, cube.At(pos, rot), 0, as_mesh);
    ASSERT_EQ(nb > 0, nm > 0) << trial;
    if (nb == 0) continue;
    ++compared;
    const Contact& b = as_box[Deepest(as_box, nb)];
    const Contact& m = as_mesh[Deepest(as_mesh, nm)];
    if (std::abs(b.dist - m.dist) <= 1e-9 && (b.normal - m.normal).norm() < 1e-9) continue;
    const auto off_its_normal = [&](const Contact& c) {
      return std::abs(c.dist + OverlapAlong(other, box, c.normal)) > 1e-9;
    };
    EXPECT_TRUE(off_its_normal(b) || off_its_normal(m))
        << trial << ": box " << b.dist << " mesh " << m.dist;
    ++diverged;
  }
  std::cout << compared << " poses in contact, MPR diverged in " << diverged << "\n";
  EXPECT_GT(compared, 50);
  EXPECT_LE(diverged, 2);
}

// ---------------------------------------------------------------- exact answers

// Pairs with a sphere or capsule are solved by GJK between the cores (center, axis segment) and
// the other shape, refined on curved shapes: the contact is the true one to rounding.
constexpr double kExactTol = 1e-9;

MeshData Octahedron();  // the meshes and names of the MuJoCo oracle section below
const char* TypeName(GeomType t);

// Independent references, all in the other shape's geom frame: the closest point of the shape to
// an outside point p.
Vec3 ClosestOnCylinder(double r, double h, const Vec3& p) {
  const double radial = std::hypot(p.x(), p.y());
  const double scale = radial > r ? r / radial : 1.0;
  return Vec3(scale * p.x(), scale * p.y(), std::clamp(p.z(), -h, h));
}

// The ellipsoid sum (x_i / a_i)^2 = 1: x_i = a_i^2 p_i / (a_i^2 + t) where t >= 0 is the root of
// F(t) = sum (a_i p_i / (a_i^2 + t))^2 - 1. F decreases and is convex for t > -min a_i^2 and
// F(0) > 0 outside, so Newton's method from t = 0 climbs monotonically to the root.
Vec3 ClosestOnEllipsoid(const Vec3& a, const Vec3& p) {
  double t = 0;
  for (int it = 0; it < 500; ++it) {
    double f = -1;
    double df = 0;
    for (int i = 0; i < 3; ++i) {
      const double q = a[i] * p[i] / (a[i] * a[i] + t);
      f += q * q;
      df -= 2 * q * q / (a[i] * a[i] + t);
    }
    const double step = f / df;
    t -= step;
    if (std::abs(step) <= 1e-16 * (1 + t)) break;
  }
  return Vec3(a[0] * a[0] * p[0] / (a[0] * a[0] + t), a[1] * a[1] * p[1] / (a[1] * a[1] + t),
              a[2] * a[2] * p[2] / (a[2] * a[2] + t));
}

// Closest point of triangle (a, b, c) to p: the projection onto its plane when it falls inside,
// else the closest point of the nearest edge.
Vec3 ClosestOnTriangle(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& p) {
  const Vec3 n = (b - a).cross(c - a).normalized();
  Vec3 projected = p - n * n.dot(p - a);
  const bool inside = (b - a).cross(projected - a).dot(n) >= 0 &&
                      (c - b).cross(projected - b).dot(n) >= 0 &&
                      (a - c).cross(projected - c).dot(n) >= 0;
  if (inside) return projected;
  Vec3 best = a;
  for (const auto& [p0, p1] : {std::pair(a, b), std::pair(b, c), std::pair(c, a)}) {
    const double t = std::clamp((p - p0).dot(p1 - p0) / (p1 - p0).squaredNorm(), 0.0, 1.0);
    const Vec3 q = p0 + t * (p1 - p0);
    if ((q - p).norm() < (best - p).norm()) best = q;
  }
  return best;
}

// The point of `shape` closest to the world point p (outside it), by the references above.
Vec3 ClosestOnShape(const GeomShape& shape, const Vec3& p) {
  const Vec3 local = shape.rot.transpose() * (p - shape.pos);
  Vec3 q = local;
  switch (shape.type) {
    case GeomType::kBox:
      q = ClosestOnBox(shape.size, local);
      break;
    case GeomType::kCylinder:
      q = ClosestOnCylinder(shape.size[0], shape.size[1], local);
      break;
    case GeomType::kEllipsoid:
      q = ClosestOnEllipsoid(shape.size, local);
      break;
    case GeomType::kMesh:  // the nearest hull triangle
      q = shape.vertices[0];
      for (int f = 0; f < shape.hull_face_count; ++f) {
        const Eigen::Vector3i& t = shape.hull_faces[f];
        const Vec3 candidate = ClosestOnTriangle(shape.vertices[t[0]], shape.vertices[t[1]],
                                                 shape.vertices[t[2]], local);
        if ((candidate - local).norm() < (q - local).norm()) q = candidate;
      }
      break;
    default:
      ADD_FAILURE() << "no reference for this type";
  }
  return shape.rot * q + shape.pos;
}

bool InsideShape(const GeomShape& shape, const Vec3& p) {
  const Vec3 local = shape.rot.transpose() * (p - shape.pos);
  switch (shape.type) {
    case GeomType::kEllipsoid:
      return local.cwiseQuotient(shape.size).squaredNorm() <= 1;
    case GeomType::kMesh:
      return (ClosestOnShape(shape, p) - p).norm() < 1e-12 ||
             std::all_of(shape.hull_faces, shape.hull_faces + shape.hull_face_count,
                         [&](const Eigen::Vector3i& t) {
                           const Vec3* v = shape.vertices;
                           const Vec3 n = (v[t[1]] - v[t[0]]).cross(v[t[2]] - v[t[0]]);
                           return n.dot(local - v[t[0]]) <= 0;  // outward triangles
                         });
    default:
      return (ClosestOnShape(shape, p) - p).norm() == 0;
  }
}

// True when the sphere's center or some point of the capsule's axis (sampled) is inside `shape`:
// the references above need an outside core.
bool CoreEntersShape(const GeomShape& core, const GeomShape& shape) {
  const double half = core.type == GeomType::kCapsule ? core.size[1] : 0;
  for (int i = 0; i <= 200; ++i) {
    if (InsideShape(shape, core.pos + core.rot.col(2) * half * (i / 100.0 - 1))) return true;
  }
  return false;
}

// A capsule's axis point closest to `shape`: the distance along the axis is convex, so bisection
// on the sign of its slope (axis . (point - closest point)) finds the minimiser to rounding.
Vec3 CapsuleAxisPointClosestTo(const GeomShape& capsule, const GeomShape& shape) {
  const Vec3 axis = capsule.rot.col(2);
  const auto point = [&](double s) { return Vec3(capsule.pos + s * axis); };
  const auto slope = [&](double s) { return axis.dot(point(s) - ClosestOnShape(shape, point(s))); };
  double lo = -capsule.size[1];
  double hi = capsule.size[1];
  if (slope(lo) >= 0) return point(lo);
  if (slope(hi) <= 0) return point(hi);
  for (int it = 0; it < 100; ++it) {
    const double mid = (lo + hi) / 2;
    (slope(mid) < 0 ? lo : hi) = mid;
  }
  return point((lo + hi) / 2);
}

// The exact contact of a sphere or capsule `core_shape` (as geom a) with `shape` (geom b): the
// core's closest point, the shape's closest point to it, and the normal between them.
struct Reference {
  double dist;
  Vec3 normal;
};
Reference ExactReference(const GeomShape& core_shape, const GeomShape& shape) {
  const Vec3 p = core_shape.type == GeomType::kSphere
                     ? core_shape.pos
                     : CapsuleAxisPointClosestTo(core_shape, shape);
  const Vec3 q = ClosestOnShape(shape, p);
  return {(q - p).norm() - core_shape.size[0], (q - p).normalized()};
}

// Expects CollideConvex to give one contact with this dist and normal (from a toward b), in
// both orders of the geoms.
void ExpectExactContact(const GeomShape& a, const GeomShape& b, double dist, const Vec3& normal,
                        double tol, const std::string& what) {
  for (const bool swap : {false, true}) {
    Contact c[kMaxContactsPerPair];
    const int count = swap ? CollideConvex(b, a, 0.05, c) : CollideConvex(a, b, 0.05, c);
    ASSERT_EQ(count, 1) << what;
    EXPECT_NEAR(c[0].dist, dist, tol) << what;
    EXPECT_LT((c[0].normal - (swap ? Vec3(-normal) : normal)).norm(), tol)
        << what << " normal " << c[0].normal.transpose() << " expected " << normal.transpose();
  }
}

GeomShape RandomlyPlaced(std::mt19937& rng, GeomType type, const Vec3& size) {
  const Vec3 pos = UniformVec3(rng, -1, 1);
  const Mat3 rot = RandomRotation(rng);
  return Shape(type, size, pos, rot);
}

TEST(ConvexExactTest, SphereBesideAboveAndAtTheRimOfACylinder) {
  std::mt19937 rng(11);
  const double r = 0.2;
  const double h = 0.3;
  const double rs = 0.1;
  for (int trial = 0; trial < 150; ++trial) {
    const GeomShape cylinder = RandomlyPlaced(rng, GeomType::kCylinder, Vec3(r, h, 0));
    const double dist = Uniform(rng, -0.5 * rs, 0.04);  // shallow overlap or within the margin
    const double theta = Uniform(rng, -M_PI, M_PI);
    const Vec3 radial(std::cos(theta), std::sin(theta), 0);
    Vec3 surface;  // local closest point and outward normal
    Vec3 outward;
    switch (trial % 3) {
      case 0:  // beside the curved side
        surface = r * radial + Vec3(0, 0, Uniform(rng, -0.9 * h, 0.9 * h));
        outward = radial;
        break;
      case 1:  // above an end disk
        surface = Uniform(rng, 0, 0.9 * r) * radial + Vec3(0, 0, h);
        outward = Vec3::UnitZ();
        break;
      default: {  // off the rim edge, between the side and the disk
        const double phi = Uniform(rng, 0.05, M_PI / 2 - 0.05);
        surface = r * radial + Vec3(0, 0, h);
        outward = std::cos(phi) * radial + std::sin(phi) * Vec3::UnitZ();
      }
    }
    const Vec3 center = cylinder.pos + cylinder.rot * (surface + outward * (rs + dist));
    const GeomShape sphere = Shape(GeomType::kSphere, Vec3(rs, 0, 0), center);
    ExpectExactContact(cylinder, sphere, dist, cylinder.rot * outward, kExactTol,
                       "case " + std::to_string(trial % 3) + " trial " + std::to_string(trial));
  }
}

TEST(ConvexExactTest, CapsuleParallelToAndCrossingACylinder) {
  std::mt19937 rng(12);
  const double r = 0.2;
  const double h = 0.3;
  const double rc = 0.05;
  for (int trial = 0; trial < 100; ++trial) {
    const GeomShape cylinder = RandomlyPlaced(rng, GeomType::kCylinder, Vec3(r, h, 0));
    const double dist = Uniform(rng, -0.5 * rc, 0.04);
    const double theta = Uniform(rng, -M_PI, M_PI);
    const Vec3 radial(std::cos(theta), std::sin(theta), 0);
    const bool parallel = trial % 2 == 0;
    // Parallel: the axes overlap along z. Crossed: the capsule's axis is tangent to a circle
    // around the cylinder's axis, so its middle is the closest point.
    const Vec3 local_center = (r + rc + dist) * radial + Vec3(0, 0, Uniform(rng, -0.2, 0.2));
    const Vec3 local_axis = parallel ? Vec3::UnitZ() : Vec3(-radial.y(), radial.x(), 0);
    const Mat3 local_rot = Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), local_axis).matrix();
    const GeomShape capsule =
        Shape(GeomType::kCapsule, Vec3(rc, 0.2, 0), cylinder.pos + cylinder.rot * local_center,
              cylinder.rot * local_rot);
    ExpectExactContact(cylinder, capsule, dist, cylinder.rot * radial, kExactTol,
                       (parallel ? "parallel trial " : "crossed trial ") + std::to_string(trial));
  }
}

TEST(ConvexExactTest, SphereAndCapsuleAgainstAnEllipsoidMatchNewtonsClosestPoint) {
  std::mt19937 rng(13);
  int compared = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Vec3 axes = UniformVec3(rng, 0.1, 0.3);
    const GeomShape ellipsoid = RandomlyPlaced(rng, GeomType::kEllipsoid, axes);
    const bool sphere = trial % 2 == 0;
    const double radius = 0.08;
    const Vec3 core_offset = RandomOffset(rng, 0.2, 0.5);
    const Mat3 core_rot = RandomRotation(rng);
    const GeomShape core = Shape(sphere ? GeomType::kSphere : GeomType::kCapsule,
                                 Vec3(radius, 0.15, 0), ellipsoid.pos + core_offset, core_rot);
    if (CoreEntersShape(core, ellipsoid)) continue;
    const Reference ref = ExactReference(core, ellipsoid);
    if (ref.dist < -0.5 * radius || ref.dist > 0.04) continue;  // shallow or within the margin
    ++compared;
    // Independent check of the reference: the normal is the ellipsoid's gradient direction at its
    // closest point.
    const Vec3 q =
        ellipsoid.rot.transpose() * (ClosestOnShape(ellipsoid, core.pos) - ellipsoid.pos);
    if (sphere) {
      const Vec3 gradient = ellipsoid.rot * q.cwiseQuotient(ellipsoid.size.cwiseAbs2());
      EXPECT_LT((-gradient.normalized() - ref.normal).norm(), 1e-12);
    }
    ExpectExactContact(
        core, ellipsoid, ref.dist, ref.normal, kExactTol,
        std::string(sphere ? "sphere" : "capsule") + " trial " + std::to_string(trial));
  }
  EXPECT_GT(compared, 50);
}

TEST(ConvexExactTest, ParallelCylindersSideBySide) {
  std::mt19937 rng(14);
  for (int trial = 0; trial < 100; ++trial) {
    const GeomShape a = RandomlyPlaced(rng, GeomType::kCylinder, Vec3(0.2, 0.3, 0));
    const double rb = Uniform(rng, 0.05, 0.25);
    // Separated within the margin or overlapping by up to 5 mm (MPR, then the refined normal).
    const double dist = Uniform(rng, -0.005, 0.04);
    const Vec3 radial = a.rot * Vec3(std::cos(trial), std::sin(trial), 0);
    const Vec3 pos_b = a.pos + radial * (0.2 + rb + dist) + a.rot.col(2) * Uniform(rng, -0.3, 0.3);
    const Mat3 rot_b = a.rot * QuatToMatrix(QuatFromAxisAngle(Vec3::UnitZ(), Uniform(rng, 0, 6)));
    const GeomShape b = Shape(GeomType::kCylinder, Vec3(rb, 0.2, 0), pos_b, rot_b);
    ExpectExactContact(a, b, dist, radial, kExactTol, "trial " + std::to_string(trial));
  }
}

// Random separated poses of a sphere or capsule against a box, mesh, cylinder or ellipsoid: the
// distance matches the independent closest-point references (for a capsule, minimised over its
// axis by bisection), and the normal joins the closest points.
TEST(ConvexExactTest, SeparatedSphereAndCapsuleMatchBruteForceDistances) {
  std::mt19937 rng(15);
  const MeshData octahedron = Octahedron();
  int compared = 0;
  double worst_dist = 0;
  double worst_normal = 0;
  for (const GeomType core_type : {GeomType::kSphere, GeomType::kCapsule}) {
    for (const GeomType other :
         {GeomType::kBox, GeomType::kMesh, GeomType::kCylinder, GeomType::kEllipsoid}) {
      for (int trial = 0; trial < 150; ++trial) {
        const Vec3 size = UniformVec3(rng, 0.1, 0.3);
        const GeomShape shape = other == GeomType::kMesh
                                    ? octahedron.At(Vec3::Zero(), RandomRotation(rng))
                                    : Shape(other, size, Vec3::Zero(), RandomRotation(rng));
        const Vec3 core_pos = RandomOffset(rng, 0.25, 0.7);
        const Mat3 core_rot = RandomRotation(rng);
        const GeomShape core = Shape(core_type, Vec3(0.05, 0.15, 0), core_pos, core_rot);
        if (CoreEntersShape(core, shape)) continue;
        const Reference ref = ExactReference(core, shape);
        if (ref.dist < 1e-4) continue;  // separated poses only
        Contact c[kMaxContactsPerPair];
        ASSERT_EQ(CollideConvex(core, shape, 1.0, c), 1);
        worst_dist = std::max(worst_dist, std::abs(c[0].dist - ref.dist));
        worst_normal = std::max(worst_normal, (c[0].normal - ref.normal).norm());
        EXPECT_NEAR(c[0].dist, ref.dist, 1e-6) << TypeName(core_type) << "-" << TypeName(other);
        ++compared;
      }
    }
  }
  std::printf(
      "separated sphere/capsule vs box/mesh/cylinder/ellipsoid: %d poses, worst |ddist| "
      "%.1e, worst |dnormal| %.1e\n",
      compared, worst_dist, worst_normal);
  EXPECT_GT(compared, 600);
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
        const Vec3 size_a = UniformVec3(rng, 0.1, 0.3);
        const Vec3 size_b = UniformVec3(rng, 0.1, 0.3);
        GeomShape a = ta == GeomType::kMesh ? cube.At(Vec3::Zero(), RandomRotation(rng))
                                            : Shape(ta, size_a, Vec3::Zero(), RandomRotation(rng));
        GeomShape b = tb == GeomType::kMesh ? cube.At(Vec3::Zero(), RandomRotation(rng))
                                            : Shape(tb, size_b, Vec3::Zero(), RandomRotation(rng));
        // Flat poses half of the time: both shapes axis-aligned, b on top of a.
        if (trial % 2 == 0) a.rot = b.rot = Mat3::Identity();
        const Vec3 dir = trial % 2 == 0 ? Vec3::UnitZ() : RandomUnit(rng);
        const double reach =
            (SupportPoint(a, dir) - a.pos).dot(dir) + (b.pos - SupportPoint(b, -dir)).dot(dir);
        const double gap = Uniform(rng, -0.05, 0.01);
        const double shift_x = Uniform(rng, -0.05, 0.05);
        const double shift_y = Uniform(rng, -0.05, 0.05);
        b.pos = dir * (reach + gap) + Vec3(shift_x, shift_y, 0);
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

// Face on face with a mesh, the points keep kMeshPointSpacing of the smaller bounding radius
// apart: a cube mesh square on another keeps its four corners, but one shifted so that only a
// 1 cm square of the faces overlaps, whose four clipped corners are near-duplicate rows, gives
// one point with the overlap's depth and the face normal.
TEST(ConvexPairsTest, MeshFaceOverlapsKeepTheirPointsApart) {
  const MeshData cube = CubeMesh(0.1);
  const double depth = 1e-3;
  const double rbound = 0.1 * std::sqrt(3.0);
  GeomShape lower = cube.At(Vec3::Zero(), Mat3::Identity());
  lower.rbound = rbound;
  Contact c[kMaxContactsPerPair];
  GeomShape upper = cube.At(Vec3(0.01, -0.02, 0.2 - depth), Mat3::Identity());
  upper.rbound = rbound;
  const int square = CollideConvex(lower, upper, 0.0, c);
  ASSERT_EQ(square, 4);
  for (int i = 0; i < square; ++i) {
    for (int j = 0; j < i; ++j) {
      EXPECT_GT((c[i].pos - c[j].pos).norm(), kMeshPointSpacing * rbound);
    }
  }
  upper = cube.At(Vec3(0.19, 0.19, 0.2 - depth), Mat3::Identity());
  upper.rbound = rbound;
  ASSERT_EQ(CollideConvex(lower, upper, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -depth, 1e-9);
  EXPECT_LT((c[0].normal - Vec3::UnitZ()).norm(), 1e-9);
  EXPECT_GT(c[0].pos.x(), 0.09);
  EXPECT_GT(c[0].pos.y(), 0.09);
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
  auto& mutable_scene = const_cast<OracleScene&>(scene);
  GeomShape s = ShapeOfGeom(scene.model(), mutable_scene.data(), g);  // type, size, mesh
  const mjData* d = mutable_scene.mj_data();                          // the pose as MuJoCo has it
  s.pos = Vec3(d->geom_xpos[3 * g], d->geom_xpos[3 * g + 1], d->geom_xpos[3 * g + 2]);
  for (int i = 0; i < 9; ++i) s.rot(i / 3, i % 3) = d->geom_xmat[9 * g + i];
  return s;
}

struct Deviation {
  double depth = 0;   // worst |dist - MuJoCo's dist| of the deepest point
  double normal = 0;  // worst |normal - MuJoCo's normal|
  // Poses where the shapes overlap more along alsim's normal than along MuJoCo's: on the exact
  // path (shapes or cores apart, GJK), and on the MPR path (cores or shapes overlapping).
  int exact = 0;
  int worse_normal_exact = 0;
  int worse_normal_mpr = 0;
  int inconsistent = 0;  // dist is not minus the overlap along the normal
  int only_mujoco = 0;   // MuJoCo's MPR finds a contact within the margin, alsim's GJK none
  int depth_over = 0;    // poses whose dist differs by more than kDepthTol
  int normal_over = 0;   // poses whose normal differs by more than kDirectionTol
  int compared = 0;
  int decisions_differ = 0;
  // Poses where CollideConvex clipped faces (several points): its depth comes from the face
  // planes, MuJoCo's from MPR, so they are kept apart.
  int flat = 0;
  double flat_depth = 0;
};

// How far the two shapes overlap along the unit direction n (from a toward b):
// The radius of the ball around a sphere's or capsule's core; 0 for other shapes.
double CoreRadiusOf(const GeomShape& s) {
  return s.type == GeomType::kSphere || s.type == GeomType::kCapsule ? s.size[0] : 0.0;
}

// Poses b around a near contact, runs both engines, returns the worst differences of the deepest
// point's dist and normal.
Deviation CompareWithMujoco(const OraclePair& pair, double margin, int poses, unsigned seed) {
  std::string xml = "<mujoco><compiler meshdir=\"" + testing::TempSceneDir() + "\"/><asset>" +
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
      const double w = normal(rng), x = normal(rng), y = normal(rng), z = normal(rng);
      Quat q = Quat(w, x, y, z).normalized();
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
    if (n == 0 && n_mj > 0) {
      // alsim's GJK has the cores (or shapes) apart by at least the margin: MPR's depth along a
      // direction other than the closest one overstates the overlap.
      ++dev.only_mujoco;
      continue;
    }
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
    const double radii = CoreRadiusOf(a1) + CoreRadiusOf(b1);
    const bool exact = ours.dist > 0 || (radii > 0 && ours.dist > -radii);
    const bool worse = OverlapAlong(a1, b1, ours.normal) > OverlapAlong(a1, b1, ref_normal) + 1e-9;
    dev.exact += exact;
    (exact ? dev.worse_normal_exact : dev.worse_normal_mpr) += worse;
    const bool curved = pair.a != GeomType::kBox && pair.a != GeomType::kMesh;  // b's type >= a's
    // GJK converges linearly on a curved shape against a polytope face (no refinement family
    // applies there): within kGjkMaxIterations the gap between its bounds stays near 1e-8 m.
    dev.inconsistent +=
        (exact || curved) && std::abs(ours.dist + OverlapAlong(a1, b1, ours.normal)) > 3e-8;
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
    for (const double margin : {0.0, 0.02}) {
      const Deviation dev = CompareWithMujoco(pair, margin, 700, seed++);
      std::printf(
          "%-9s %-9s %-10s margin %.2f: %3d single-point poses, %d decisions differ; dist: "
          "worst %.1e, %2d over %.0e; normal: worst %.1e, %3d over %.0e; %3d flat poses, dist "
          "worst %.1e; %d only for MuJoCo; %d exact; normal worse than MuJoCo's: %d exact, %d "
          "MPR\n",
          TypeName(pair.a), TypeName(pair.b), pair.mesh.c_str(), margin, dev.compared,
          dev.decisions_differ, dev.depth, dev.depth_over, kDepthTol, dev.normal, dev.normal_over,
          kDirectionTol, dev.flat, dev.flat_depth, dev.only_mujoco, dev.exact,
          dev.worse_normal_exact, dev.worse_normal_mpr);
      EXPECT_GE(dev.compared + dev.flat, 200);
      EXPECT_LT(dev.flat_depth, 5e-3);  // face clipping against MPR's portal
      // alsim's contacts are exact where the shapes or the cores of spheres and capsules are
      // apart (GJK), and elsewhere use the direction of least overlap found from MPR's. MuJoCo
      // 2.2.2 reports MPR's depth along the direction its portal converged to (on the shapes
      // inflated by margin/2: their rounded edges move it further), which is neither the least
      // overlap nor even the overlap along that direction (it can fall short of it by 5e-5),
      // and swaps in the surface normal at MPR's point (mjc_fixNormal). So the distances differ
      // by up to a few cm (printed above; the exact tests above pin down which is right), and
      // what must hold is that MuJoCo's normal is never better: the shapes never overlap more
      // along alsim's normal than along MuJoCo's, and alsim's dist is measured along its normal
      // (pairs with a curved shape, and exact poses; polytope pairs in MPR keep its depth).
      EXPECT_EQ(dev.worse_normal_exact, 0);
      EXPECT_EQ(dev.inconsistent, 0);
      // Known gap: overlapping pairs that touch through a mesh edge (or a cylinder rim against
      // an edge) have no smooth family for the refinement, and keep MPR's direction, which
      // MuJoCo's surface normal beats on up to ~8% of those poses.
      EXPECT_LE(dev.worse_normal_mpr, (dev.compared - dev.exact) / 12);
    }
  }
}

}  // namespace
}  // namespace alsim
