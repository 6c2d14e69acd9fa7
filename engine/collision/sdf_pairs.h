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
//   - concave mesh vs sphere or capsule: their fields over the mesh's triangles. A concave mesh
//     against a plane collides by its hull (the lowest points are hull vertices), against the
//     other types as its convex hull (CollideConvex).
// Conforming surfaces give one contact per triangle, hundreds: ReduceContacts keeps at most
// kMaxContactsPerSdfPair. Deterministic (fixed orders, no threads), allocation-free: raw contacts
// live in a fixed array on the stack, reduced whenever it fills.
#pragma once

#include "engine/collision/geom_shape.h"
#include "engine/data/contact.h"

namespace alsim {

inline constexpr int kFrankWolfeIterations = 16;
inline constexpr double kFrankWolfeGap = 1e-10;  // m
// Raw contacts held before a reduction (56 bytes each on the stack).
inline constexpr int kSdfRawContacts = 512;

// True for a mesh made by ShapeOfGeom from a geom with Model::geom_concave.
inline bool IsConcave(const GeomShape& s) {
  return s.type == GeomType::kMesh && s.model != nullptr && s.model->geom_concave[s.geom] != 0;
}

// True when the pair goes to CollideSdfPair: an SDF geom on either side, or a concave mesh
// against a sphere or capsule.
inline bool IsSdfPair(const GeomShape& a, const GeomShape& b) {
  if (a.type == GeomType::kSdf || b.type == GeomType::kSdf) return true;
  const auto primitive = [](GeomType t) {
    return t == GeomType::kSphere || t == GeomType::kCapsule;
  };
  return (primitive(b.type) && IsConcave(a)) || (primitive(a.type) && IsConcave(b));
}

// Contacts of such a pair under narrowphase.h's contract, up to kMaxContactsPerSdfPair of them;
// a and b in either order, normals from a toward b.
int CollideSdfPair(const GeomShape& a, const GeomShape& b, double margin, Contact* out);

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
int ReduceContacts(RawContact* raw, int n, int limit, double spacing);

}  // namespace alsim
