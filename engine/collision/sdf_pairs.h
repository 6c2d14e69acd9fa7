// Narrowphase pairs of SDF geoms (GeomType::kSdf) and concave meshes (Model::geom_concave), the
// SubADMM paper's collision of dishes and of a nut on a bolt (digest section 8; docs/engine.md,
// "SDF geoms and concave meshes").
//
// A field F (an SDF geom's: SdfRevolution or SdfThread by its SdfKind; or a sphere's or capsule's
// distance |p - c| - r, dist(p, segment) - r)
// meets the other geom's surface through the surface's triangles: for each triangle near F (its
// box overlaps F's box grown by the margin, and F(centroid) - L circumradius < margin, a bound
// for F L-Lipschitz: L = 1 for distances, sec alpha(r) for the thread), Frank-Wolfe minimizes F
// over the triangle from its lowest vertex: at x with gradient g the linear oracle picks the vertex
// s minimizing g.s, and the loop ends when the duality gap g.(x - s) falls below kFrankWolfeGap or
// after kFrankWolfeIterations. Each iteration steps first along the projected gradient (g's part in
// the triangle's plane, negated, up to the triangle's edge), which reaches an interior minimum
// where Frank-Wolfe's steps toward vertices zig-zag, else toward s; a step x + gamma D takes gamma
// from the secant of the directional derivative between x and x + D (1 where it still descends
// there), halved until F decreases. A minimum x with F(x) < margin is a contact: dist = F(x),
// normal n = the field's analytic gradient at x made unit (the thread's is not), pos = x - n F(x) /
// 2 (midway between x and F's surface); so is each of the triangle's vertices with F < margin,
// since where F is flat over a face (a box on a floor, conforming dishes) the minimum is any of
// them and the contact area needs them all. Whose triangles:
//   - SDF vs SDF: one field over the other's triangulation (Model::sdf_face): of the two
//     directions, the field of the geom with the larger bounding radius over the smaller one's
//     triangles (ties: a's field over b's), whose chords sag less off the surface, since chords
//     on a concave side lie outside the solid and read as deeper than it is;
//   - SDF vs mesh: the SDF over the mesh's triangles (its own if concave, else its hull's);
//   - SDF vs box: over the box's 12 face triangles;
//   - SDF vs capsule: over its axis in 8 equal pieces, F - r (a triangle with a repeated vertex);
//   - SDF vs sphere: the closed form at the center, F(c) - r;
//   - SDF vs plane: the SDF's triangulation vertices below the plane's margin;
//   - SDF vs cylinder or ellipsoid: Frank-Wolfe over the convex solid, its support point as the
//     oracle, one contact;
//   - concave mesh vs sphere, capsule, box, cylinder or ellipsoid: the primitive's field over the
//     mesh's triangles, in the primitive's frame: a sphere's and capsule's distances; a box's
//     signed distance |max(|p| - h, 0)| outside, max_i(|p_i| - h_i) inside (BoxField); a
//     cylinder's the same in (rho - r, |z| - h) (CylinderField); an ellipsoid has no closed-form
//     distance, so its field is the first-order one f = (k0 - 1) / |grad k0| = k0 (k0 - 1) / k1,
//     k0 = |p / a|, k1 = |p / a^2| (EllipsoidField): 0 on the surface with the unit normal as its
//     gradient there, so its error is second order in the distance, and exact on the principal
//     axes. It is chosen over Frank-Wolfe with the support point (SdfOverConvex) because that
//     gives one contact per pair where a concave mesh needs one per triangle. Its cull uses
//     L = 2 + (a_max / a_min)^2, a bound of |grad f| where k0 >= 1 (the first term of grad f has
//     norm (2 k0 - 1) / k0 < 2, the second at most (k0 / k1)^2 / a_min^2 <= (a_max / a_min)^2);
//     outside suffices, as a segment from an outer centroid into the solid first meets f = 0;
//   - and, since a field's minimum over a flat face larger than the primitive is any point of the
//     footprint (a box resting flat on a tray's floor), the primitive's own surface points against
//     the mesh's triangles (PointsOverTriangles): a box's 8 corners, a cylinder's two rim circles
//     at kCylinderRimPoints each. A point p is a contact of a triangle whose plane it is within
//     the margin of, on the side of the normal n oriented toward the primitive's center (a shell's
//     winding does not say which side is solid, and a thin wall's far face then reads as farther,
//     not as deep), with p's projection inside the triangle and s = n.(p - v0) in
//     [-depth, margin): dist s, normal n (mesh toward primitive), pos p - n s / 2. depth is the
//     primitive's smallest half-size (box) or min(r, h) (cylinder): a resting contact is far
//     shallower, and a point deeper below a face than the primitive's inscribed radius lies
//     beyond that face's extent through a fold of the mesh, not against it;
//   - concave mesh vs plane: its hull (CollidePlaneMesh), exact since the lowest points are hull
//     vertices; concave mesh vs mesh: both as convex hulls (CollideConvex), as before: a mesh has
//     no field, so a concave mesh holding another mesh is not yet resolved.
// Conforming surfaces give one contact per triangle, hundreds: ReduceContacts keeps at most
// kMaxContactsPerSdfPair. Deterministic (fixed orders, no threads), allocation-free: raw contacts
// live in a fixed array on the stack, reduced whenever it fills, each reduction of a pair starting
// from the spacing the one before it needed.
#pragma once

