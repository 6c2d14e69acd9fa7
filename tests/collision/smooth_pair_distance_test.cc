// SmoothPairDistanceOf: the Newton certificate for two ellipsoids (or an ellipsoid and a point)
// against closed forms, against GJK run to its tightest tolerance, and against the geometry of a
// closest-point pair (each witness on its surface, both surface normals along the contact
// normal). It must never certify bodies that overlap.
#include "engine/collision/smooth_pair_distance.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "engine/collision/convex_pairs.h"
#include "engine/collision/gjk_distance.h"
#include "tests/support/collision_shapes.h"

namespace alsim {
namespace {

using testing::RandomOffset;
using testing::RandomRotation;
using testing::RandomUnit;
using testing::Shape;
using testing::Uniform;
using testing::UniformVec3;

Vec3 SupportOf(const void* set, const Vec3& dir) {
  return SupportPoint(*static_cast<const GeomShape*>(set), dir);
}

GjkDistanceResult Gjk(const GeomShape& a, const GeomShape& b, double stop_beyond = INFINITY) {
  const SupportMapping mapping_a{SupportOf, &a, a.pos}, mapping_b{SupportOf, &b, b.pos};
  return GjkDistance(mapping_a, mapping_b, kGjkRelativeTolerance, stop_beyond);
}

SmoothBody BodyOf(const GeomShape& s) { return EllipsoidBody(s.pos, s.rot, s.size); }

double Scale(const GeomShape& a, const GeomShape& b) {
  return (a.pos - b.pos).norm() + a.size.norm() + b.size.norm();
}

// The outward unit normal of ellipsoid s at its surface point p, and how far p is from the
// surface in the ellipsoid's own metric (|S^-1 R^T (p - c)| - 1).
Vec3 OutwardNormal(const GeomShape& s, const Vec3& p) {
  const Vec3 local = s.rot.transpose() * (p - s.pos);
  return (s.rot * local.cwiseQuotient(s.size.cwiseAbs2())).normalized();
}
double OffSurface(const GeomShape& s, const Vec3& p) {
  return (s.rot.transpose() * (p - s.pos)).cwiseQuotient(s.size).norm() - 1;
}

// Newton from the centers' direction, then (as CollideConvex does) from GJK's first separating
// direction.
SmoothPairDistance Certify(const GeomShape& a, const GeomShape& b, double beyond) {
  const Vec3 start = (b.pos - a.pos).normalized();
  SmoothPairDistance found = SmoothPairDistanceOf(BodyOf(a), BodyOf(b), start, beyond, Scale(a, b));
  if (found.outcome == SmoothPairOutcome::kUnknown) {
    const GjkDistanceResult probe = Gjk(a, b, 0.0);
    if (probe.beyond) {
      found = SmoothPairDistanceOf(BodyOf(a), BodyOf(b), probe.direction, beyond, Scale(a, b));
    }
  }
  return found;
}

TEST(SmoothPairDistanceTest, EqualAxesAreSpheres) {
  std::mt19937 rng(41);
  int certified = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const double ra = Uniform(rng, 0.05, 0.3), rb = Uniform(rng, 0.05, 0.3);
    const double gap = Uniform(rng, 1e-6, 0.2);
    const Vec3 direction = RandomUnit(rng);
    const GeomShape a =
        Shape(GeomType::kEllipsoid, Vec3(ra, ra, ra), Vec3(0.3, -1, 2), RandomRotation(rng));
    const GeomShape b = Shape(GeomType::kEllipsoid, Vec3(rb, rb, rb),
                              a.pos + (ra + rb + gap) * direction, RandomRotation(rng));
    // A start 1 rad off the answer.
    const Vec3 start = (direction + RandomUnit(rng)).normalized();
    const SmoothPairDistance found =
        SmoothPairDistanceOf(BodyOf(a), BodyOf(b), start, 1.0, Scale(a, b));
    if (found.outcome == SmoothPairOutcome::kUnknown) continue;  // the start did not separate
    ASSERT_EQ(found.outcome, SmoothPairOutcome::kApart) << trial;
    ++certified;
    EXPECT_NEAR(found.distance, gap, 1e-14) << trial;
    EXPECT_LT((found.normal - direction).norm(), 1e-12) << trial;
    EXPECT_LT((found.point_a - (a.pos + ra * direction)).norm(), 1e-13) << trial;
  }
  EXPECT_GT(certified, 30);  // a start 1 rad off separates the spheres in about 40 trials
}

TEST(SmoothPairDistanceTest, PointBesideAnEllipsoid) {
  std::mt19937 rng(42);
  const Mat3 rot = RandomRotation(rng);
  const Vec3 center(0.5, 0.2, -0.1);
  const SmoothBody ellipsoid = EllipsoidBody(center, rot, Vec3(0.3, 0.2, 0.1));
  for (int axis = 0; axis < 3; ++axis) {
    const double semi = Vec3(0.3, 0.2, 0.1)[axis];
    const Vec3 out = rot.col(axis);
    const SmoothBody point = PointBody(center + (semi + 0.05) * out);
    // Any start that separates: here 0.3 rad off the axis.
    const Vec3 start = (out + 0.3 * rot.col((axis + 1) % 3)).normalized();
    const SmoothPairDistance found = SmoothPairDistanceOf(ellipsoid, point, start, 1.0, 1.0);
    ASSERT_EQ(found.outcome, SmoothPairOutcome::kApart) << axis;
    EXPECT_NEAR(found.distance, 0.05, 1e-14);
    EXPECT_LT((found.normal - out).norm(), 1e-12);
    EXPECT_LT((found.point_a - (center + semi * out)).norm(), 1e-13);
    // From the point's side the normal flips and the witness is the point itself.
    const SmoothPairDistance reverse = SmoothPairDistanceOf(point, ellipsoid, -start, 1.0, 1.0);
    ASSERT_EQ(reverse.outcome, SmoothPairOutcome::kApart);
    EXPECT_NEAR(reverse.distance, 0.05, 1e-14);
    EXPECT_LT((reverse.normal + out).norm(), 1e-12);
    EXPECT_EQ(reverse.point_a, point.center);
  }
}

// Random ellipsoid pairs near contact: every certified distance is GJK's (an upper bound within
// 1e-12 relative when it converges), and its witnesses are a closest-point pair.
TEST(SmoothPairDistanceTest, ApartEllipsoidsMatchGjkAndAreClosestPoints) {
  std::mt19937 rng(43);
  int certified = 0, apart = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const Vec3 axes_a = UniformVec3(rng, 0.03, 0.3);
    const Mat3 rot_a = RandomRotation(rng);
    const GeomShape a = Shape(GeomType::kEllipsoid, axes_a, Vec3(0, 0, 0.2), rot_a);
    const Vec3 axes_b = UniformVec3(rng, 0.03, 0.3);
    const Vec3 offset_b = RandomOffset(rng, 0.05, 0.6);
    const Mat3 rot_b = RandomRotation(rng);
    const GeomShape b = Shape(GeomType::kEllipsoid, axes_b, a.pos + offset_b, rot_b);
    const GjkDistanceResult gjk = Gjk(a, b);
    if (!gjk.separated) continue;
    ++apart;
    const SmoothPairDistance found = Certify(a, b, 10.0);
    if (found.outcome == SmoothPairOutcome::kUnknown) continue;
    ASSERT_EQ(found.outcome, SmoothPairOutcome::kApart) << trial;
    ++certified;
    const std::string where = "trial " + std::to_string(trial);
    // GJK's distance bounds the distance from above.
    EXPECT_LE(found.distance, gjk.distance * (1 + 1e-12) + 1e-15) << where;
    EXPECT_GE(found.distance, gjk.distance * (1 - 1e-9)) << where;
    const Vec3 point_b = found.point_a + found.distance * found.normal;
    EXPECT_LT(std::abs(OffSurface(a, found.point_a)), 1e-12) << where;
    EXPECT_LT(std::abs(OffSurface(b, point_b)), 1e-12) << where;
    EXPECT_LT((OutwardNormal(a, found.point_a) - found.normal).norm(), 1e-9) << where;
    EXPECT_LT((OutwardNormal(b, point_b) + found.normal).norm(), 1e-9) << where;
  }
  EXPECT_GT(apart, 250);
  EXPECT_GT(certified, apart * 9 / 10);  // from the center direction or GJK's probe
}

