// Closed-form pair functions: analytic configurations (distance, normal, points), swap symmetry,
// manifolds of resting boxes and capsules, and the deepest point against libmujoco 2.2.2's own
// pair functions (mjCOLLISIONFUNC) at random relative poses.
#include "engine/collision/primitive_pairs.h"

#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "tests/support/allocation_counter.h"
#include "tests/support/collision_shapes.h"

namespace alsim {
namespace {

constexpr double kTol = 1e-12;
constexpr double kPi = 3.14159265358979323846;

using PairFunction = int (*)(const GeomShape&, const GeomShape&, double, Contact*);
using testing::Deepest;
using testing::IsFaceNormal;
using testing::RandomRotation;
using testing::Shape;
using testing::Uniform;
using testing::UniformVec3;

GeomShape Plane(const Vec3& pos = Vec3::Zero(), const Mat3& rot = Mat3::Identity()) {
  return Shape(GeomType::kPlane, Vec3(1, 1, 0.1), pos, rot);
}
GeomShape Sphere(double r, const Vec3& pos) { return Shape(GeomType::kSphere, Vec3(r, 0, 0), pos); }
GeomShape Capsule(double r, double half, const Vec3& pos, const Mat3& rot = Mat3::Identity()) {
  return Shape(GeomType::kCapsule, Vec3(r, half, 0), pos, rot);
}
GeomShape Box(const Vec3& half, const Vec3& pos, const Mat3& rot = Mat3::Identity()) {
  return Shape(GeomType::kBox, half, pos, rot);
}

Mat3 Rotation(const Vec3& axis, double angle) {
  return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

void ExpectVecNear(const Vec3& a, const Vec3& b, double tol, const std::string& what) {
  EXPECT_LE((a - b).norm(), tol) << what << ": " << a.transpose() << " vs " << b.transpose();
}

// Every contact is well formed: unit normal, within the margin.
void ExpectWellFormed(const Contact* c, int n, double margin) {
  ASSERT_GE(n, 0);
  ASSERT_LE(n, kMaxContactsPerPair);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].normal.norm(), 1.0, 1e-12);
    EXPECT_LT(c[i].dist, margin);
  }
}

// Whether some contact has position p (tolerance tol).
bool HasPoint(const Contact* c, int n, const Vec3& p, double tol = 1e-9) {
  for (int i = 0; i < n; ++i) {
    if ((c[i].pos - p).norm() <= tol) return true;
  }
  return false;
}

// ---------------------------------------------------------------- plane pairs

