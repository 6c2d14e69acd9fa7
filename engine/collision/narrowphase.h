// Narrowphase: contact points between two geoms.
//
// Every pair function has the same contract:
//   int Collide<A><B>(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
// It writes at most kMaxContactsPerPair contacts (kMaxContactsPerSdfPair for a pair with an SDF
// geom or a concave mesh, sdf_pairs.h) whose dist < margin (dist may be positive, up to
// the margin), each with dist, pos (midpoint between the surfaces) and normal (unit, from a toward
// b), and returns how many it wrote. It leaves geom1/geom2/friction/frame to the driver. Flat
// contacts (box on plane, box on box, cylinder on plane, capsule lying on a plane, flat mesh faces)
// give several points spanning the contact area, so stacks and resting objects are stable.
// Deterministic: the same input gives the same points in the same order. Allocates nothing.
#pragma once

#include "engine/collision/geom_shape.h"
#include "engine/data/contact.h"
#include "engine/data/data.h"

namespace alsim {

// The pair function for the two geoms' types, called with the geoms in either order: contacts
// come back with normals from `a` toward `b`. Returns 0 for pairs that never collide (plane-plane,
// height fields).
int CollideShapes(const GeomShape& a, const GeomShape& b, double margin, Contact* out);

// Relative cost of one CollideShapes call for two geom types, for deciding whether a stage's
// pairs are worth parallel tasks: 1 for a closed form, kGeneralConvexPairCost for the general
// convex routine (GJK and MPR, far dearer; the times are in docs/benchmarks-history.md, "Pair
// costs decide"), 0 where nothing collides.
inline constexpr int kGeneralConvexPairCost = 25;
// An SDF pair: Frank-Wolfe over up to thousands of triangles, dearer still.
inline constexpr int kSdfPairCost = 4 * kGeneralConvexPairCost;
int CollideShapesCost(GeomType a, GeomType b);

// The GeomShape of geom g at its current pose (needs Kinematics()).
GeomShape ShapeOfGeom(const Model& m, const Data& d, int g);

}  // namespace alsim