TEST(SmoothPairDistanceTest, NeverCertifiesOverlappingEllipsoids) {
  std::mt19937 rng(44);
  int overlapping = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const GeomShape a =
        Shape(GeomType::kEllipsoid, Vec3(0.3, 0.1, 0.05), Vec3::Zero(), RandomRotation(rng));
    const Vec3 pos_b = RandomOffset(rng, 0.0, 0.35);
    const Mat3 rot_b = RandomRotation(rng);
    const GeomShape b = Shape(GeomType::kEllipsoid, Vec3(0.2, 0.15, 0.04), pos_b, rot_b);
    if (Gjk(a, b).separated) continue;
    ++overlapping;
    for (const Vec3& start : {Vec3((b.pos - a.pos).normalized()), RandomUnit(rng)}) {
      if (!start.allFinite()) continue;
      const SmoothPairDistance found =
          SmoothPairDistanceOf(BodyOf(a), BodyOf(b), start, 10.0, Scale(a, b));
      EXPECT_EQ(found.outcome, SmoothPairOutcome::kUnknown) << trial;
    }
  }
  EXPECT_GT(overlapping, 100);
}

TEST(SmoothPairDistanceTest, BeyondOnlyWhenTheDistanceExceedsIt) {
  std::mt19937 rng(45);
  for (int trial = 0; trial < 100; ++trial) {
    const GeomShape a =
        Shape(GeomType::kEllipsoid, Vec3(0.2, 0.1, 0.05), Vec3::Zero(), RandomRotation(rng));
    const Vec3 pos_b = RandomOffset(rng, 0.4, 1.0);
    const Mat3 rot_b = RandomRotation(rng);
    const GeomShape b = Shape(GeomType::kEllipsoid, Vec3(0.1, 0.15, 0.05), pos_b, rot_b);
    const GjkDistanceResult gjk = Gjk(a, b);
    ASSERT_TRUE(gjk.separated);
    const SmoothPairDistance below = Certify(a, b, 0.5 * gjk.distance);
    EXPECT_EQ(below.outcome, SmoothPairOutcome::kBeyond) << trial;
    const SmoothPairDistance above = Certify(a, b, 2 * gjk.distance);
    EXPECT_EQ(above.outcome, SmoothPairOutcome::kApart) << trial;
  }
}