TEST(PlanePairs, SphereAboveTiltedPlane) {
  const Mat3 rot = Rotation(Vec3(1, 2, 0), 0.4);
  const Vec3 n = rot.col(2);
  const GeomShape plane = Plane(Vec3(0.1, -0.2, 0.3), rot);
  const Vec3 center = plane.pos + n * 0.48 + rot.col(0) * 0.7;  // 0.02 above the surface
  Contact c[kMaxContactsPerPair];
  ASSERT_EQ(CollidePlaneSphere(plane, Sphere(0.46, center), 0.05, c), 1);
  EXPECT_NEAR(c[0].dist, 0.02, kTol);
  ExpectVecNear(c[0].normal, n, kTol, "normal");
  ExpectVecNear(c[0].pos, center - n * (0.46 + 0.01), kTol, "pos: midpoint of the gap");
  EXPECT_EQ(CollidePlaneSphere(plane, Sphere(0.46, center), 0.02, c), 0) << "dist == margin";
  EXPECT_EQ(CollidePlaneSphere(plane, Sphere(0.46, center), 0.0, c), 0);
  // Penetrating by 0.1.
  ASSERT_EQ(CollidePlaneSphere(plane, Sphere(0.46, center - n * 0.12), 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.1, kTol);
}

TEST(PlanePairs, CapsuleLyingFlatGivesTwoPoints) {
  const Mat3 lying = Rotation(Vec3::UnitY(), kPi / 2);  // axis along world x
  const GeomShape capsule = Capsule(0.1, 0.5, Vec3(0, 0, 0.099), lying);
  Contact c[kMaxContactsPerPair];
  const int n = CollidePlaneCapsule(Plane(), capsule, 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_EQ(n, 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(c[i].dist, -0.001, kTol);
    ExpectVecNear(c[i].normal, Vec3::UnitZ(), kTol, "normal");
  }
  EXPECT_TRUE(HasPoint(c, n, Vec3(0.5, 0, -0.0005)));
  EXPECT_TRUE(HasPoint(c, n, Vec3(-0.5, 0, -0.0005)));
  // Tilted by 0.3 rad: only the lower cap touches.
  const GeomShape tilted = Capsule(0.1, 0.5, Vec3(0, 0, 0.5 * std::sin(0.3) + 0.09),
                                   Rotation(Vec3::UnitY(), kPi / 2 - 0.3));
  ASSERT_EQ(CollidePlaneCapsule(Plane(), tilted, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.01, kTol);
  // Standing 0.05 above the plane: nothing at margin 0.01, one point at margin 0.1.
  const GeomShape standing = Capsule(0.1, 0.5, Vec3(0, 0, 0.65));
  EXPECT_EQ(CollidePlaneCapsule(Plane(), standing, 0.01, c), 0);
  ASSERT_EQ(CollidePlaneCapsule(Plane(), standing, 0.1, c), 1);
  EXPECT_NEAR(c[0].dist, 0.05, kTol);
  ExpectVecNear(c[0].pos, Vec3(0, 0, 0.025), kTol, "pos");
}

TEST(PlanePairs, EllipsoidLowestPoint) {
  // Semi-axes (0.3, 0.2, 0.1); rotated by 90 degrees about x the local y axis points down.
  const GeomShape ell = Shape(GeomType::kEllipsoid, Vec3(0.3, 0.2, 0.1), Vec3(1, 2, 0.19),
                              Rotation(Vec3::UnitX(), kPi / 2));
  Contact c[kMaxContactsPerPair];
  ASSERT_EQ(CollidePlaneEllipsoid(Plane(), ell, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.01, kTol);
  ExpectVecNear(c[0].pos, Vec3(1, 2, -0.005), kTol, "pos");
  // Tilted about y: the lowest point of x^2/a^2 + z^2/c^2 = 1 along direction (sin t, cos t) in
  // (x, z) has height sqrt(a^2 sin^2 t + c^2 cos^2 t) below the center.
  const double t = 0.7;
  const GeomShape tilted =
      Shape(GeomType::kEllipsoid, Vec3(0.3, 0.2, 0.1), Vec3(0, 0, 0.5), Rotation(Vec3::UnitY(), t));
  ASSERT_EQ(CollidePlaneEllipsoid(Plane(), tilted, 1.0, c), 1);
  const double reach =
      std::sqrt(0.09 * std::sin(t) * std::sin(t) + 0.01 * std::cos(t) * std::cos(t));
  EXPECT_NEAR(c[0].dist, 0.5 - reach, kTol);
  EXPECT_NEAR(c[0].pos.y(), 0.0, kTol);
  EXPECT_EQ(CollidePlaneEllipsoid(Plane(), tilted, 0.5 - reach - 1e-6, c), 0);
}

TEST(PlanePairs, CylinderStandingLyingAndOnItsRim) {
  Contact c[kMaxContactsPerPair];
  // Standing on its end disk, 0.002 deep: 4 rim points, all at the same depth.
  const GeomShape standing = Shape(GeomType::kCylinder, Vec3(0.2, 0.3, 0), Vec3(0.5, 0, 0.298),
                                   Rotation(Vec3::UnitZ(), 0.3));
  int n = CollidePlaneCylinder(Plane(), standing, 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_EQ(n, 4);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].dist, -0.002, kTol);
    EXPECT_NEAR((c[i].pos - Vec3(0.5, 0, -0.001)).norm(), 0.2, kTol) << "on the rim";
  }
  // Lying on its side: the deepest rim point of each end disk.
  const GeomShape lying = Shape(GeomType::kCylinder, Vec3(0.2, 0.3, 0), Vec3(0, 0, 0.199),
                                Rotation(Vec3::UnitX(), kPi / 2));
  n = CollidePlaneCylinder(Plane(), lying, 0.0, c);
  ASSERT_EQ(n, 2);
  EXPECT_TRUE(HasPoint(c, n, Vec3(0, 0.3, -0.0005)));
  EXPECT_TRUE(HasPoint(c, n, Vec3(0, -0.3, -0.0005)));
  // Balanced on its rim at 45 degrees: one point, the rim point at height
  // z_center - h cos(45) - r sin(45).
  const double tilt = kPi / 4;
  const double reach = 0.3 * std::cos(tilt) + 0.2 * std::sin(tilt);
  const GeomShape rim = Shape(GeomType::kCylinder, Vec3(0.2, 0.3, 0), Vec3(0, 0, reach - 0.01),
                              Rotation(Vec3::UnitY(), tilt));
  n = CollidePlaneCylinder(Plane(), rim, 0.0, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].dist, -0.01, kTol);
  EXPECT_NEAR(c[0].pos.y(), 0.0, kTol);
}

// A cylinder standing on its disk with a tilt of a few microradians, as a resting one wobbles:
// the four rim points stay on its own x and y axes whichever way it tilts (were they to follow
// the tilt's direction, they would turn from step to step and lose their warm starts).
TEST(PlanePairs, CylinderStandingWithATinyTiltKeepsItsRimPoints) {
  Contact c[kMaxContactsPerPair];
  const Mat3 yaw = Rotation(Vec3::UnitZ(), 0.7);
  const Vec3 center(0.3, -0.2, 0.2995);  // 0.5 mm deep
  for (double direction : {0.0, 0.9, 2.0, 3.5, 5.1}) {
    const Vec3 tilt_axis(std::cos(direction), std::sin(direction), 0);
    const Mat3 rot = Rotation(tilt_axis, 1e-4) * yaw;  // rim heights differ by 4e-5 m
    const GeomShape standing = Shape(GeomType::kCylinder, Vec3(0.2, 0.3, 0), center, rot);
    const int n = CollidePlaneCylinder(Plane(), standing, 0.0, c);
    ExpectWellFormed(c, n, 0.0);
    ASSERT_EQ(n, 4) << "tilt direction " << direction;
    for (double sign : {-1.0, 1.0}) {
      for (int axis : {0, 1}) {
        const Vec3 rim = center - rot.col(2) * 0.3 + sign * rot.col(axis) * 0.2;
        const Vec3 contact_point = rim - Vec3::UnitZ() * (rim.z() / 2);
        EXPECT_TRUE(HasPoint(c, n, contact_point, 1e-12))
            << "tilt direction " << direction << ": no point at " << contact_point.transpose();
      }
    }
    for (int i = 1; i < n; ++i) EXPECT_LE(c[i - 1].dist, c[i].dist) << "deepest first";
  }
}

TEST(PlanePairs, BoxOnFaceEdgeAndCorner) {
  Contact c[kMaxContactsPerPair];
  const Vec3 half(0.3, 0.2, 0.1);
  // Resting on a face, rotated about z, 0.001 deep: the 4 bottom corners.
  const Mat3 yaw = Rotation(Vec3::UnitZ(), 0.4);
  const GeomShape resting = Box(half, Vec3(1, 2, 0.099), yaw);
  int n = CollidePlaneBox(Plane(), resting, 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_EQ(n, 4);
  for (double sx : {-1.0, 1.0}) {
    for (double sy : {-1.0, 1.0}) {
      const Vec3 corner = resting.pos + yaw * Vec3(sx * 0.3, sy * 0.2, -0.1);
      EXPECT_TRUE(HasPoint(c, n, corner + Vec3(0, 0, 0.0005))) << corner.transpose();
    }
  }
  for (int i = 0; i < n; ++i) EXPECT_NEAR(c[i].dist, -0.001, kTol);
  // On an edge (rotated 45 degrees about x): the 2 corners of the lowest edge.
  const double edge_reach = (0.2 + 0.1) / std::sqrt(2.0);
  const GeomShape on_edge =
      Box(half, Vec3(0, 0, edge_reach - 0.001), Rotation(Vec3::UnitX(), kPi / 4));
  n = CollidePlaneBox(Plane(), on_edge, 0.0, c);
  ASSERT_EQ(n, 2);
  EXPECT_NEAR(c[0].dist, -0.001, kTol);
  EXPECT_NEAR(c[1].dist, -0.001, kTol);
  EXPECT_NEAR(std::abs(c[0].pos.x()), 0.3, kTol);
  EXPECT_NEAR(c[0].pos.x(), -c[1].pos.x(), kTol);
  // On a corner: the body diagonal (1, 1, 1) rotated onto -z.
  const Vec3 diag = half.normalized();
  const Mat3 corner_down =
      Eigen::Quaterniond::FromTwoVectors(diag, -Vec3::UnitZ()).toRotationMatrix();
  const GeomShape on_corner = Box(half, Vec3(0, 0, half.norm() - 0.001), corner_down);
  n = CollidePlaneBox(Plane(), on_corner, 0.0, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].dist, -0.001, 1e-12);
  // The corner is 0.001 below the plane; the midpoint halfway up to it.
  ExpectVecNear(c[0].pos, Vec3(0, 0, -0.0005), 1e-12, "corner");
}

// A unit cube mesh: vertices and its 12 hull triangles.
struct CubeMesh {
  std::array<Vec3, 8> vertices;
  std::array<Eigen::Vector3i, 12> faces;
  CubeMesh() {
    for (int i = 0; i < 8; ++i) {
      vertices[i] = Vec3((i & 1) ? 0.5 : -0.5, (i & 2) ? 0.5 : -0.5, (i & 4) ? 0.5 : -0.5);
    }
    const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                             {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (int f = 0; f < 6; ++f) {
      faces[2 * f] = Eigen::Vector3i(quads[f][0], quads[f][1], quads[f][2]);
      faces[2 * f + 1] = Eigen::Vector3i(quads[f][0], quads[f][2], quads[f][3]);
    }
  }
  GeomShape Shape(const Vec3& pos, const Mat3& rot) const {
    GeomShape g = alsim::Shape(GeomType::kMesh, Vec3::Zero(), pos, rot);
    g.vertices = vertices.data();
    g.vertex_count = 8;
    g.hull_faces = faces.data();
    g.hull_face_count = 12;
    return g;
  }
};

TEST(PlanePairs, MeshFlatFaceAndCorner) {
  const CubeMesh cube;
  Contact c[kMaxContactsPerPair];
  const Mat3 yaw = Rotation(Vec3::UnitZ(), 0.2);
  int n = CollidePlaneMesh(Plane(), cube.Shape(Vec3(0, 0, 0.499), yaw), 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_EQ(n, 4) << "the bottom face's 4 corners, each once";
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].dist, -0.001, kTol);
    EXPECT_NEAR(c[i].pos.head<2>().norm(), std::sqrt(0.5), kTol);
  }
  // Deterministic: the same call gives the same points in the same order.
  Contact again[kMaxContactsPerPair];
  ASSERT_EQ(CollidePlaneMesh(Plane(), cube.Shape(Vec3(0, 0, 0.499), yaw), 0.0, again), n);
  for (int i = 0; i < n; ++i) EXPECT_EQ(again[i].pos, c[i].pos);
  // On a corner.
  const Mat3 corner_down =
      Eigen::Quaterniond::FromTwoVectors(Vec3(1, 1, 1), -Vec3::UnitZ()).toRotationMatrix();
  n = CollidePlaneMesh(Plane(), cube.Shape(Vec3(0, 0, std::sqrt(0.75) - 0.002), corner_down), 0.0,
                       c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].dist, -0.002, 1e-12);
  // Above by 0.01: only with a margin.
  EXPECT_EQ(CollidePlaneMesh(Plane(), cube.Shape(Vec3(0, 0, 0.51), yaw), 0.005, c), 0);
  EXPECT_EQ(CollidePlaneMesh(Plane(), cube.Shape(Vec3(0, 0, 0.51), yaw), 0.02, c), 4);
}

