// Distance between two smooth strictly convex bodies, each an ellipsoid or a point, by Newton's
// method on the direction of least overlap (normal_refinement.h) with exact derivatives.
//
// An ellipsoid with center c and Q = R S^2 R^T (R its rotation, S its semi-axes) has the support
// function h(n) = n.c + sqrt(n^T Q n), smooth away from n = 0; a point is the case Q = 0. So
//   overlap(n) = h_A(n) + h_B(-n) = n.(c_A - c_B) + g_A(n) + g_B(n),   g(n) = sqrt(n^T Q n),
// with gradient s_A(n) - s_B(-n) (the support points) and Hessian
// sum (Q - q q^T) / g, q = Q n / g. Newton runs on the unit sphere (the Riemannian Hessian is the
// tangential block minus overlap(n) times the identity, positive definite wherever the overlap is
// negative).
//
// Where Newton stops with a negative overlap -D and a zero tangential gradient, the support
// points lie D apart along n while n separates the bodies by D: D is the distance, exactly, and n
// the contact normal. That certificate needs no global search, so this replaces GJK for apart
// pairs, where GJK converges only linearly on curved sets (about 31 iterations on humanoid100's
// resting ellipsoid pairs). Overlapping bodies, or a start direction along which they overlap,
// are left to the caller (kUnknown): penetration depth has no such certificate.
#pragma once

#include "engine/math/types.h"

namespace alsim {

// A smooth body: center and Q (zero for a point).
struct SmoothBody {
  Vec3 center;
  Mat3 q;
};

// An ellipsoid with the given world center, rotation and semi-axes.
SmoothBody EllipsoidBody(const Vec3& center, const Mat3& rot, const Vec3& semi_axes);
// A point.
SmoothBody PointBody(const Vec3& point);

enum class SmoothPairOutcome {
  kApart,    // certified: distance, normal and witness are exact to rounding
  kBeyond,   // certified: the distance exceeds the caller's `beyond`
  kUnknown,  // no certificate (overlap, or Newton did not converge): use a general method
};

struct SmoothPairDistance {
  SmoothPairOutcome outcome = SmoothPairOutcome::kUnknown;
  double distance = 0;          // kApart
  Vec3 normal = Vec3::UnitZ();  // kApart: unit, from a toward b
  Vec3 point_a = Vec3::Zero();  // kApart: the closest point of a (its support along normal)
  int iterations = 0;
};

inline constexpr int kSmoothPairMaxIterations = 20;

// Starts from the unit direction `start` (from a toward b). `scale` (m) sets the tolerance on the
// tangential gradient (kNormalGradientTolerance * scale, as RefineNormal).
SmoothPairDistance SmoothPairDistanceOf(const SmoothBody& a, const SmoothBody& b, const Vec3& start,
                                        double beyond, double scale);

}  // namespace alsim
