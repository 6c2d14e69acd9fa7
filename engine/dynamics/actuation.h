// Actuator forces through joint, fixed tendon and slider-crank transmissions, with MuJoCo's affine
// force law.
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// actuator_length, actuator_force and qfrc_actuator from ctrl, qpos and qvel; needs Kinematics().
// Per actuator, with l its transmission length times gear and v = dl/dt:
//   force = gain ctrl + bias0 + bias1 l + bias2 v
// (motor: bias = 0; position servo: bias1 = -kp; velocity servo: bias2 = -kv), the control clamped
// to ctrlrange and the force to forcerange when limited; the joints receive (dl/dq)^T force.
void ActuatorForces(const Model& m, Data& d);

// The same for the actuators of the subsystems in `trees` only (their dofs of qfrc_actuator);
// needs m.actuators_in_trees, and kinematics of those trees only. Bit-identical to
// ActuatorForces there: each dof sums its actuators in actuator order either way.
void ActuatorForcesOfTrees(const Model& m, Data& d, const TreeRange& trees);

// fn(a) for each actuator a of the subsystems in `trees` (Model::subsystem_actuators), in
// actuator order per subsystem.
template <class Fn>
void ForEachActuatorOfTrees(const Model& m, const TreeRange& trees, const Fn& fn) {
  if (trees.dof_begin == trees.dof_end) return;
  for (int j = m.body_subsystem[m.dof_body[trees.dof_begin]];
       j < m.nsubsystem && m.subsystem_dof_adr[j] < trees.dof_end; ++j) {
    for (int k = m.subsystem_actuator_adr[j]; k < m.subsystem_actuator_adr[j + 1]; ++k) {
      fn(m.subsystem_actuators[k]);
    }
  }
}

}  // namespace alsim
