#include "engine/dynamics/joint_positions.h"

#include "engine/math/spatial.h"

namespace alsim {
namespace {

void IntegrateQuaternion(const double* omega_body, double dt, double* wxyz) {
  const Quat q = QuatIntegrate(Quat(wxyz[0], wxyz[1], wxyz[2], wxyz[3]),
                               Vec3(omega_body[0], omega_body[1], omega_body[2]), dt);
  for (int k = 0; k < 4; ++k) wxyz[k] = q[k];
}

}  // namespace

void IntegrateJointPosition(const Model& m, int j, const double* qvel, double dt, double* qpos) {
  double* q = qpos + m.jnt_qpos_adr[j];
  const double* v = qvel + m.jnt_dof_adr[j];
  switch (m.jnt_type[j]) {
    case JointType::kFree:
      for (int k = 0; k < 3; ++k) q[k] += dt * v[k];
      IntegrateQuaternion(v + 3, dt, q + 3);
      break;
    case JointType::kBall:
      IntegrateQuaternion(v, dt, q);
      break;
    case JointType::kSlide:
    case JointType::kHinge:
      q[0] += dt * v[0];
      break;
  }
}

}  // namespace alsim