// ---------------------------------------------------------------- spheres and capsules

TEST(SphereCapsulePairs, SphereSphere) {
  Contact c[kMaxContactsPerPair];
  const Vec3 dir = Vec3(1, -2, 0.5).normalized();
  const GeomShape a = Sphere(0.3, Vec3(1, 1, 1));
  const GeomShape b = Sphere(0.2, Vec3(1, 1, 1) + dir * 0.48);
  ASSERT_EQ(CollideSphereSphere(a, b, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.02, kTol);
  ExpectVecNear(c[0].normal, dir, kTol, "normal a -> b");
  ExpectVecNear(c[0].pos, a.pos + dir * 0.29, kTol, "midpoint");
  // Separated by 0.01: reported within margin 0.02 with dist > 0, not at margin 0.01.
  const GeomShape far = Sphere(0.2, Vec3(1, 1, 1) + dir * 0.51);
  ASSERT_EQ(CollideSphereSphere(a, far, 0.02, c), 1);
  EXPECT_NEAR(c[0].dist, 0.01, kTol);
  EXPECT_EQ(CollideSphereSphere(a, far, 0.01 - 1e-9, c), 0);
}

TEST(SphereCapsulePairs, SphereCapsuleAtSideAndCap) {
  Contact c[kMaxContactsPerPair];
  const GeomShape capsule = Capsule(0.1, 0.4, Vec3(0, 0, 0), Rotation(Vec3::UnitY(), kPi / 2));
  // Beside the middle of the axis (along world x).
  ASSERT_EQ(CollideSphereCapsule(Sphere(0.2, Vec3(0.2, 0, 0.29)), capsule, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.01, kTol);
  ExpectVecNear(c[0].normal, -Vec3::UnitZ(), kTol, "normal sphere -> capsule");
  ExpectVecNear(c[0].pos, Vec3(0.2, 0, 0.095), kTol, "pos");
  // Beyond the end cap at +x, diagonally.
  const Vec3 dir = Vec3(1, 1, 0).normalized();
  ASSERT_EQ(CollideSphereCapsule(Sphere(0.2, Vec3(0.4, 0, 0) + dir * 0.35), capsule, 0.1, c), 1);
  EXPECT_NEAR(c[0].dist, 0.05, kTol);
  ExpectVecNear(c[0].normal, -dir, kTol, "normal");
}

TEST(SphereCapsulePairs, CapsuleCapsuleCrossedAndParallel) {
  Contact c[kMaxContactsPerPair];
  const GeomShape along_x = Capsule(0.1, 0.5, Vec3::Zero(), Rotation(Vec3::UnitY(), kPi / 2));
  const GeomShape along_y =
      Capsule(0.15, 0.5, Vec3(0.2, 0.1, 0.24), Rotation(Vec3::UnitX(), kPi / 2));
  ASSERT_EQ(CollideCapsuleCapsule(along_x, along_y, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.01, kTol);
  ExpectVecNear(c[0].normal, Vec3::UnitZ(), kTol, "normal");
  ExpectVecNear(c[0].pos, Vec3(0.2, 0, 0.095), kTol, "pos");
  // Parallel, stacked, offset along the axis by 0.3: overlap from x = -0.2 to 0.5.
  const GeomShape stacked = Capsule(0.1, 0.5, Vec3(0.3, 0, 0.195), along_x.rot);
  const int n = CollideCapsuleCapsule(along_x, stacked, 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_EQ(n, 2);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].dist, -0.005, kTol);
    ExpectVecNear(c[i].normal, Vec3::UnitZ(), kTol, "normal");
  }
  EXPECT_TRUE(HasPoint(c, n, Vec3(-0.2, 0, 0.0975)));
  EXPECT_TRUE(HasPoint(c, n, Vec3(0.5, 0, 0.0975)));
}

// ---------------------------------------------------------------- boxes

TEST(BoxPairs, SphereBoxOutsideAndInside) {
  Contact c[kMaxContactsPerPair];
  const Mat3 rot = Rotation(Vec3(1, 1, 0), 0.6);
  const GeomShape box = Box(Vec3(0.3, 0.2, 0.1), Vec3(1, 0, 0), rot);
  // Beyond the +x face.
  ASSERT_EQ(CollideSphereBox(Sphere(0.1, box.pos + rot * Vec3(0.39, 0.05, 0)), box, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.01, kTol);
  ExpectVecNear(c[0].normal, -rot.col(0), kTol, "normal sphere -> box");
  // Beyond a corner: distance to the corner.
  const Vec3 corner(0.3, 0.2, 0.1);
  const Vec3 out_dir = Vec3(1, 2, 3).normalized();
  ASSERT_EQ(CollideSphereBox(Sphere(0.1, box.pos + rot * (corner + out_dir * 0.12)), box, 0.05, c),
            1);
  EXPECT_NEAR(c[0].dist, 0.02, kTol);
  ExpectVecNear(c[0].normal, -(rot * out_dir), kTol, "normal");
  ExpectVecNear(c[0].pos, box.pos + rot * (corner + out_dir * 0.01), kTol, "pos");
  // Center inside, nearest the -z face (0.03 away): leaves through it.
  ASSERT_EQ(CollideSphereBox(Sphere(0.05, box.pos + rot * Vec3(0.1, 0.05, -0.07)), box, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.08, kTol);
  ExpectVecNear(c[0].normal, rot.col(2), kTol, "normal");
}

TEST(BoxPairs, CapsuleLyingOnBoxFaceAndAcrossEdge) {
  Contact c[kMaxContactsPerPair];
  const GeomShape box = Box(Vec3(0.5, 0.4, 0.1), Vec3::Zero(), Rotation(Vec3::UnitZ(), 0.3));
  // Along the box's x axis, wholly over its top face, 0.002 deep: two points, one per end.
  const Mat3 along = Rotation(Vec3::UnitZ(), 0.3) * Rotation(Vec3::UnitY(), kPi / 2);
  const GeomShape lying = Capsule(0.05, 0.3, box.rot * Vec3(0.1, 0.1, 0.148), along);
  int n = CollideCapsuleBox(lying, box, 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_EQ(n, 2);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].dist, -0.002, kTol);
    ExpectVecNear(c[i].normal, -Vec3::UnitZ(), kTol, "normal capsule -> box");
  }
  EXPECT_TRUE(HasPoint(c, n, box.rot * Vec3(0.4, 0.1, 0.099)));
  EXPECT_TRUE(HasPoint(c, n, box.rot * Vec3(-0.2, 0.1, 0.099)));
  // Sticking out past the +x edge: the second point at the face's edge.
  const GeomShape overhang = Capsule(0.05, 0.3, box.rot * Vec3(0.4, 0.1, 0.148), along);
  n = CollideCapsuleBox(overhang, box, 0.0, c);
  ASSERT_EQ(n, 2);
  EXPECT_TRUE(HasPoint(c, n, box.rot * Vec3(0.1, 0.1, 0.099)));
  EXPECT_TRUE(HasPoint(c, n, box.rot * Vec3(0.5, 0.1, 0.099)));
  // Crossing the top +x edge at right angles, 0.01 from it along the diagonal: one point.
  const Vec3 diag = Vec3(1, 0, 1).normalized();
  const GeomShape across = Capsule(0.05, 0.3, box.rot * (Vec3(0.5, 0, 0.1) + diag * 0.06),
                                   box.rot * Rotation(Vec3::UnitX(), kPi / 2));
  n = CollideCapsuleBox(across, box, 0.05, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].dist, 0.01, kTol);
  ExpectVecNear(c[0].normal, -(box.rot * diag), kTol, "normal");
  // Axis through the box: the least-overlap direction (0.1 + radius down through the top face).
  const GeomShape through = Capsule(0.05, 0.3, box.rot * Vec3(0, 0, 0.05), along);
  ASSERT_EQ(CollideCapsuleBox(through, box, 0.0, c), 1);
  EXPECT_NEAR(c[0].dist, -0.1, kTol);
  ExpectVecNear(c[0].normal, -Vec3::UnitZ(), kTol, "normal");
}