#include "engine/collision/geom_shape.h"
#include "engine/data/contact.h"

namespace alsim {

inline constexpr int kFrankWolfeIterations = 16;
inline constexpr double kFrankWolfeGap = 1e-10;  // m
// Raw contacts held before a reduction (56 bytes each on the stack).
inline constexpr int kSdfRawContacts = 512;
// Surface points sampled on each rim circle of a cylinder against a concave mesh.
inline constexpr int kCylinderRimPoints = 8;

// True for a mesh made by ShapeOfGeom from a geom with Model::geom_concave.
inline bool IsConcave(const GeomShape& s) {
  return s.type == GeomType::kMesh && s.model != nullptr && s.model->geom_concave[s.geom] != 0;
}

// True when the pair goes to CollideSdfPair: an SDF geom on either side, or a concave mesh
// against a sphere, capsule, box, cylinder or ellipsoid.
inline bool IsSdfPair(const GeomShape& a, const GeomShape& b) {
  if (a.type == GeomType::kSdf || b.type == GeomType::kSdf) return true;
  const auto primitive = [](GeomType t) {
    return t == GeomType::kSphere || t == GeomType::kCapsule || t == GeomType::kBox ||
           t == GeomType::kCylinder || t == GeomType::kEllipsoid;
  };
  return (primitive(b.type) && IsConcave(a)) || (primitive(a.type) && IsConcave(b));
}

// Contacts of such a pair under narrowphase.h's contract, up to kMaxContactsPerSdfPair of them;
// a and b in either order, normals from a toward b.
int CollideSdfPair(const GeomShape& a, const GeomShape& b, double margin, Contact* out);

// The primitives' fields against concave meshes, in the geom's frame: the value and its gradient
// (header comment). BoxField: half-sizes h, the exact signed distance; where several faces are
// nearest inside, the lowest axis's normal. CylinderField: radius r, half-length h along z,
// exact; on the axis the radial direction is +x. EllipsoidField: semi-axes a, the first-order
// distance; at the center, -a_min with the smallest axis's direction.
double BoxField(const Vec3& h, const Vec3& p, Vec3* gradient);
double CylinderField(double r, double h, const Vec3& p, Vec3* gradient);
double EllipsoidField(const Vec3& a, const Vec3& p, Vec3* gradient);

// One contact before reduction, world frame; the normal from geom a toward geom b.
struct RawContact {
  Vec3 pos;
  Vec3 normal;
  double dist;
};

// Reduces raw[0, n) (n <= kSdfRawContacts) in place to at most `limit` (at most
// kMaxContactsPerSdfPair) contacts and returns how many: the contacts in
// order of depth (dist, then index), each kept unless a kept one lies within a spacing rho of it
// with normals within 45 degrees (the kept one is deeper, so the deepest is always kept, first);
// rho starts at `spacing` and doubles until at most `limit` remain (after 60 doublings the
// deepest `limit` are kept). Deterministic: a function of the input's order and values alone.
// *final_spacing, when given, receives the rho of the pass that kept them.
int ReduceContacts(RawContact* raw, int n, int limit, double spacing,
                   double* final_spacing = nullptr);

}  // namespace alsim
