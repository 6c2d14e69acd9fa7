// The collision stage: contact points between geoms for the contact solvers.
#pragma once

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// Fills d.contact with this step's contact points, sorted by (geom1, geom2) with geom1 < geom2
// and, within a pair, in the narrowphase's order: broadphase, then the pair function of each
// candidate (in parallel once their CollideShapesCost adds up; the result does not depend on the
// thread count),
// then each contact's frame (normal, tangent1, tangent2) and combined friction. Needs Kinematics().
// Allocates only when more candidates or contacts than ever before appear.
// With `boxes_ready` the geoms' bounding boxes are taken as they are (see Broadphase).
void Collision(const Model& m, Data& d, bool boxes_ready = false);

// Speculative contacts (as in Jolt and Box2D): grows the margin of each geom of bodies
// [body_begin, body_end) (Step: tree by tree) by how far its surface can move within `horizon`
// seconds at the current velocities (|v at the geom center| + |omega| times its bounding radius)
// plus a constant `slop` (m), into d.geom_speculative_margin, so that Collision() also reports
// pairs that may touch before the end of the step and the solver can stop them at the surface (a
// gap phi >= 0 has the bias phi / h) instead of after they penetrate. Without this call the margins
// stay zero (the scene's own margins only, as MuJoCo). Needs Velocity().
void SpeculativeMarginsOfBodies(const Model& m, Data& d, double horizon, double slop,
                                int body_begin, int body_end);

// Friction of a contact between two geoms: the higher-priority geom's, else the larger of the
// two (MuJoCo's rule), or the explicit pair's.
double ContactFriction(const Model& m, int geom1, int geom2, int explicit_pair);

// A contact's dimension and friction coefficients, MuJoCo's mixing rules (mj_contactParam): an
// explicit pair's own condim and friction; else, when the geoms' priorities differ, the
// higher-priority geom's condim and friction; else condim = max of the two and each friction
// coefficient (sliding, torsional, rolling) the larger of the two. dim is 6 for condim 6, 4 for
// condim 4, else 3 (condim 1: friction 0, frictionless as in MuJoCo); the torsional coefficient is
// kept for dim >= 4 and the rolling one for dim 6, else 0.
struct ContactParameters {
  double friction = 0;
  double friction_torsion = 0;
  double friction_rolling = 0;
  int dim = 3;
};
ContactParameters ContactParametersOfPair(const Model& m, int geom1, int geom2, int explicit_pair);

// An orthonormal right-handed frame with `normal` as its first column; the tangents depend only
// on the normal.
Mat3 ContactFrame(const Vec3& normal);

}  // namespace alsim
