// External forces on bodies (Data::xfrc_applied, MuJoCo's xfrc_applied) as generalized forces.
//
// A force f at the body's center of mass c and a torque tau, both world, do the work
// f . v_c + tau . omega, so their generalized force is J_c^T f + J_r^T tau (J_c, J_r the
// translational Jacobian of c and the rotational Jacobian of the body). Expressed as the spatial
// force F = (tau + (c - o) x f, f) about the tree's reference point o, the power of dof k is
// cdof_k . F, and every dof on the path from the body to the world sees it; summing F over each
// body's subtree first (as RNEA's backward pass does) gives
//   qfrc_applied[k] = cdof_k . sum of F over the subtree of dof_body[k],
// O(nbody + nv) per tree instead of one Jacobian per body.
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// Computes d.cfrc_applied and d.qfrc_applied from d.xfrc_applied; needs Kinematics().
void AppliedForces(const Model& m, Data& d);

// AppliedForces for the bodies and dofs of `trees` only. A tree whose bodies have no applied
// force (every component == 0) gets qfrc_applied = 0 without the passes over it.
void AppliedForcesOfTrees(const Model& m, Data& d, const TreeRange& trees);

}  // namespace alsim
