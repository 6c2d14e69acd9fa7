// Signed distances from points to geoms and triangles: the contact geometry of deformables'
// vertices against rigid geoms and against other surfaces (issue 48; Macklin et al. 2019, seed 002,
// Sec 3.3: C_n = n^T (a - b) - d with the normal fixed from the step's start).
//
// PointGeomDistance: the signed distance of a world point p to a geom's surface (negative inside),
// the unit outward normal n at the closest surface point s, and s, so that p = s + distance n
// (exactly, away from the medial axis; on it, one of the equally near points). Per type, in the
// geom frame (q = R^T (p - pos)):
//   plane      d = q_z (infinite; its normal is local z)
//   sphere     d = |q| - r, n = q / |q| (at the centre: n = local z)
//   capsule    the sphere about the nearest point of the segment z in [-h, h]
//   cylinder   radial d_r = |q_xy| - r and axial d_z = |q_z| - h: outside, the distance to the
//              nearest of the side, the caps and their rims; inside, the larger of d_r and d_z
//   box        per axis e_i = |q_i| - h_i: outside |max(e, 0)|, inside max_i e_i (the nearest face)
//   mesh       its convex hull (what alsim collides but for concave meshes): inside, the largest
//              signed distance to a face plane (exact for a convex polytope); outside, the nearest
//              of the hull's triangles (ClosestPointOnTriangle)
// Ellipsoids, height fields and SDF geoms return false (not yet).
//
// ClosestPointOnTriangle: the point of triangle (a, b, c) nearest p, with its barycentric
// weights (u, v, w), u a + v b + w c, each >= 0, summing to 1: Ericson's Voronoi-region walk
// (Real-Time Collision Detection, Sec 5.1.5), exact in the regions' interiors.
//
// ClosestSegmentTriangle: the nearest points of segment p0 p1 and a triangle, for a sphere (a
// point) or a capsule (its axis) against a deformable's surface triangle. A segment that crosses
// the triangle's interior is at distance 0 at the crossing; otherwise the nearest pair has an
// endpoint of the segment or a point of an edge of the triangle, so the answer is the nearest of
// the two endpoints against the triangle and the segment against the three edges
// (ClosestSegmentParams).
#pragma once

#include "engine/collision/geom_shape.h"
#include "engine/math/types.h"

namespace alsim {

struct PointDistance {
  double distance = 0;  // m, negative inside
  Vec3 normal = Vec3::UnitZ();
  Vec3 surface = Vec3::Zero();  // the closest point of the surface, world
};

bool PointGeomDistance(const GeomShape& shape, const Vec3& point, PointDistance* out);

Vec3 ClosestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                            Vec3* barycentric);

// The distance, the segment's parameter t in [0, 1] (p0 + t (p1 - p0)) and the triangle point's
// barycentric weights.
double ClosestSegmentTriangle(const Vec3& p0, const Vec3& p1, const Vec3& a, const Vec3& b,
                              const Vec3& c, double* t, Vec3* barycentric);

}  // namespace alsim