// Cylinders (radius r, half-height l along the local z axis).
SmoothBody CylinderOf(const GeomShape& s) {
  return CylinderBody(s.pos, s.rot.col(2), s.size[0], s.size[1]);
}

// Signed distance from p to the surface of cylinder s (exact: the larger of the radial and axial
// excesses inside; the distance to the rim circle, side or face outside).
double CylinderSignedDistance(const GeomShape& s, const Vec3& p) {
  const Vec3 local = s.rot.transpose() * (p - s.pos);
  const double radial = std::hypot(local.x(), local.y()) - s.size[0];
  const double axial = std::abs(local.z()) - s.size[1];
  if (radial <= 0 || axial <= 0) return std::max(radial, axial);
  return std::hypot(radial, axial);
}

TEST(SmoothPairDistanceTest, StackedCylindersCertifyTheirEndFaces) {
  std::mt19937 rng(46);
  int certified = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const Mat3 rot = RandomRotation(rng);
    const double gap = Uniform(rng, 1e-7, 0.05);
    const GeomShape a = Shape(GeomType::kCylinder, Vec3(0.1, 0.05, 0), Vec3(1, 2, 0.3), rot);
    // b above a's top face, tilted by up to 0.3 rad about its x axis, with its lowest point (its
    // local (0, -r, -l)) gap above a random point of a's top disk.
    const double tilt = Uniform(rng, 0, 0.3);
    const Mat3 rot_b = rot * Eigen::AngleAxisd(tilt, Vec3::UnitX()).toRotationMatrix();
    const double angle = Uniform(rng, -M_PI, M_PI), along = Uniform(rng, 0, 0.09);
    const Vec3 target =
        a.pos + rot * Vec3(along * std::cos(angle), along * std::sin(angle), 0.05 + gap);
    const GeomShape b = Shape(GeomType::kCylinder, Vec3(0.08, 0.04, 0),
                              target - rot_b * Vec3(0, -0.08, -0.04), rot_b);
    const SmoothPairDistance found = EndFaceDistance(CylinderOf(a), CylinderOf(b), 1.0);
    ASSERT_EQ(found.outcome, SmoothPairOutcome::kApart) << trial;
    ++certified;
    EXPECT_NEAR(found.distance, gap, 1e-14) << trial;
    EXPECT_LT((found.normal - rot.col(2)).norm(), 1e-15) << trial;
    EXPECT_LT(std::abs(CylinderSignedDistance(a, found.point_a)), 1e-14) << trial;
    EXPECT_LT(std::abs(CylinderSignedDistance(b, found.point_a + gap * found.normal)), 1e-14)
        << trial;
    // The same pair seen from b: its face is not the one that touches, a's is.
    const SmoothPairDistance reverse = EndFaceDistance(CylinderOf(b), CylinderOf(a), 1.0);
    ASSERT_EQ(reverse.outcome, SmoothPairOutcome::kApart) << trial;
    EXPECT_NEAR(reverse.distance, gap, 1e-14) << trial;
    EXPECT_LT((reverse.normal + rot.col(2)).norm(), 1e-15) << trial;
  }
  EXPECT_EQ(certified, 100);
}