// A capsule of radius r whose axis runs from p0 to p1 in the frame of `box`.
GeomShape CapsuleBetween(const GeomShape& box, const Vec3& p0, const Vec3& p1, double r) {
  const Mat3 along =
      Eigen::Quaterniond::FromTwoVectors(Vec3::UnitZ(), (p1 - p0).normalized()).toRotationMatrix();
  return Capsule(r, (p1 - p0).norm() / 2, box.pos + box.rot * (p0 + p1) / 2, box.rot * along);
}

// A capsule lying across a box face and past both of its edges, at coordinates that are not
// round: the closest axis point sits on an edge of the face only up to rounding, and the capsule
// still gets its two points, one at each edge (with one it rocked from edge to edge).
TEST(BoxPairs, CapsuleLyingAcrossABoxFacePastBothEdges) {
  Contact c[kMaxContactsPerPair];
  const Mat3 rot = Rotation(Vec3(0.3, -0.5, 0.8), 1.1);
  const GeomShape box = Box(Vec3(0.15, 0.1, 0.05), Vec3(0.7, -0.4, 0.3), rot);
  const Vec3 p0(0.0207, -0.1365, -0.0986), p1(0.0569, 0.1613, -0.0986);  // box frame
  const int n = CollideCapsuleBox(CapsuleBetween(box, p0, p1, 0.049), box, 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_EQ(n, 2);
  for (double y : {-0.1, 0.1}) {
    const double t = (y - p0.y()) / (p1.y() - p0.y());
    // Midway between the surfaces: the capsule reaches 0.4 mm past the face at z = -0.05.
    const Vec3 on_face(p0.x() + t * (p1.x() - p0.x()), y, -0.05 + 0.0002);
    EXPECT_TRUE(HasPoint(c, n, box.pos + rot * on_face, 1e-9))
        << "no point at the y = " << y << " edge";
  }
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].dist, 0.0986 - 0.05 - 0.049, 1e-12);
    ExpectVecNear(c[i].normal, rot.col(2), 1e-12, "normal capsule -> box");
  }
}

// A capsule lying on a box face and past one edge, tilted down beyond the edge by 1 urad: its
// closest axis point lies just past the edge, yet it lies on the face and gets a point at the
// edge and one at its other end.
TEST(BoxPairs, CapsuleOverABoxEdgeTiltedDownPastIt) {
  Contact c[kMaxContactsPerPair];
  const Mat3 rot = Rotation(Vec3(-0.4, 0.2, 0.9), 0.7);
  const GeomShape box = Box(Vec3(0.15, 0.1, 0.05), Vec3(-0.3, 0.2, 0.5), rot);
  const double height = 0.05 + 0.049 - 0.0003;  // the axis over the face: 0.3 mm deep
  const Vec3 p0(-0.13, 0.01, height), p1(0.17, 0.01, height - 0.3e-6);  // box frame
  const int n = CollideCapsuleBox(CapsuleBetween(box, p0, p1, 0.049), box, 0.001, c);
  ExpectWellFormed(c, n, 0.001);
  ASSERT_EQ(n, 2);
  EXPECT_TRUE(HasPoint(c, n, box.pos + rot * Vec3(0.15, 0.01, 0.05 - 0.00015), 1e-6)) << "edge";
  EXPECT_TRUE(HasPoint(c, n, box.pos + rot * Vec3(-0.13, 0.01, 0.05 - 0.00015), 1e-6))
      << "other end";
  for (int i = 0; i < n; ++i) EXPECT_NEAR(c[i].dist, -0.0003, 1e-6);
}

