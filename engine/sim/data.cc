#include "engine/sim/data.h"

namespace alsim {
namespace {

// The highest-numbered dof on the path from `body` to the world: the body's own last dof, else
// its nearest moving ancestor's. Bodies come after their parents, so one forward pass suffices.
std::vector<int> LastDofOnPath(const Model& m) {
  std::vector<int> last(m.nbody, -1);
  for (int b = 1; b < m.nbody; ++b) {
    last[b] =
        m.body_dof_num[b] > 0 ? m.body_dof_adr[b] + m.body_dof_num[b] - 1 : last[m.body_parent[b]];
  }
  return last;
}

bool HasSliderCrank(const Model& m) {
  for (const auto transmission : m.actuator_transmission) {
    if (transmission == ActuatorTransmission::kSliderCrank) return true;
  }
  return false;
}

}  // namespace

Data::Data(const Model& m)
    : mass_layout(TreeSparseLayout::FromParents(m.dof_parent)),
      body_last_dof(LastDofOnPath(m)),
      qpos(m.qpos0),
      qvel(m.nv, 0.0),
      ctrl(m.nu, 0.0),
      xpos(m.nbody, Vec3::Zero()),
      xquat(m.nbody, QuatIdentity()),
      xmat(m.nbody, Mat3::Identity()),
      xipos(m.nbody, Vec3::Zero()),
      ximat(m.nbody, Mat3::Identity()),
      xanchor(m.njnt, Vec3::Zero()),
      xaxis(m.njnt, Vec3::Zero()),
      cdof(m.nv, Vec6::Zero()),
      cinert(m.nbody),
      cvel(m.nbody, Vec6::Zero()),
      cdof_dot(m.nv, Vec6::Zero()),
      crb(m.nbody),
      M(mass_layout.nnz, 0.0),
      qLD(mass_layout.nnz, 0.0),
      qfrc_bias(m.nv, 0.0),
      cacc(m.nbody, Vec6::Zero()),
      cfrc(m.nbody, Vec6::Zero()),
      qfrc_passive(m.nv, 0.0),
      actuator_length(m.nu, 0.0),
      actuator_force(m.nu, 0.0),
      qfrc_actuator(m.nv, 0.0),
      qH(mass_layout.nnz, 0.0),
      qacc(m.nv, 0.0),
      qvel_start(m.nv, 0.0) {
  if (HasSliderCrank(m)) {
    for (auto* jac : {&crank_jacp, &slider_jacp, &slider_jacr, &unused_jacr}) {
      jac->setZero(3, m.nv);
    }
    transmission_moment.assign(m.nv, 0.0);
  }
}

}  // namespace alsim
