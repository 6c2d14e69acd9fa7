// Joint springs and dampers.
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// Computes d.qfrc_passive from d.qpos and d.qvel (MuJoCo's qfrc_passive for scenes without
// tendons or fluid forces):
//   hinge, slide: -stiffness (q - qpos_spring)
//   ball:         -stiffness r, with r the rotation vector (axis * angle, angle in [-pi, pi]) of
//                 conj(qpos_spring) * normalize(q), i.e. in the joint's child frame
//   free:         -stiffness (p - p_spring) on the translation, the ball rule on the rotation
//   every dof:    -damping qvel
void PassiveForces(const Model& m, Data& d);

// PassiveForces for the dofs and joints of `trees` only.
void PassiveForcesOfTrees(const Model& m, Data& d, const TreeRange& trees);

}  // namespace alsim
