#include "engine/solver/island_kinematics.h"

#include <algorithm>

#include "engine/dynamics/joint_positions.h"
#include "engine/dynamics/kinematics.h"

namespace alsim {

IslandKinematics::IslandKinematics(const Model& m) : data_(m) {}

void IslandKinematics::Begin(const Model& /*m*/, const Data& d) {
  std::copy(d.qpos.begin(), d.qpos.end(), data_.qpos.begin());
  std::copy(d.xpos.begin(), d.xpos.end(), data_.xpos.begin());
  std::copy(d.xquat.begin(), d.xquat.end(), data_.xquat.begin());
  std::copy(d.xmat.begin(), d.xmat.end(), data_.xmat.begin());
}

void IslandKinematics::Place(const Model& m, const Data& d, const Islands& islands, int island,
                             const double* u, double dt) {
  for (int s = islands.subsystem_adr[island]; s < islands.subsystem_adr[island + 1]; ++s) {
    PlaceTree(m, d, islands.subsystems[s], u, dt);
  }
}

void IslandKinematics::PlaceTree(const Model& m, const Data& d, int j, const double* u, double dt) {
  const int body_begin = m.subsystem_body_adr[j];
  const int body_end = body_begin + m.subsystem_body_num[j];
  for (int b = body_begin; b < body_end; ++b) {
    for (int k = m.body_jnt_adr[b]; k < m.body_jnt_adr[b] + m.body_jnt_num[b]; ++k) {
      const int adr = m.jnt_qpos_adr[k];
      const int size = JointQposSize(m.jnt_type[k]);
      std::copy(d.qpos.begin() + adr, d.qpos.begin() + adr + size, data_.qpos.begin() + adr);
      IntegrateJointPosition(m, k, u, dt, data_.qpos.data());
    }
  }
  const int dof = m.subsystem_dof_adr[j];
  KinematicsOfTrees(m, data_, TreeRange{body_begin, body_end, dof, dof + m.subsystem_dof_num[j]});
}

}  // namespace alsim
