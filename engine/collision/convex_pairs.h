// General convex narrowphase: any two of sphere, capsule, ellipsoid, cylinder, box and mesh (a
// mesh collides as the convex hull of its vertices).
//
// Sphere and capsule are a point and a segment (their cores) grown by a radius. GJK first
// measures the distance between the cores, or the whole shapes for other types
// (gjk_distance.h): when they are apart, the contact is exact: the normal joins the closest
// points and dist is the core distance minus the radii, so a sphere or capsule overlapping any
// shape by less than its radius is exact too. On curved shapes (ellipsoid, cylinder) GJK
// converges only linearly, and the normal is polished to rounding by RefineNormal
// (normal_refinement.h), the direction of least overlap. Ellipsoids and cylinders that are apart
// skip GJK's slow tail: smooth_pair_distance.h certifies their distance and normal (end faces,
// sides, or a few exact Newton steps). Sphere and capsule cores apart from them get the same
// certificate after GJK, in place of RefineNormal's finite differences.
//
// Only cores or shapes that touch fall back to libccd's MPR (Minkowski Portal Refinement) on the
// shapes inflated by margin/2 (MuJoCo 2.2.2's settings). MPR's direction is where its portal
// converged, not the least overlap; for pairs with a curved shape it seeds RefineNormal, which
// also tries the face axes and the smooth shape's surface normal at MPR's point, and dist is the
// overlap along the chosen normal, measured from the two support points.
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