TEST(BoxPairs, BoxOnBoxClippedFacePolygon) {
  Contact c[kMaxContactsPerPair];
  // A large base; a smaller box on top, offset and rotated about z so that part of it overhangs.
  const GeomShape base = Box(Vec3(0.5, 0.5, 0.2), Vec3::Zero());
  const Mat3 yaw = Rotation(Vec3::UnitZ(), 0.5);
  const GeomShape top = Box(Vec3(0.3, 0.2, 0.1), Vec3(0.35, 0.1, 0.299), yaw);
  const int n = CollideBoxBox(base, top, 0.0, c);
  ExpectWellFormed(c, n, 0.0);
  ASSERT_GE(n, 3);
  for (int i = 0; i < n; ++i) {
    EXPECT_NEAR(c[i].dist, -0.001, kTol);
    ExpectVecNear(c[i].normal, Vec3::UnitZ(), kTol, "normal");
    EXPECT_NEAR(c[i].pos.z(), 0.1995, kTol);
    // Inside the base's top face and inside the top box's bottom face.
    EXPECT_LE(c[i].pos.x(), 0.5 + 1e-12);
    EXPECT_LE(std::abs(c[i].pos.y()), 0.5 + 1e-12);
    const Vec3 local = yaw.transpose() * (c[i].pos - top.pos);
    EXPECT_LE(std::abs(local.x()), 0.3 + 1e-12);
    EXPECT_LE(std::abs(local.y()), 0.2 + 1e-12);
  }
  // The top box's corners that lie over the base are in the manifold; so are the points where
  // its bottom edges cross the base's x = 0.5 edge.
  int corners_inside = 0;
  for (double sx : {-1.0, 1.0}) {
    for (double sy : {-1.0, 1.0}) {
      const Vec3 corner = top.pos + yaw * Vec3(sx * 0.3, sy * 0.2, -0.1);
      if (corner.x() < 0.5) {
        ++corners_inside;
        EXPECT_TRUE(HasPoint(c, n, corner + Vec3(0, 0, 0.0005))) << corner.transpose();
      }
    }
  }
  EXPECT_LT(corners_inside, 4) << "the configuration overhangs";
  EXPECT_EQ(n, corners_inside + 2) << "plus the two crossings of the base's edge";
}

// Two equal boxes resting face to face, turned against each other and tilted by 10 urad in
// various directions (as resting boxes wobble): the lower box's face stays the reference, so the
// normal does not flip between the two faces' normals and the manifold keeps its points.
TEST(BoxPairs, BoxesRestingFaceToFaceKeepTheirReferenceFace) {
  Contact c[kMaxContactsPerPair];
  const Mat3 rot = Rotation(Vec3(0.2, 0.7, -0.4), 0.8);
  const Vec3 half(0.15, 0.1, 0.05);
  const GeomShape lower = Box(half, Vec3(0.3, 0.1, -0.2), rot);
  const Vec3 offset(0.02, 0.01, 0.1 - 1e-4);  // 0.1 mm overlap, lower box's frame
  int first_count = -1;
  for (double direction = 0; direction < 6.2; direction += 0.5) {
    const Vec3 tilt_axis(std::cos(direction), std::sin(direction), 0);
    const Mat3 upper_rot = rot * Rotation(tilt_axis, 1e-5) * Rotation(Vec3::UnitZ(), 0.4);
    const GeomShape upper = Box(half, lower.pos + rot * offset, upper_rot);
    const int n = CollideBoxBox(lower, upper, 0.0, c);
    ExpectWellFormed(c, n, 0.0);
    ASSERT_GE(n, 3) << "tilt direction " << direction;
    if (first_count < 0) first_count = n;
    EXPECT_EQ(n, first_count) << "tilt direction " << direction;
    for (int i = 0; i < n; ++i) {
      ExpectVecNear(c[i].normal, rot.col(2), 1e-12,
                    "the lower box's face normal, tilt direction " + std::to_string(direction));
    }
  }
}

TEST(BoxPairs, BoxBoxEdgeEdge) {
  Contact c[kMaxContactsPerPair];
  // Two unit-half cubes, each turned 45 degrees so an edge points at the other: a's top edge along
  // x, b's bottom edge along y, separated by 0.01 along z.
  const Mat3 ra = Rotation(Vec3::UnitX(), kPi / 4);
  const Mat3 rb = Rotation(Vec3::UnitY(), kPi / 4);
  const double reach = std::sqrt(2.0) * 0.5;
  const GeomShape a = Box(Vec3(0.5, 0.5, 0.5), Vec3::Zero(), ra);
  const GeomShape b = Box(Vec3(0.5, 0.5, 0.5), Vec3(0.1, -0.05, 2 * reach + 0.01), rb);
  const int n = CollideBoxBox(a, b, 0.02, c);
  ASSERT_EQ(n, 1);
  EXPECT_NEAR(c[0].dist, 0.01, kTol);
  ExpectVecNear(c[0].normal, Vec3::UnitZ(), kTol, "normal");
  // a's edge runs along x at y = 0, b's along y at x = 0.1: they cross above (0.1, 0).
  ExpectVecNear(c[0].pos, Vec3(0.1, 0, reach + 0.005), kTol, "pos");
  EXPECT_EQ(CollideBoxBox(a, b, 0.01 - 1e-9, c), 0);
}

// ---------------------------------------------------------------- swap symmetry

// Swapping a and b flips the normals and changes nothing else.
void ExpectSwapFlips(PairFunction f, const GeomShape& a, const GeomShape& b, double margin) {
  Contact ab[kMaxContactsPerPair];
  Contact ba[kMaxContactsPerPair];
  const int n = f(a, b, margin, ab);
  ASSERT_EQ(f(b, a, margin, ba), n);
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(ab[i].dist, ba[i].dist);
    EXPECT_EQ(ab[i].pos, ba[i].pos);
    EXPECT_EQ(ab[i].normal, Vec3(-ba[i].normal));
  }
}

TEST(SwapSymmetry, SameTypePairsFlipTheNormalOnly) {
  std::mt19937 rng(7);
  for (int k = 0; k < 200; ++k) {
    const Vec3 offset = UniformVec3(rng, -0.6, 0.6);
    const GeomShape s1 = Sphere(Uniform(rng, 0.1, 0.4), Vec3::Zero());
    const GeomShape s2 = Sphere(Uniform(rng, 0.1, 0.4), offset);
    ExpectSwapFlips(CollideSphereSphere, s1, s2, 0.05);
    const GeomShape c1 = Capsule(0.1, 0.3, Vec3::Zero(), RandomRotation(rng));
    const GeomShape c2 = Capsule(0.15, 0.2, offset * 0.5, RandomRotation(rng));
    ExpectSwapFlips(CollideCapsuleCapsule, c1, c2, 0.05);
    const GeomShape b1 = Box(Vec3(0.3, 0.2, 0.1), Vec3::Zero(), RandomRotation(rng));
    const GeomShape b2 = Box(Vec3(0.1, 0.25, 0.2), offset, RandomRotation(rng));
    ExpectSwapFlips(CollideBoxBox, b1, b2, 0.05);
  }
  // Parallel capsules (two points) and the box stack.
  const Mat3 along_x = Rotation(Vec3::UnitY(), kPi / 2);
  ExpectSwapFlips(CollideCapsuleCapsule, Capsule(0.1, 0.5, Vec3::Zero(), along_x),
                  Capsule(0.1, 0.5, Vec3(0.3, 0, 0.195), along_x), 0.0);
  ExpectSwapFlips(CollideBoxBox, Box(Vec3(0.5, 0.5, 0.2), Vec3::Zero()),
                  Box(Vec3(0.3, 0.2, 0.1), Vec3(0.35, 0.1, 0.299), Rotation(Vec3::UnitZ(), 0.5)),
                  0.0);
}

