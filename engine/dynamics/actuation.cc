#include "engine/dynamics/actuation.h"

#include <algorithm>

namespace alsim {

void ActuatorForces(const Model& m, Data& d) {
  std::fill(d.qfrc_actuator.begin(), d.qfrc_actuator.end(), 0.0);
  for (int i = 0; i < m.nu; ++i) {
    const int joint = m.actuator_jnt[i];
    const double gear = m.actuator_gear[i];
    const double length = gear * d.qpos[m.jnt_qpos_adr[joint]];
    const double velocity = gear * d.qvel[m.jnt_dof_adr[joint]];
    double ctrl = d.ctrl[i];
    if (m.actuator_ctrl_limited[i]) {
      ctrl = std::clamp(ctrl, m.actuator_ctrl_lower[i], m.actuator_ctrl_upper[i]);
    }
    double force = m.actuator_gain[i] * ctrl + m.actuator_bias0[i] + m.actuator_bias1[i] * length +
                   m.actuator_bias2[i] * velocity;
    if (m.actuator_force_limited[i]) {
      force = std::clamp(force, m.actuator_force_lower[i], m.actuator_force_upper[i]);
    }
    d.actuator_force[i] = force;
    d.qfrc_actuator[m.jnt_dof_adr[joint]] += gear * force;
  }
}

}  // namespace alsim
