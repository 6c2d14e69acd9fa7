// Fixed tendons: lengths, velocities and their Jacobian rows.
//
// A fixed tendon (MuJoCo's <fixed>, every path element a joint) couples hinge and slide joints
// linearly: L = sum_k c_k q_k over its joints, so dL/dt = sum_k c_k v_k and its Jacobian row is
// the constant c_k at joint k's dof (Model's wrap_* arrays). Everything that acts through a tendon
// (its spring and damper, its limit rows, actuators on it) applies a scalar force f as
// qfrc[dof_k] += c_k f.
#pragma once

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// L of tendon t at d.qpos (zero for a spatial tendon, which has no joints here).
inline double TendonLength(const Model& m, const Data& d, int t) {
  double length = 0;
  for (int k = m.tendon_wrap_adr[t]; k < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++k) {
    length += m.wrap_coef[k] * d.qpos[m.wrap_qpos_adr[k]];
  }
  return length;
}

// dL/dt of tendon t at d.qvel.
inline double TendonVelocity(const Model& m, const Data& d, int t) {
  double velocity = 0;
  for (int k = m.tendon_wrap_adr[t]; k < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++k) {
    velocity += m.wrap_coef[k] * d.qvel[m.wrap_dof[k]];
  }
  return velocity;
}

// d.ten_length and d.ten_velocity of every tendon from d.qpos and d.qvel. The step runs it once,
// serially, before its tree tasks: a tendon may couple several trees, whose tasks then read these
// values instead of each other's qvel (which a tree task changes while it re-evaluates its bias
// forces at theta > 0).
void TendonKinematics(const Model& m, Data& d);

}  // namespace alsim
