// Joint and fixed tendon springs and dampers.
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// Computes d.qfrc_passive from d.qpos and d.qvel (MuJoCo's qfrc_passive for scenes without
// spatial tendons or fluid forces):
//   hinge, slide: -stiffness (q - qpos_spring)
//   ball:         -stiffness r, with r the rotation vector (axis * angle, angle in [-pi, pi]) of
//                 conj(qpos_spring) * normalize(q), i.e. in the joint's child frame
//   free:         -stiffness (p - p_spring) on the translation, the ball rule on the rotation
//   every dof:    -damping qvel
//   fixed tendon: f = -stiffness (L - lengthspring) - damping dL/dt on the tendon, c_k f on the
//                 dof of each of its joints (engine/dynamics/tendon.h)
// Per dof the terms add in that order, tendons in tendon order. The dofs' damping is also implicit
// in the step (engine/dynamics/theta_method.h); the tendons' damping is explicit only, as in
// MuJoCo 2.2.2, whose Euler integrator adds dof_damping alone to the mass matrix.
// Runs TendonKinematics() first.
void PassiveForces(const Model& m, Data& d);

// PassiveForces for the dofs and joints of `trees` only; reads the tendons' lengths and velocities
// from d.ten_length and d.ten_velocity (TendonKinematics(), run before).
void PassiveForcesOfTrees(const Model& m, Data& d, const TreeRange& trees);

}  // namespace alsim