TEST(SwapSymmetry, MixedTypeNormalsPointFromAToB) {
  Contact c[kMaxContactsPerPair];
  // b is on the +z side of a in each: the normal has a positive z component.
  const GeomShape box = Box(Vec3(0.3, 0.3, 0.1), Vec3::Zero(), Rotation(Vec3::UnitZ(), 0.2));
  ASSERT_EQ(CollideSphereBox(Sphere(0.1, Vec3(0, 0, -0.195)), box, 0.0, c), 1);
  EXPECT_GT(c[0].normal.z(), 0.99);
  ASSERT_GE(CollideCapsuleBox(Capsule(0.1, 0.2, Vec3(0, 0, -0.195)), box, 0.0, c), 1);
  EXPECT_GT(c[0].normal.z(), 0.99);
  ASSERT_EQ(CollideSphereCapsule(Sphere(0.1, Vec3(0, 0, -0.395)), Capsule(0.1, 0.2, Vec3::Zero()),
                                 0.0, c),
            1);
  EXPECT_GT(c[0].normal.z(), 0.99);
}

TEST(Allocation, PairFunctionsAllocateNothing) {
  std::mt19937 rng(3);
  const GeomShape b1 = Box(Vec3(0.3, 0.2, 0.1), Vec3::Zero(), RandomRotation(rng));
  const GeomShape b2 = Box(Vec3(0.1, 0.25, 0.2), Vec3(0.1, 0.2, 0.3), RandomRotation(rng));
  const GeomShape cap = Capsule(0.1, 0.3, Vec3(0.1, 0.1, 0.2), RandomRotation(rng));
  const CubeMesh cube;
  Contact c[kMaxContactsPerPair];
  testing::AllocationCounter counter;
  int total = 0;
  total += CollideBoxBox(b1, b2, 0.1, c);
  total += CollideCapsuleBox(cap, b1, 0.1, c);
  total += CollidePlaneMesh(Plane(), cube.Shape(Vec3(0, 0, 0.45), Mat3::Identity()), 0.1, c);
  total += CollidePlaneCylinder(
      Plane(), Shape(GeomType::kCylinder, Vec3(0.2, 0.3, 0), Vec3(0, 0, 0.29)), 0.1, c);
  EXPECT_EQ(counter.count(), 0);
  EXPECT_GT(total, 0);
}

// ---------------------------------------------------------------- against MuJoCo 2.2.2

const char* MjTypeName(GeomType t) {
  switch (t) {
    case GeomType::kPlane:
      return "plane";
    case GeomType::kSphere:
      return "sphere";
    case GeomType::kCapsule:
      return "capsule";
    case GeomType::kEllipsoid:
      return "ellipsoid";
    case GeomType::kCylinder:
      return "cylinder";
    case GeomType::kBox:
      return "box";
    default:
      return "mesh";
  }
}

// Two static geoms in a MuJoCo model, whose poses and sizes the test overwrites in mjData and
// mjModel before calling MuJoCo's pair function directly.
class MujocoPair {
 public:
  MujocoPair(GeomType ta, GeomType tb) : ta_(ta), tb_(tb) {
    std::ostringstream xml;
    xml << "<mujoco><asset><mesh name=\"m\" vertex=\"0.3 0.1 0  -0.2 0.25 0.05  -0.15 -0.3 0.1  "
           "0.05 0.02 0.4  0.1 -0.05 -0.35  0.25 -0.2 0.2  -0.25 0.05 -0.2\"/></asset>"
        << "<worldbody>"
        << "<geom name=\"a\" type=\"" << MjTypeName(ta) << "\" size=\"0.1 0.1 0.1\""
        << (ta == GeomType::kMesh ? " mesh=\"m\"" : "") << "/>"
        << "<geom name=\"b\" type=\"" << MjTypeName(tb) << "\" size=\"0.1 0.1 0.1\""
        << (tb == GeomType::kMesh ? " mesh=\"m\"" : "") << "/>"
        << "</worldbody></mujoco>";
    char error[1000] = "";
    mjVFS vfs;
    mj_defaultVFS(&vfs);
    const std::string file = "pair.xml";
    const std::string text = xml.str();
    mj_makeEmptyFileVFS(&vfs, file.c_str(), static_cast<int>(text.size()));
    std::copy(text.begin(), text.end(), static_cast<char*>(vfs.filedata[0]));
    m_ = mj_loadXML(file.c_str(), &vfs, error, sizeof(error));
    mj_deleteVFS(&vfs);
    if (m_ == nullptr) {
      ADD_FAILURE() << error;
      return;
    }
    d_ = mj_makeData(m_);
    if (tb == GeomType::kMesh) {
      const int adr = m_->mesh_vertadr[0];
      for (int v = 0; v < m_->mesh_vertnum[0]; ++v) {
        mesh_vertices_.emplace_back(m_->mesh_vert[3 * (adr + v)], m_->mesh_vert[3 * (adr + v) + 1],
                                    m_->mesh_vert[3 * (adr + v) + 2]);
      }
      const int fadr = m_->mesh_faceadr[0];
      for (int f = 0; f < m_->mesh_facenum[0]; ++f) {
        mesh_faces_.emplace_back(m_->mesh_face[3 * (fadr + f)], m_->mesh_face[3 * (fadr + f) + 1],
                                 m_->mesh_face[3 * (fadr + f) + 2]);
      }
    }
  }
  ~MujocoPair() {
    if (d_ != nullptr) mj_deleteData(d_);
    if (m_ != nullptr) mj_deleteModel(m_);
  }
  MujocoPair(const MujocoPair&) = delete;
  MujocoPair& operator=(const MujocoPair&) = delete;
  bool ok() const { return d_ != nullptr; }

  // Completes a mesh shape with the model's vertices and hull (its faces: the mesh is given by
  // vertices only, so MuJoCo's faces are its convex hull).
  void AttachMesh(GeomShape* g) const {
    g->vertices = mesh_vertices_.data();
    g->vertex_count = static_cast<int>(mesh_vertices_.size());
    g->hull_faces = mesh_faces_.data();
    g->hull_face_count = static_cast<int>(mesh_faces_.size());
  }

  // MuJoCo's contacts for the pair at the given shapes.
  int Collide(const GeomShape& a, const GeomShape& b, double margin, mjContact* con) {
    const GeomShape* shapes[2] = {&a, &b};
    for (int g = 0; g < 2; ++g) {
      for (int i = 0; i < 3; ++i) {
        m_->geom_size[3 * g + i] = shapes[g]->size[i];
        d_->geom_xpos[3 * g + i] = shapes[g]->pos[i];
        for (int j = 0; j < 3; ++j) d_->geom_xmat[9 * g + 3 * i + j] = shapes[g]->rot(i, j);
      }
      m_->geom_rbound[g] = 10;
    }
    const int ta = static_cast<int>(ta_);
    const int tb = static_cast<int>(tb_);
    return mjCOLLISIONFUNC[ta][tb](m_, d_, con, 0, 1, margin);
  }

