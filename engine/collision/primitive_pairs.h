// Closed-form narrowphase functions for pairs of primitive geoms (and plane-mesh).
//
// Every function follows the contract of narrowphase.h: a's type <= b's type in GeomType order,
// normals point from a toward b, only points with dist < margin are written (at most
// kMaxContactsPerPair), pos is the midpoint between the two surfaces, dist < 0 is penetration.
// A plane is infinite; its normal is its local z axis and it passes through its pos.
#pragma once

#include "engine/collision/narrowphase.h"

namespace alsim {

// ---- plane (a) against a convex geom (b)

// A cylinder whose lower disk's rim heights above the plane differ by less than this (m) stands on
// the disk. The direction of its tilt, which picks the deepest rim point, is then noise that can
// turn from one step to the next (on humanoid100 an upright cylinder's four points turned by
// 90-150 degrees every step), and contacts that move lose their warm start (matched by position,
// ConstraintOptions::warm_start_radius). CollidePlaneCylinder then puts its four points on the
// cylinder's own x and y axes. The deepest rim point is at most 45 degrees from one of them, so
// the deepest contact is at most (1 - cos 45) kFlatDiskSpread / 2 = 15 um shallower than the
// cylinder's true depth.
inline constexpr double kFlatDiskSpread = 1e-4;

int CollidePlaneSphere(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
// Both end caps: 2 points when the capsule lies on the plane.
int CollidePlaneCapsule(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
int CollidePlaneEllipsoid(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
// The deepest rim point of each end disk; 4 rim points when standing on an end disk (on the
// cylinder's x and y axes when it stands within kFlatDiskSpread).
int CollidePlaneCylinder(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
// Every corner within the margin: 4 for a box resting on a face, 2 on an edge, 1 on a corner.
int CollidePlaneBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
// Hull vertices within the margin: the deepest first, then at most 3 extremes of the patch.
int CollidePlaneMesh(const GeomShape& a, const GeomShape& b, double margin, Contact* out);

// ---- spheres and capsules
int CollideSphereSphere(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
int CollideSphereCapsule(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
int CollideSphereBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
// The closest points; a second point at the far end of the overlap when the axes are parallel.
int CollideCapsuleCapsule(const GeomShape& a, const GeomShape& b, double margin, Contact* out);
// The closest points; a second point when the capsule lies flat on a face of the box.
int CollideCapsuleBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out);

// ---- boxes
// Separating axes (3 + 3 face normals, 9 edge cross products); a face axis clips the incident face
// against the reference face (up to 8 points), an edge axis gives 1 point.
int CollideBoxBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out);

}  // namespace alsim
