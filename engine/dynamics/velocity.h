// Body spatial velocities and the time derivatives of the dof motion subspaces (RBDA §5.3,
// forward pass of the RNEA, eqs. 5.7 and 5.14).
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// Computes cvel and cdof_dot from d.qvel; needs Kinematics().
//   cvel[b] = cvel[parent] + sum over b's dofs of cdof[k] qvel[k]
// A subspace fixed in the frame that follows its joint changes as d/dt S = v x S, with v that
// frame's velocity (RBDA eq. 2.35 / §3.4 "apparent derivative"). For hinge and slide joints the
// axis is also fixed in the frame before the joint, and S x S = 0, so either frame's velocity
// gives the same result; ball and free-rotation axes are fixed in the child; free-translation axes
// are fixed in the world, so their derivative is zero.
void Velocity(const Model& m, Data& d);

// Velocity for the bodies of `trees` only; the world's cvel must be zero (Velocity sets it).
void VelocityOfTrees(const Model& m, Data& d, const TreeRange& trees);

}  // namespace alsim
