// The velocity-product acceleration Gd v of a constraint's rows (Drumwright, seed 003; digest
// /work/shared/research/seed-003-drumwright.md, sections 3-4 and 7): with phid = G v, the rows'
// second derivative is phidd = G vd + Gd v, eq. (29), and the bridge (46) takes it at the step's
// state, phidd0 = G0 vd0 + Gd0 v0; the force laws (15)/(23), (53) and (68) subtract Mhat Gd v.
// Gd v = d/dt (G(q(t)) v) at fixed v, i.e. phidd at qacc = 0 (no gravity: it is a property of the
// rows, not of the forces), for the rows exactly as BuildConstraints (engine/constraint) defines
// them, so that for any qacc, d/dt (G v) = G qacc + Gd v.
//
// Notation. Every body b has the spatial velocity cvel[b] = (w_b, v_b) about its tree's reference
// point O (data.h), v_b the velocity of b's material point at O. Taken about the fixed point at O,
// its derivative at qacc = 0 is the bias acceleration (alpha_b, a_b) = sum_k cdof_dot[k] qvel[k]
// over the dofs k on b's path to the world (velocity.h: d/dt cdof = cvel x cdof; the bodies'
// cacc is the same sum plus the world's -gravity, and valid only after BiasForces, so it is not
// read). A material point p of b has the velocity v_p = v_b + w_b x (p - O) and the acceleration
// at qacc = 0
//   a_p = a_b + alpha_b x (p - O) + w_b x v_p
// (w x (w x r) is in the last term: w_b x v_p = w_b x v_b + w_b x (w_b x r)). A body with no slack
// block (the world, a static body) contributes nothing, as in G.
//
// Decisions and equations, per kind (ConstraintKey::kind):
//   0 contact: not computed (false). Its frame comes from collision detection, and between curved
//     surfaces the contact point is no material point of either geom: Gd v needs the surfaces'
//     curvature (Drumwright's contact kinematics), which the narrow phase does not report.
//   1 equality, connect and a weld's position rows: world axes, G v = v_p1 - v_p2 with p1, p2 the
//     body-fixed points of EqualityErrors (connect: anchor on body1, anchor2 on body2; weld:
//     relpos on body1, anchor on body2), so Gd v = a_p1 - a_p2 (the axes do not move).
//     A weld's rotation rows, alsim's (world axes, G v = w1 - w2): Gd v = alpha_1 - alpha_2.
//     In MuJoCo's model (SetMujocoEqualityRows) they are G v = c Im(q2* (0, u) t), with
//     c = torquescale / 2, u = w1 - w2, t = q1 relquat (quaternions Hamilton, w first), and with
//     q' = (0, w) q / 2 in world axes,
//       Gd v = c Im(q2* ((0, alpha_1 - alpha_2) + ((0, u) (0, w1) - (0, w2) (0, u)) / 2) t).
//     Which rows a weld has is read from its blocks: +-[I 0] is alsim's, any other map MuJoCo's.
//   2 joint limit (hinge, slide), 3 servo (joint or fixed tendon), 4 dry friction, 5 fixed tendon
//     limit: every block is a joint-space block with a constant coefficient (the tendon's length is
//     linear in q, L = sum c_k q_k; a friction row is e_dof^T in velocity space), so G does not
//     depend on q and Gd v = 0. (The engine has no ball-joint limits and no spatial tendon rows,
//     and its importer refuses joint and tendon equalities: no such rows exist to handle.)
//   6 foundation element: G v = n . v_p with p the site's point on its body and n the plane's
//     normal (geom_xmat's z column). A plane lies in a static body (MuJoCo refuses one in a
//     moving body), so n is constant: Gd v = n . a_p.
//   any other kind or equality type: false.
// Units: m/s^2 for translational rows, rad/s^2 for rotational ones (per row, as the row's phi).
#pragma once

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// Gd v of each of constraint `constraint`'s rows (d.constraints.constraints[constraint]) at the
// current state (Kinematics and Velocity done: d.xpos, d.xmat, d.xquat, d.geom_xmat, d.cvel,
// d.cdof_dot; and BuildConstraints for the rows): out[r] for r < dim, the row's phidd at
// qacc = 0, so that phidd = G qacc + out. True when computed; false, with out[0 .. dim) zeroed,
// for a constraint whose Gd v is not computed (contacts, unknown kinds). Allocates nothing.
bool RowVelocityProductAcceleration(const Model& m, const Data& d, int constraint, double* out);

}  // namespace alsim
