// The analytic signed distance field of revolution of the SubADMM/CANAL paper's dishes, bowls and
// bottles (Appendix B, eq. 45; digest seed-004 section 8.2).
// The field of GeomType::kSdf geoms of kind SdfKind::kRevolution (engine/model/model.h; scene
// text alsim:sdf:GEOM, docs/engine.md); its pairs are in sdf_pairs.h. Pure geometry of math/
// alone, so that the importer (engine/model/) may use it (tests/unit/engine_layers_test.py).
//
// The shape, in its own frame. A profile O-A-B in the (r, z) half-plane, r >= 0 the distance from
// the local z axis, is swept about z into a surface S (a disk or cone, then a conical or
// cylindrical wall), and the solid is every point within the padding d of S:
//   SDF_3d(p) = SDF_2d(q),  q = (sqrt(p_x^2 + p_y^2), p_z),
//   SDF_2d(q) = min(dist(q, OA), dist(q, AB)) - d,                                    (45)
// OA and AB the closed segments. O = (0, 0) is the local origin, on the axis: the bottom's
// mid-surface is centered there. For a point p at angle theta about z, the point of S at the same
// angle is the nearest of its circle (|p - s|^2 = (r - s_r)^2 + (p_z - s_z)^2 + 2 r s_r (1 -
// cos(dtheta)) with r, s_r >= 0), so dist(p, S) is the planar distance of q to the profile: outside
// the solid and on its surface eq. (45) is the exact Euclidean signed distance. Inside it is
// dist(p, S) - d: minus the depth wherever the paddings of different parts of S do not overlap,
// and an underestimate of the depth where they do (near the concave corner at A inside a dish,
// near the axis where a conical bottom's padding meets itself). It is negative exactly inside and
// 1-Lipschitz everywhere, as Frank-Wolfe's SDF minimization needs.
//
// The gradient, analytic: g = the unit planar direction from the nearest profile point to q, and
//   grad SDF_3d(p) = (g_r p_x / r, g_r p_y / r, g_z).
// It is unit and continuous except on the medial set, where the field has a kink and this returns
// a deterministic one-sided value:
//   - where the two segments are equally near through different points (the bisector of the
//     corner at A, inside the dish): OA's (ties go to OA, the bottom);
//   - on the profile itself (dist = 0, the mid-surface, SDF = -d): the segment's unit left normal
//     (-e_z, e_r) / |e| for e its direction O->A or A->B (OA wins ties), which for a dish points
//     into its cavity; (0, 1) for a segment of length zero;
//   - on the axis r = 0: the radial unit is taken as the local +x axis, so the gradient is
//     (g_r, 0, g_z), still unit. Where the nearest point is O (or another profile point on the
//     axis), g_r = 0 and the field is smooth there; where it lies off the axis (above a dish's
//     bottom, nearer its rim), every point of a circle is nearest and the field has a cone-shaped
//     kink: (g_r, 0, g_z) is the limit of the gradient from the +x side. (The digest's
//     (0, 0, g_z) there would not be unit.)
// Frank-Wolfe minimizes the SDF over the other dish's triangles with this gradient, so no
// closest-point query is provided (outside, p - SDF(p) grad SDF(p) is the nearest surface point).
#pragma once

#include <vector>

#include <Eigen/Core>

#include "engine/math/types.h"

namespace alsim {

// The solid's box in its own frame.
struct SdfBox {
  Vec3 lo = Vec3::Zero();
  Vec3 hi = Vec3::Zero();
};

// A solid of revolution about the local z axis by eq. (45). Lengths in meters. The profile points
// are (r, z): radius from the axis, height along it, O = (0, 0) implied.
//   - a: the end of the bottom OA. A = (R, 0) gives a flat bottom disk of radius R (a bowl's foot,
//     a plate's floor); a_z != 0 gives a conical bottom; A = O gives no bottom (a conical funnel).
//   - b: the rim. The wall AB is a cylinder for b_r = a_r (the paper's pot, a bottle), a flaring
//     cone for b_r > a_r (a bowl, a plate's shallow rim), a cone narrowing toward its mouth for
//     b_r < a_r (a jar, a bottle's shoulder); b_z > a_z opens the dish upward (+z).
//   - padding: d, half the wall's thickness; the solid is the profile's surface grown by d on both
//     sides, so the bottom's underside lies at z = -d (for a_z = 0) and the rim is a rounded torus
//     of tube radius d about the circle of B.
// The digest's example dishes (8.2, our choice, the paper gives none): bowl a = (0.04, 0),
// b = (0.08, 0.06), d = 0.003; plate a = (0.08, 0), b = (0.12, 0.02), d = 0.003; pot a = (0.10, 0),
// b = (0.10, 0.12), d = 0.004.
struct SdfRevolution {
  Eigen::Vector2d a = Eigen::Vector2d::Zero();
  Eigen::Vector2d b = Eigen::Vector2d::Zero();
  double padding = 0;

  // Finite a and b with a_r, b_r >= 0 and a finite padding > 0. The queries below assume it.
  bool IsValid() const;

  // SDF_3d(p) of eq. (45), p in the shape's frame: negative inside the padded solid, zero on its
  // surface, the exact distance to it outside.
  double Distance(const Vec3& p) const;
  // The same value, bit for bit, and its gradient (the header's comment: unit, with the documented
  // one-sided value on the medial set).
  double DistanceAndGradient(const Vec3& p, Vec3* gradient) const;

  // The radius about the local origin of the smallest ball centered there that holds the solid
  // (Model::geom_rbound's convention): max(|A|, |B|) + d, reached at the farther endpoint.
  double BoundingRadius() const;
  // The smallest local box that holds the solid: the profile's extent in r and z grown by d, r
  // spanning both signs of x and y (a segment's extremes lie at its endpoints).
  SdfBox LocalBox() const;

  // Parameters in Model::sdf_param's order for SdfKind::kRevolution: a_r a_z b_r b_z padding.
  static constexpr int kParameterCount = 5;
  static SdfRevolution FromParameters(const double* parameters);

  // A triangulation of the solid's surface, in its frame, appended to `vertices` and `faces`
  // (indices local to the appended vertices): the boundary curve of the padded profile in the
  // half-plane r >= 0 (the profile O-A-B offset by d on both sides, with round caps at its ends
  // and round joins at A on the convex side, clipped where it enters the solid or crosses the
  // axis), swept about z in `segments` equal steps. The curve is sampled every 2 pi R / segments
  // along its straight parts (R the solid's radius, so triangles are near equilateral at the rim)
  // and every pi / 12 rad along its arcs; every vertex lies on the surface (|Distance| at
  // rounding), so a triangle's points lie within the chord's sag of it. Curve points on the axis
  // become one pole vertex each.
  void Triangulate(int segments, std::vector<Vec3>* vertices,
                   std::vector<Eigen::Vector3i>* faces) const;
};

}  // namespace alsim
