#include "engine/dynamics/passive_forces.h"

#include "engine/dynamics/tendon.h"
#include "engine/math/spatial.h"

namespace alsim {
namespace {

// Rotation vector from the spring's rest orientation to the current one, in the child frame.
Vec3 RotationFromRest(const double* q, const double* q_rest) {
  const Quat current = QuatNormalize(Quat(q[0], q[1], q[2], q[3]));
  const Quat rest(q_rest[0], q_rest[1], q_rest[2], q_rest[3]);
  return QuatToRotationVector(QuatMultiply(QuatConjugate(rest), current));
}

void AddJointSpring(const Model& m, int j, Data& d) {
  const double stiffness = m.jnt_stiffness[j];
  const int qadr = m.jnt_qpos_adr[j];
  const double* q = d.qpos.data() + qadr;
  const double* q_rest = m.qpos_spring.data() + qadr;
  double* force = d.qfrc_passive.data() + m.jnt_dof_adr[j];
  switch (m.jnt_type[j]) {
    case JointType::kFree:
      for (int k = 0; k < 3; ++k) force[k] -= stiffness * (q[k] - q_rest[k]);
      q += 3;
      q_rest += 3;
      force += 3;
      [[fallthrough]];
    case JointType::kBall: {
      const Vec3 r = RotationFromRest(q, q_rest);
      for (int k = 0; k < 3; ++k) force[k] -= stiffness * r[k];
      return;
    }
    case JointType::kSlide:
    case JointType::kHinge:
      force[0] -= stiffness * (q[0] - q_rest[0]);
      return;
  }
}

}  // namespace

void PassiveForces(const Model& m, Data& d) {
  TendonKinematics(m, d);
  PassiveForcesOfTrees(m, d, TreeRange{1, m.nbody, 0, m.nv});
}

void PassiveForcesOfTrees(const Model& m, Data& d, const TreeRange& trees) {
  for (int k = trees.dof_begin; k < trees.dof_end; ++k) {
    d.qfrc_passive[k] = -m.dof_damping[k] * d.qvel[k];
  }
  for (int b = trees.body_begin; b < trees.body_end; ++b) {
    for (int j = m.body_jnt_adr[b]; j < m.body_jnt_adr[b] + m.body_jnt_num[b]; ++j) {
      if (m.jnt_stiffness[j] != 0) AddJointSpring(m, j, d);
    }
  }
  if (m.subsystem_passive_wraps.empty() || trees.dof_begin == trees.dof_end) return;
  // The tendons' springs and dampers on the subsystems of `trees`, from their wrap lists.
  for (int j = m.body_subsystem[m.dof_body[trees.dof_begin]];
       j < m.nsubsystem && m.subsystem_dof_adr[j] < trees.dof_end; ++j) {
    for (int p = m.subsystem_passive_wrap_adr[j]; p < m.subsystem_passive_wrap_adr[j + 1]; ++p) {
      const int k = m.subsystem_passive_wraps[p];
      const int t = m.wrap_tendon[k];
      const double force = -m.tendon_stiffness[t] * (d.ten_length[t] - m.tendon_lengthspring[t]) -
                           m.tendon_damping[t] * d.ten_velocity[t];
      d.qfrc_passive[m.wrap_dof[k]] += m.wrap_coef[k] * force;
    }
  }
}

}  // namespace alsim