 private:
  GeomType ta_;
  GeomType tb_;
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
  std::vector<Vec3> mesh_vertices_;
  std::vector<Eigen::Vector3i> mesh_faces_;
};

Vec3 RandomSize(GeomType t, std::mt19937& rng) {
  switch (t) {
    case GeomType::kPlane:
      return Vec3(1, 1, 0.1);
    case GeomType::kSphere:
      return Vec3(Uniform(rng, 0.05, 0.5), 0, 0);
    case GeomType::kCapsule:
    case GeomType::kCylinder: {
      const double radius = Uniform(rng, 0.05, 0.3);
      const double half_length = Uniform(rng, 0.05, 0.5);
      return Vec3(radius, half_length, 0);
    }
    case GeomType::kMesh:
      return Vec3::Zero();
    default:
      return UniformVec3(rng, 0.05, 0.5);
  }
}

// The smallest dimension, which bounds how deep a random pose may sink b into a.
double SmallestSize(const GeomShape& g) {
  switch (g.type) {
    case GeomType::kPlane:
      return 1;
    case GeomType::kMesh:
      return 0.1;
    case GeomType::kSphere:
    case GeomType::kCapsule:
    case GeomType::kCylinder:
      return g.size[0];  // the radius
    default:
      return g.size.minCoeff();
  }
}

struct OracleStats {
  int samples = 0;
  int in_contact = 0;
  double worst_dist = 0;
  double worst_normal = 0;
  int halved_by_mujoco = 0;         // box-box: MuJoCo's dist is half ours (face-face, see below)
  int separated_disagreements = 0;  // box-box: separated, MuJoCo's dist is neither ours nor half
  int deep_face_preferred = 0;      // box-box: deep, alsim took a face where MuJoCo an edge pair
};

// Index of the deepest of MuJoCo's contacts, or -1.
int MujocoDeepest(const mjContact* con, int n) {
  int deepest = -1;
  for (int i = 0; i < n; ++i) {
    if (deepest < 0 || con[i].dist < con[deepest].dist) deepest = i;
  }
  return deepest;
}

Vec3 MujocoNormal(const mjContact& c) { return Vec3(c.frame[0], c.frame[1], c.frame[2]); }

// Distance between two boxes by alternating projections (converges to the closest points of two
// disjoint convex sets; 0 when they overlap). Independent of the separating-axis code.
double BoxDistance(const GeomShape& a, const GeomShape& b) {
  auto project = [](const GeomShape& g, const Vec3& p) {
    const Vec3 local = (g.rot.transpose() * (p - g.pos)).cwiseMax(-g.size).cwiseMin(g.size);
    return Vec3(g.pos + g.rot * local);
  };
  Vec3 p = a.pos;
  for (int it = 0; it < 20000; ++it) p = project(a, project(b, p));
  return (project(b, p) - p).norm();
}

// Box-box checks of our deepest point that need no oracle: translating b along the normal by the
// penetration depth (plus 1e-4) separates the boxes, so the depth is not underestimated (that it
// is the least such translation is the separating-axis theorem; alternating projections converge
// too slowly on thin overlaps to check it); a positive dist (the
// separating-axis bound) never exceeds the true distance.
void ExpectBoxBoxGeometry(const GeomShape& a, const GeomShape& b, const Contact& best, int k) {
  if (best.dist < 0) {
    GeomShape moved = b;
    moved.pos += best.normal * (-best.dist + 1e-4);
    EXPECT_GE(BoxDistance(a, moved), 1e-4 - 1e-7) << "sample " << k << ": still overlapping";
  } else {
    EXPECT_LE(best.dist, BoxDistance(a, b) + 1e-9) << "sample " << k;
  }
}

// Random relative poses around contact: b is placed along a random direction, then moved along
// MuJoCo's deepest normal (measured with a generous margin, a few times over so that it converges
// for box-box too) to a target distance between -0.3 of the smallest size and margin + 0.03. At
// that pose both engines collide the pair at the real margin. MuJoCo's contact sets differ from
// ours in size (plane-cylinder, plane-box beyond 4 corners, plane-mesh, capsule pairs, box-box
// manifolds), so only the deepest point is compared: its dist and normal to 1e-6, and whether
// there is contact at all.
//
// Box-box (`box_box`): MuJoCo 2.2.2's face-face contacts report half the distance along the face
// normal (we measured it: translating b by MuJoCo's depth leaves the boxes overlapping, by ours
// separates them exactly; edge-edge contacts agree), so ours must equal MuJoCo's dist or twice
// it. For separated boxes whose closest features are not face-face, neither engine's
// separating-axis value is the true distance and MuJoCo 2.2.2 sometimes reports a deep
// penetration; there ours is only checked against the true distance (ExpectBoxBoxGeometry).
OracleStats CompareWithMujoco(GeomType ta, GeomType tb, PairFunction f, int samples, unsigned seed,
                              bool box_box) {
  OracleStats stats;
  MujocoPair mj(ta, tb);
  if (!mj.ok()) return stats;
  std::mt19937 rng(seed);
  mjContact con[mjMAXCONPAIR];
  Contact ours[kMaxContactsPerPair];
  for (int k = 0; k < samples; ++k) {
    // Each draw into a named local: argument order is unspecified (g++ and clang differ).
    const Vec3 size_a = RandomSize(ta, rng);
    const double x_a = Uniform(rng, -1, 1);
    const double y_a = Uniform(rng, -1, 1);
    const Mat3 rot_a = RandomRotation(rng);
    GeomShape a = Shape(ta, size_a, Vec3(x_a, y_a, 0), rot_a);
    const Vec3 size_b = RandomSize(tb, rng);
    const Mat3 rot_b = RandomRotation(rng);
    GeomShape b = Shape(tb, size_b, Vec3::Zero(), rot_b);
    if (tb == GeomType::kMesh) mj.AttachMesh(&b);
    const Vec3 dir = UniformVec3(rng, -1, 1).normalized();
    b.pos = a.pos + (ta == GeomType::kPlane ? a.rot.col(2) : dir) * 1.5;
    const double margin = k % 2 == 0 ? 0.0 : Uniform(rng, 0.001, 0.05);
    const double target =
        Uniform(rng, -0.3 * std::min(SmallestSize(a), SmallestSize(b)), margin + 0.03);
    bool placed = true;
    for (int iteration = 0; iteration < 8 && placed; ++iteration) {
      const int deepest = MujocoDeepest(con, mj.Collide(a, b, 5.0, con));
      placed = deepest >= 0;
      if (placed) b.pos -= MujocoNormal(con[deepest]) * (con[deepest].dist - target);
    }
    if (!placed) continue;

    const int nmj = mj.Collide(a, b, margin, con);
    const int n = f(a, b, margin, ours);
    ExpectWellFormed(ours, n, margin);
    ++stats.samples;
    const int deepest = MujocoDeepest(con, nmj);
    const double mj_min =
        deepest >= 0 ? con[deepest].dist : std::numeric_limits<double>::infinity();
    const bool mj_contact = mj_min < margin;
    if (std::abs(mj_min - margin) > 1e-9) {
      EXPECT_EQ(n > 0, mj_contact)
          << "sample " << k << " MuJoCo dist " << mj_min << " margin " << margin;
    }
    if (n == 0 || !mj_contact) continue;
    ++stats.in_contact;
    const Contact& best = ours[Deepest(ours, n)];
    double mj_dist = mj_min;
    if (box_box) {
      ExpectBoxBoxGeometry(a, b, best, k);
      if (std::abs(best.dist - mj_min) > 1e-6 && std::abs(best.dist - 2 * mj_min) <= 1e-6) {
        mj_dist = 2 * mj_min;
        ++stats.halved_by_mujoco;
      } else if (std::abs(best.dist - mj_min) > 1e-6 && best.dist > 0) {
        ++stats.separated_disagreements;
        continue;
      }
    }
    const Vec3 mj_normal = MujocoNormal(con[deepest]);
    // Past 1 cm of overlap alsim prefers a face axis to an edge pair that beats it by less than a
    // quarter of the penetration beyond 1 cm (engine/collision/box_box.cc, kDeepEdgeBias): then
    // its normal is a face normal and its depth d at most (d - 1 cm) / 4 deeper than MuJoCo's.
    if (box_box && -mj_dist > 0.01 && IsFaceNormal(a, b, best.normal) &&
        !IsFaceNormal(a, b, mj_normal)) {
      EXPECT_GE(best.dist, mj_dist - 0.25 * (-best.dist - 0.01) - 1e-6) << "sample " << k;
      ++stats.deep_face_preferred;
      continue;
    }
    const double dist_err = std::abs(best.dist - mj_dist);
    const double normal_err = (best.normal - mj_normal).norm();
    stats.worst_dist = std::max(stats.worst_dist, dist_err);
    stats.worst_normal = std::max(stats.worst_normal, normal_err);
    EXPECT_LE(dist_err, 1e-6) << "sample " << k << ": ours " << best.dist << " MuJoCo " << mj_min;
    EXPECT_LE(normal_err, 1e-6) << "sample " << k << ": ours " << best.normal.transpose()
                                << " MuJoCo " << mj_normal.transpose();
  }
  return stats;
}

