// Distance between two convex bodies of a family with a closed-form support function, by
// Newton's method on the direction of least overlap (normal_refinement.h) with exact derivatives.
//
// A body of the family has a center c, a positive semidefinite Q, a disk of radius r and a
// segment of half-length l, both along the unit axis z, and the support function
//   h(n) = n.c + sqrt(n^T Q n) + r |P n| + l |n.z|,   P = I - z z^T:
//   - an ellipsoid is Q = R S^2 R^T (R its rotation, S its semi-axes), r = l = 0;
//   - a point is Q = 0, r = l = 0 (a sphere's core); a segment has only l (a capsule's core);
//   - a cylinder is its end disk swept along its axis: r its radius, l its half-height.
// (The disk is the degenerate ellipsoid Q = r^2 P, kept apart for precision near its axis.) h is
// smooth except where P n = 0 (an end face along n) or n.z = 0 (a segment's or cylinder's side).
// The overlap of bodies a and b along a unit n (from a toward b),
//   overlap(n) = h_a(n) + h_b(-n),
// has the support gap s_a(n) - s_b(-n) as gradient and sum (Q - q q^T) / g, q = Q n / g,
// g = sqrt(n^T Q n), plus r (P - u u^T) / |P n|, u = P n / |P n|, as Hessian (the segment terms
// are linear on each side of their kink).
// Newton runs on the unit sphere; its Riemannian Hessian, the tangential block minus overlap(n)
// times the identity, is positive definite wherever the overlap is negative.
//
// The certificate: where the overlap is -D < 0 and the support gap is along n (its tangential
// part below the tolerance), the two support points lie D apart along n while n separates the
// bodies by D, so D is the distance and n the contact normal, exactly, with no global search. This
// replaces GJK's linear tail on curved sets for pairs that are apart (resting ellipsoids,
// cylinders touching rim to rim; BENCHMARKS.md, "General convex pairs"). Where the answer
// sits on a kink (a face or a side touching) Newton stalls and the caller falls back; overlapping
// bodies have no certificate either (kUnknown). EndFaceDistance and SideDistance certify
// cylinders' end faces and sides.
#pragma once

#include "engine/math/types.h"

namespace alsim {

struct SmoothBody {
  Vec3 center = Vec3::Zero();
  Mat3 q = Mat3::Zero();
  Vec3 axis = Vec3::UnitZ();  // unit; used when half_length > 0
  double half_length = 0;
  double face_radius = 0;  // the disk's radius r (a cylinder's end faces), normal to the axis
};

SmoothBody EllipsoidBody(const Vec3& center, const Mat3& rot, const Vec3& semi_axes);
SmoothBody PointBody(const Vec3& point);
// The segment center +- half_length * axis (axis unit).
SmoothBody SegmentBody(const Vec3& center, const Vec3& axis, double half_length);
// A cylinder of the given radius and half-height along the unit axis.
SmoothBody CylinderBody(const Vec3& center, const Vec3& axis, double radius, double half_length);

enum class SmoothPairOutcome {
  kApart,    // certified: distance, normal and witness are exact to rounding
  kBeyond,   // certified: the distance exceeds the caller's `beyond`
  kUnknown,  // no certificate (overlap, a kink, or Newton did not converge): use a general method
};

struct SmoothPairDistance {
  SmoothPairOutcome outcome = SmoothPairOutcome::kUnknown;
  double distance = 0;          // kApart
  Vec3 normal = Vec3::UnitZ();  // kApart: unit, from a toward b
  Vec3 point_a = Vec3::Zero();  // kApart: the closest point of a (its support along normal)
  int iterations = 0;
};

inline constexpr int kSmoothPairMaxIterations = 20;

// The end faces first: along a cylinder's axis its support set is a whole disk, a kink where
// Newton stalls, so stacked cylinders would fall back. Along the axis n of a's (or b's) end face
// that faces the other body, the overlap is -D < 0 and the other body's support point lies over
// the disk: then the disk holds a point D from it along n, the same certificate. Returns kUnknown
// when neither face certifies.
SmoothPairDistance EndFaceDistance(const SmoothBody& a, const SmoothBody& b, double beyond);

// The sides next: where a cylinder's side (or a segment, a side of radius 0) touches, n is
// perpendicular to its axis, on the kink of its l |n.z| term. On that great circle the overlap is
// smooth (the side adds r), so Newton runs over the circle's angle. Where it stops with overlap -D
// < 0, a zero derivative along the circle, and the other body's support point within the side's
// length along the axis, the side holds a point D from it along n: the same certificate. Tries a's
// side, then b's.
SmoothPairDistance SideDistance(const SmoothBody& a, const SmoothBody& b, double beyond,
                                double scale);

// Starts from the unit direction `start` (from a toward b), which must separate the bodies for a
// certificate (overlap(start) < 0). `scale` (m) sets the tolerance on the tangential gradient
// (kNormalGradientTolerance * scale, as RefineNormal).
SmoothPairDistance SmoothPairDistanceOf(const SmoothBody& a, const SmoothBody& b, const Vec3& start,
                                        double beyond, double scale);

}  // namespace alsim