TEST(SmoothPairDistanceTest, AFaceDoesNotCertifyARimBeyondIt) {
  // b is 1 cm above the plane of a's top face, but its lowest point lies outside the face's disk:
  // the face normal is not the answer (the closest points are a's rim and b's surface), so the
  // face must not certify.
  const GeomShape a = Shape(GeomType::kCylinder, Vec3(0.1, 0.05, 0));
  const GeomShape b = Shape(GeomType::kEllipsoid, Vec3(0.05, 0.05, 0.05), Vec3(0.2, 0, 0.11));
  const SmoothPairDistance found = EndFaceDistance(CylinderOf(a), BodyOf(b), 1.0);
  EXPECT_EQ(found.outcome, SmoothPairOutcome::kUnknown);
}

TEST(SmoothPairDistanceTest, ABodyBesideACylindersSideIsCertifiedByTheSide) {
  std::mt19937 rng(48);
  int certified = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const Mat3 rot = RandomRotation(rng);
    const GeomShape cylinder = Shape(GeomType::kCylinder, Vec3(0.1, 0.2, 0), Vec3(0, 1, 2), rot);
    const double gap = Uniform(rng, 1e-7, 0.05), height = Uniform(rng, -0.19, 0.19);
    const double angle = Uniform(rng, -M_PI, M_PI);
    const Vec3 out = rot * Vec3(std::cos(angle), std::sin(angle), 0);
    // A ball (an ellipsoid with equal axes) beside the side, its nearest point at `height`.
    const GeomShape ball =
        Shape(GeomType::kEllipsoid, Vec3(0.05, 0.05, 0.05),
              cylinder.pos + rot.col(2) * height + out * (0.1 + gap + 0.05), RandomRotation(rng));
    const SmoothPairDistance found =
        SideDistance(CylinderOf(cylinder), BodyOf(ball), 1.0, Scale(cylinder, ball));
    ASSERT_EQ(found.outcome, SmoothPairOutcome::kApart) << trial;
    ++certified;
    EXPECT_NEAR(found.distance, gap, 1e-13) << trial;
    EXPECT_LT((found.normal - out).norm(), 1e-12) << trial;
    EXPECT_LT((found.point_a - (cylinder.pos + rot.col(2) * height + 0.1 * out)).norm(), 1e-12)
        << trial;
    // From the ball's side the cylinder is b: the normal flips, the witness is the ball's.
    const SmoothPairDistance reverse =
        SideDistance(BodyOf(ball), CylinderOf(cylinder), 1.0, Scale(cylinder, ball));
    ASSERT_EQ(reverse.outcome, SmoothPairOutcome::kApart) << trial;
    EXPECT_NEAR(reverse.distance, gap, 1e-13) << trial;
    EXPECT_LT((reverse.point_a - (ball.pos - 0.05 * out)).norm(), 1e-12) << trial;
  }
  EXPECT_EQ(certified, 100);
  // A segment (a capsule's core) is a side of radius 0.
  const Vec3 axis = RandomUnit(rng);
  const Vec3 out = axis.cross(RandomUnit(rng)).normalized();
  const SmoothBody segment = SegmentBody(Vec3(0.3, 0, 0), axis, 0.2);
  const SmoothBody near_ball = EllipsoidBody(Vec3(0.3, 0, 0) + 0.15 * axis + 0.07 * out,
                                             RandomRotation(rng), Vec3(0.05, 0.05, 0.05));
  const SmoothPairDistance beside = SideDistance(segment, near_ball, 1.0, 1.0);
  ASSERT_EQ(beside.outcome, SmoothPairOutcome::kApart);
  EXPECT_NEAR(beside.distance, 0.02, 1e-14);
  EXPECT_LT((beside.normal - out).norm(), 1e-12);
  EXPECT_LT((beside.point_a - (Vec3(0.3, 0, 0) + 0.15 * axis)).norm(), 1e-13);
  // Beyond the side's end the closest point is on the rim: the side must not certify.
  const GeomShape cylinder = Shape(GeomType::kCylinder, Vec3(0.1, 0.2, 0));
  const GeomShape ball = Shape(GeomType::kEllipsoid, Vec3(0.05, 0.05, 0.05), Vec3(0.16, 0, 0.23));
  EXPECT_EQ(SideDistance(CylinderOf(cylinder), BodyOf(ball), 1.0, 1.0).outcome,
            SmoothPairOutcome::kUnknown);
}

