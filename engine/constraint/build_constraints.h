// Constraint assembly (Algorithm 2, line 5): this step's contacts, equality constraints (connect,
// weld), joint limits, PD servos (on joints and fixed tendons), dry joint friction (frictionloss)
// and fixed tendon limits as
// the rows and slack blocks of a ConstraintSet, with their biases e_i and warm-start impulses.
#pragma once

#include "engine/data/constraint_set.h"
#include "engine/data/data.h"
#include "engine/math/spatial.h"
#include "engine/model/model.h"

namespace alsim {

// The contact model the rows are built for, chosen by the solver (SolverContactModel):
//   kHard    hard contact, limits and equalities with alsim's biases (ConstraintOptions below):
//            SubADMM, CANAL, PGS and the ablations;
//   kMujoco  MuJoCo's soft model (engine/constraint/soft_rows.h): each row's regularization and
//            reference from the scene's solref and solimp, rows only where MuJoCo has them
//            (contacts closer than margin - gap, limits within their margin), MuJoCo's contact
//            frames; no corrections or split steps (the reference removes errors).
//   kSap     SAP's compliant model (engine/solver/sap): the hard model's rows (speculative
//            contacts included, which SAP's vhat_n = -phi0 / (dt + tau_d) leaves inactive until
//            they close), each bias holding the row's signed distance or error phi0 (contacts,
//            limits, equalities; 0 for friction rows), from which the SAP solver takes its
//            regularization and vhat; no corrections and no split steps.
enum class ConstraintModel { kHard, kMujoco, kSap };

// Choices the paper leaves open ([OURS] in the digest); defaults are what alsim's tests and
// benchmarks use.
struct ConstraintOptions {
  // Fraction of a penetration (or limit violation) removed per step: e_n = erp * phi / h for
  // phi < 0, while a gap phi >= 0 gives e_n = phi / h (the surfaces may just meet by the end of
  // the step). 0.2 removes a 1 mm penetration to 0.1 mm in 10 steps without adding visible energy:
  // the push-out speed erp * phi / h stays below 0.05 m/s for 1 mm at 240 Hz.
  double error_reduction = 0.2;
  // Recovery from deep errors (an overlapped start, a joint started past its limit, a fast impact
  // that went deep): the *correction* erp * phi / h of a penetration or violation (an equality's
  // erp * error / h, of either sign) is capped at max_correction_speed (m/s: contacts, slide
  // limits, connect/weld positions) or max_correction_angular_speed (rad/s: hinge limits, weld
  // rotations), so one step moves an error by at most cap h. A correction kept as a real velocity
  // throws the body: it leaves the surface at that speed and rises v^2 / (2 g) (before the cap, a
  // box started 5 cm into the floor at h = 1 ms left at 10 m/s). So an island in which some
  // correction exceeds kept_correction_speed (or kept_correction_angular_speed) splits, as
  // physics engines' split impulse does: its positions move by the solve with the corrections,
  // and its velocities come from a second solve without them (penetrating contacts then only stop
  // approaching). Below the kept speed an island solves once and the correction stays in the
  // velocity, as erp's Baumgarte term: at 0.1 m/s a body rises at most 0.5 mm. A gap's phi / h
  // (speculative contacts) is not a correction and is never capped.
  double max_correction_speed = 1.0;
  double max_correction_angular_speed = 4.0;
  double kept_correction_speed = 0.1;
  double kept_correction_angular_speed = 0.4;
  // Speculative contacts (SpeculativeMarginsOfBodies in engine/collision/collision.h): pairs that
  // could touch within one step at their current speeds, or are within `contact_slop` (m), become
  // contact rows too. The slop keeps resting contacts from flickering in and out as round-off
  // lifts them by micrometres; their bias phi / h makes them inactive until they close.
  bool speculative_contacts = true;
  double contact_slop = 0.001;
  // A joint (or fixed tendon) limit row is added once the joint (the tendon's length) is within
  // this distance of a bound (rad or m) or would cross it within the step at its current speed.
  double limit_margin = 0.01;
  // A contact inherits the impulse of last step's contact between the same geoms nearest to it,
  // if that one was within this distance (m).
  double warm_start_radius = 0.02;
  // Position and velocity servos (joint and fixed tendon actuators with a stiffness or damping
  // bias) are solved as soft constraints, eq. (4), i.e. implicitly, instead of as explicit forces.
  bool implicit_servos = true;
};

// True for an actuator that BuildConstraints turns into a soft constraint row.
bool IsImplicitServo(const Model& m, int actuator, const ConstraintOptions& options);

// The errors of equality constraint `eq` at the current kinematics, both zero when it holds:
// position = p1 - p2, the world points that must coincide (connect: the anchor on body1 and on
// body2; weld: body2's anchor and where body1 wants it, relpos); rotation (weld only, else zero)
// = the rotation vector, in world axes, that takes body2's orientation to the one body1 wants
// (body1's times relquat). Their rates are the velocity of p1's point on body1 minus p2's on body2
// and omega1 - omega2: the equality rows' J v. (MuJoCo 2.2.2 measures the same position error;
// its rotation error is the sine half-angle form, in body2's axes.)
struct EqualityError {
  Vec3 position = Vec3::Zero();
  Vec3 rotation = Vec3::Zero();
  Vec3 point1 = Vec3::Zero();  // p1, world
  Vec3 point2 = Vec3::Zero();  // p2, world
};
EqualityError EqualityErrors(const Model& m, const Data& d, int eq);

// The body-space map of a block whose rows measure the velocity of the body-fixed point at
// `lever` from the body's reference point along the rows of `rows` (a contact's frame transposed,
// or the identity): sign * rows [-[lever]x  I] (eq. 44 in alsim's (angular, linear) order).
inline void SetPointBlockMap(const Mat3& rows, const Vec3& lever, double sign,
                             ConstraintBlock& block) {
  block.map.leftCols<3>() = -sign * rows * Skew(lever);
  block.map.rightCols<3>() = sign * rows;
}

// Saves the current constraints' impulses as the warm start for the next BuildConstraints.
void SaveWarmStart(Data& d);

// Fills d.constraints from d.contact (Collision()), the joint positions and velocities, the
// tendons' lengths and velocities (d.ten_length, d.ten_velocity: TendonKinematics()) and the
// actuators; lambda starts from the impulses saved by SaveWarmStart where a constraint persists,
// else 0. `h` is the step. Allocates only when there are more rows than ever before.
void BuildConstraints(const Model& m, Data& d, const ConstraintOptions& options, double h,
                      ConstraintModel model = ConstraintModel::kHard);

// MuJoCo's contact frame for `normal` (mju_makeFrame): the first tangent is world y made
// orthogonal to the normal, or world z when the normal is within 60 degrees of y.
Mat3 MujocoContactFrame(const Vec3& normal);

}  // namespace alsim
