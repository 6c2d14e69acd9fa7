#include "engine/sim/integrate_positions.h"

#include "engine/dynamics/joint_positions.h"
#include "engine/math/spatial.h"

namespace alsim {

void IntegratePositions(const Model& m, const double* qvel, double dt, double* qpos) {
  for (int j = 0; j < m.njnt; ++j) IntegrateJointPosition(m, j, qvel, dt, qpos);
}

void DifferencePositions(const Model& m, const double* qpos1, const double* qpos2, double dt,
                         double* qvel) {
  auto rotation = [dt](const double* q1, const double* q2, double* v) {
    const Quat a(q1[0], q1[1], q1[2], q1[3]), b(q2[0], q2[1], q2[2], q2[3]);
    const Vec3 w = QuatToRotationVector(QuatMultiply(QuatConjugate(a), b)) / dt;
    for (int k = 0; k < 3; ++k) v[k] = w[k];
  };
  for (int j = 0; j < m.njnt; ++j) {
    const int adr = m.jnt_qpos_adr[j];
    double* v = qvel + m.jnt_dof_adr[j];
    switch (m.jnt_type[j]) {
      case JointType::kFree:
        for (int k = 0; k < 3; ++k) v[k] = (qpos2[adr + k] - qpos1[adr + k]) / dt;
        rotation(qpos1 + adr + 3, qpos2 + adr + 3, v + 3);
        break;
      case JointType::kBall:
        rotation(qpos1 + adr, qpos2 + adr, v);
        break;
      case JointType::kSlide:
      case JointType::kHinge:
        v[0] = (qpos2[adr] - qpos1[adr]) / dt;
        break;
    }
  }
}

}  // namespace alsim
