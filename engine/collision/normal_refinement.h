// The contact normal of two convex sets as the direction of least overlap.
//
// Along a unit direction n (from A toward B) the sets overlap by
//   overlap(n) = h_A(n) + h_B(-n),   h_X(d) = max over x in X of d.x (the support function).
// By the separating axis theorem the smallest overlap over all n is minus the distance when the
// sets are apart and the penetration depth (minimum translation) when they intersect, so the
// minimiser is the geometric contact normal in both cases, and overlap(n) of any n bounds the
// answer from the safe side. Its gradient on the unit sphere is the part of
// S_A(n) - S_B(-n) (the support points) perpendicular to n: at the minimum the two support points
// lie on one line along n.
//
// RefineNormal starts from a given direction (MPR's or GJK's) and runs Newton's method on that
// gradient (finite-difference Jacobian) over a few families of directions where it is smooth:
//   - all directions (a point or strictly convex set against anything with a unique support),
//   - the directions perpendicular to each body's axis (a segment's interior, a cylinder's
//     side or a box edge touching: the support along the axis is a whole segment, the gradient
//     there is not),
//   - the common perpendicular of two axes (crossed segments, cylinder sides and box edges),
//   - directions the caller knows (face normals, the surface normal of a smooth shape at MPR's
//     point): the answer where a face or a kink of the support decides it.
// It keeps the candidate of least overlap if that is below the start's, preferring a converged
// Newton candidate within rounding of it (a smooth minimum is flat to second order); a contact
// through edges of polytopes, where nothing converges, may keep its start.
// Deterministic, allocation-free.
#pragma once

#include "engine/collision/gjk_distance.h"

namespace alsim {

// A convex body: its support mapping and the directions along which its support can be a whole
// segment: the axis of a capsule, segment or cylinder, the edge directions of a box.
struct AxialBody {
  SupportMapping mapping;
  int axis_count = 0;
  Vec3 axes[3];  // unit
};

inline constexpr int kNormalNewtonIterations = 30;
// Newton stops once the gradient is below this times `scale` (metres): the normal is then exact
// to about this relative accuracy.
inline constexpr double kNormalGradientTolerance = 1e-13;

struct RefinedNormal {
  Vec3 normal;     // unit, from a toward b
  double overlap;  // overlap(normal); -overlap is the signed distance along it
  bool refined;    // false: the start direction was kept
};

// The best normal found from `start` (unit) and the unit directions extra[0..extra_count);
// `scale` is the size of the two bodies (m).
RefinedNormal RefineNormal(const AxialBody& a, const AxialBody& b, const Vec3& start, double scale,
                           const Vec3* extra = nullptr, int extra_count = 0);

// overlap(n) of the two bodies along the unit direction n.
double Overlap(const AxialBody& a, const AxialBody& b, const Vec3& n);

}  // namespace alsim