// Random cylinder-cylinder and cylinder-ellipsoid pairs near contact, certified by the end faces,
// the sides or Newton (as CollideConvex tries them): GJK's distance, and witnesses on both
// surfaces.
TEST(SmoothPairDistanceTest, ApartCylindersMatchGjkAndLieOnTheSurfaces) {
  std::mt19937 rng(47);
  int certified = 0, apart = 0;
  for (int trial = 0; trial < 800; ++trial) {
    const double radius_a = Uniform(rng, 0.05, 0.2);
    const double half_height_a = Uniform(rng, 0.02, 0.2);
    const Mat3 rot_a = RandomRotation(rng);
    const GeomShape a =
        Shape(GeomType::kCylinder, Vec3(radius_a, half_height_a, 0), Vec3::Zero(), rot_a);
    const bool ellipsoid = trial % 4 == 0;
    // b's draws in source order: the cylinder's size (when b is a cylinder), position, rotation.
    Vec3 size_b(0.1, 0.07, 0.04);
    if (!ellipsoid) {
      const double radius_b = Uniform(rng, 0.05, 0.2);
      const double half_height_b = Uniform(rng, 0.02, 0.2);
      size_b = Vec3(radius_b, half_height_b, 0);
    }
    const Vec3 pos_b = RandomOffset(rng, 0.1, 0.5);
    const Mat3 rot_b = RandomRotation(rng);
    const GeomShape b =
        Shape(ellipsoid ? GeomType::kEllipsoid : GeomType::kCylinder, size_b, pos_b, rot_b);
    const GjkDistanceResult gjk = Gjk(a, b);
    if (!gjk.separated) continue;
    ++apart;
    const SmoothBody body_b = ellipsoid ? BodyOf(b) : CylinderOf(b);
    SmoothPairDistance found = EndFaceDistance(CylinderOf(a), body_b, 10.0);
    if (found.outcome == SmoothPairOutcome::kUnknown) {
      found = SideDistance(CylinderOf(a), body_b, 10.0, Scale(a, b));
    }
    if (found.outcome == SmoothPairOutcome::kUnknown) {
      const GjkDistanceResult probe = Gjk(a, b, 0.0);
      ASSERT_TRUE(probe.beyond);
      found = SmoothPairDistanceOf(CylinderOf(a), body_b, probe.direction, 10.0, Scale(a, b));
    }
    if (found.outcome == SmoothPairOutcome::kUnknown) continue;  // e.g. two sides: GJK's job
    ASSERT_EQ(found.outcome, SmoothPairOutcome::kApart) << trial;
    ++certified;
    const std::string where = "trial " + std::to_string(trial);
    EXPECT_LE(found.distance, gjk.distance * (1 + 1e-12) + 1e-15) << where;
    EXPECT_GE(found.distance, gjk.distance * (1 - 1e-6)) << where;  // GJK stops at 64 on rims
    const Vec3 point_b = found.point_a + found.distance * found.normal;
    EXPECT_LT(std::abs(CylinderSignedDistance(a, found.point_a)), 1e-12) << where;
    if (ellipsoid) {
      EXPECT_LT(std::abs(OffSurface(b, point_b)), 1e-12) << where;
    } else {
      EXPECT_LT(std::abs(CylinderSignedDistance(b, point_b)), 1e-12) << where;
    }
  }
  EXPECT_GT(apart, 300);
  EXPECT_GT(certified, apart * 2 / 5);  // 229 of 474: the rest touch by a side or an edge
}

}  // namespace
}  // namespace alsim
