// General convex narrowphase: any two of sphere, capsule, ellipsoid, cylinder, box and mesh (a
// mesh collides as the convex hull of its vertices).
//
// The deepest point comes from libccd's MPR (Minkowski Portal Refinement) on support functions of
// the two shapes, each inflated by margin/2, so one run also finds pairs that are separated by
// less than the margin: for convex A and B, the penetration depth of (A + ball(m/2)) and
// (B + ball(m/2)) is exactly m - dist(A, B). These are the settings and the inflation of MuJoCo
// 2.2.2's convex collider, which therefore agrees to MPR's tolerance (tests/collision).
//
// Flat contact gives several points: when the normal is a face normal of one shape and the other
// shape's support feature along the normal is also a face (box and mesh faces, cylinder end
// disks), the two faces are clipped against each other in the contact plane and each vertex of
// the overlap becomes a point with its own depth.
#pragma once

#include "engine/collision/narrowphase.h"

namespace alsim {

// MPR settings: MuJoCo 2.2.2's defaults (mjOption.mpr_tolerance, mpr_iterations).
inline constexpr double kMprTolerance = 1e-6;
inline constexpr int kMprMaxIterations = 50;

// Contacts between two convex geoms under the narrowphase.h contract (any type order; normals
// from a toward b). Requires margin >= 0. Exactly antisymmetric: swapping a and b flips the
// normals and changes nothing else (the pair is solved in a canonical order).
int CollideConvex(const GeomShape& a, const GeomShape& b, double margin, Contact* out);

// The point of `shape` (world frame) farthest along `dir` (any length; ties resolve to a fixed
// choice). A mesh's support is its farthest vertex.
Vec3 SupportPoint(const GeomShape& shape, const Vec3& dir);

}  // namespace alsim
