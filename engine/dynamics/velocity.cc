#include "engine/dynamics/velocity.h"

#include "engine/math/spatial.h"

namespace alsim {
namespace {

// Adds the velocity of joint j's dofs to `v` (the velocity of the frame before the joint) and
// fills their cdof_dot.
void AccumulateJointVelocity(const Model& m, int j, Data& d, Vec6& v) {
  const int dof = m.jnt_dof_adr[j];
  const double* qvel = d.qvel.data() + dof;
  const Vec6* s = d.cdof.data() + dof;
  Vec6* s_dot = d.cdof_dot.data() + dof;
  switch (m.jnt_type[j]) {
    case JointType::kFree:
      for (int k = 0; k < 3; ++k) {
        s_dot[k].setZero();
        v += s[k] * qvel[k];
      }
      s += 3;
      s_dot += 3;
      qvel += 3;
      [[fallthrough]];  // the rotational half is a ball joint about the anchor
    case JointType::kBall:
      for (int k = 0; k < 3; ++k) v += s[k] * qvel[k];
      for (int k = 0; k < 3; ++k) s_dot[k] = CrossMotion(v, s[k]);
      return;
    case JointType::kSlide:
    case JointType::kHinge:
      s_dot[0] = CrossMotion(v, s[0]);
      v += s[0] * qvel[0];
      return;
  }
}

}  // namespace

void Velocity(const Model& m, Data& d) {
  d.cvel[0].setZero();
  VelocityOfTrees(m, d, TreeRange{1, m.nbody, 0, m.nv});
}

void VelocityOfTrees(const Model& m, Data& d, const TreeRange& trees) {
  for (int b = trees.body_begin; b < trees.body_end; ++b) {
    Vec6 v = d.cvel[m.body_parent[b]];
    const int jnt_end = m.body_jnt_adr[b] + m.body_jnt_num[b];
    for (int j = m.body_jnt_adr[b]; j < jnt_end; ++j) AccumulateJointVelocity(m, j, d, v);
    d.cvel[b] = v;
  }
}

}  // namespace alsim