// A box beside another's top face and above it, separated: its lowest corner is past the face's
// edge, at (overhang, height) from the edge, while part of its bottom face hangs over the face
// within the margin. The face's normal is the separating axis, the clipped points over the face
// stand higher than the true distance, and the closest features are the corner and the edge, at
// hypot(overhang, height). The deepest point reports that distance (a regression: it had
// reported the clipped height, so the contact would wake late); alternating projections agree.
TEST(BoxPairs, SeparatedBoxBesideAFaceReportsTheTrueDistance) {
  Contact c[kMaxContactsPerPair];
  const GeomShape a = Box(Vec3(0.5, 0.5, 0.1), Vec3::Zero());
  const Mat3 rot = Rotation(Vec3(0.7, -0.2, 0.4), 0.2);
  const Vec3 half(0.2, 0.15, 0.05);
  Vec3 lowest_local;  // b's lowest corner, in its frame
  for (int k = 0; k < 3; ++k) lowest_local[k] = rot(2, k) > 0 ? -half[k] : half[k];
  for (const auto& [overhang, height] : {std::pair{0.004, 0.01}, {0.004, 0.02}, {0.01, 0.02}}) {
    const Vec3 corner(0.5 + overhang, 0.05, 0.1 + height);
    const GeomShape b = Box(half, corner - rot * lowest_local, rot);
    const int n = CollideBoxBox(a, b, 0.1, c);
    ExpectWellFormed(c, n, 0.1);
    ASSERT_GE(n, 2) << "clipped points over the face";
    const Contact& best = c[Deepest(c, n)];
    ExpectVecNear(best.normal, Vec3::UnitZ(), 1e-12, "the face's normal");
    EXPECT_NEAR(best.dist, std::hypot(overhang, height), 1e-9) << overhang << " " << height;
    EXPECT_NEAR(best.dist, BoxDistance(a, b), 1e-9) << overhang << " " << height;
    for (int i = 0; i < n; ++i) {
      if (&c[i] != &best) {
        EXPECT_GT(c[i].dist, best.dist + 0.01) << "the clipped height";
      }
    }
  }
}

struct OracleCase {
  const char* name;
  GeomType a;
  GeomType b;
  PairFunction f;
};

class AgainstMujoco : public ::testing::TestWithParam<OracleCase> {};

TEST_P(AgainstMujoco, DeepestPointAndContactAgree) {
  const OracleCase& p = GetParam();
  const bool box_box = p.a == GeomType::kBox && p.b == GeomType::kBox;
  const OracleStats stats = CompareWithMujoco(p.a, p.b, p.f, 300, 11, box_box);
  EXPECT_GE(stats.samples, 250);
  EXPECT_GE(stats.in_contact, 100);
  std::cout << p.name << ": " << stats.samples << " poses, " << stats.in_contact
            << " in contact, worst |dist| error " << stats.worst_dist << ", worst normal error "
            << stats.worst_normal;
  if (box_box) {
    std::cout << ", MuJoCo's dist half ours in " << stats.halved_by_mujoco
              << ", separated and not compared in " << stats.separated_disagreements
              << ", deep with a face preferred in " << stats.deep_face_preferred;
    EXPECT_LE(stats.separated_disagreements, stats.in_contact / 20);
    EXPECT_GT(stats.deep_face_preferred, 0);  // the poses reach the deep rule
  }
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, AgainstMujoco,
    ::testing::Values(
        OracleCase{"PlaneSphere", GeomType::kPlane, GeomType::kSphere, CollidePlaneSphere},
        OracleCase{"PlaneCapsule", GeomType::kPlane, GeomType::kCapsule, CollidePlaneCapsule},
        OracleCase{"PlaneEllipsoid", GeomType::kPlane, GeomType::kEllipsoid, CollidePlaneEllipsoid},
        OracleCase{"PlaneCylinder", GeomType::kPlane, GeomType::kCylinder, CollidePlaneCylinder},
        OracleCase{"PlaneBox", GeomType::kPlane, GeomType::kBox, CollidePlaneBox},
        OracleCase{"PlaneMesh", GeomType::kPlane, GeomType::kMesh, CollidePlaneMesh},
        OracleCase{"SphereSphere", GeomType::kSphere, GeomType::kSphere, CollideSphereSphere},
        OracleCase{"SphereCapsule", GeomType::kSphere, GeomType::kCapsule, CollideSphereCapsule},
        OracleCase{"SphereBox", GeomType::kSphere, GeomType::kBox, CollideSphereBox},
        OracleCase{"CapsuleCapsule", GeomType::kCapsule, GeomType::kCapsule, CollideCapsuleCapsule},
        OracleCase{"CapsuleBox", GeomType::kCapsule, GeomType::kBox, CollideCapsuleBox},
        OracleCase{"BoxBox", GeomType::kBox, GeomType::kBox, CollideBoxBox}),
    [](const ::testing::TestParamInfo<OracleCase>& pair_case) {
      return std::string(pair_case.param.name);
    });

}  // namespace
}  // namespace alsim
