#include "engine/dynamics/bias_forces.h"

#include <algorithm>

#include "engine/math/spatial.h"

namespace alsim {

void BiasForces(const Model& m, Data& d) {
  BiasForcesOfWorld(m, d);
  BiasForcesOfTrees(m, d, TreeRange{1, m.nbody, 0, m.nv});
}

void BiasForcesOfWorld(const Model& m, Data& d) {
  d.cacc[0] << Vec3::Zero(), -m.gravity;
  d.cfrc[0].setZero();
}

void BiasForcesOfTrees(const Model& m, Data& d, const TreeRange& trees) {
  for (int b = trees.body_begin; b < trees.body_end; ++b) {
    Vec6 a = d.cacc[m.body_parent[b]];
    const int dof_end = m.body_dof_adr[b] + m.body_dof_num[b];
    for (int k = m.body_dof_adr[b]; k < dof_end; ++k) a += d.cdof_dot[k] * d.qvel[k];
    d.cacc[b] = a;
    const RigidInertia& inertia = d.cinert[b];
    d.cfrc[b] = inertia.Apply(a) + CrossForce(d.cvel[b], inertia.Apply(d.cvel[b]));
  }
  // Top-level bodies stop the sum: each tree has its own reference point (engine/data/data.h).
  for (int b = trees.body_end - 1; b >= trees.body_begin; --b) {
    const int parent = m.body_parent[b];
    if (parent > 0) d.cfrc[parent] += d.cfrc[b];
  }
  for (int k = trees.dof_begin; k < trees.dof_end; ++k) {
    d.qfrc_bias[k] = d.cdof[k].dot(d.cfrc[m.dof_body[k]]);
  }
}

BiasForceVelocityJacobian::BiasForceVelocityJacobian(const Model& m)
    : subtree_end_(m.nbody),
      velocity_(m.nbody),
      acceleration_(m.nbody),
      force_(m.nbody),
      dof_dot_(m.nv) {
  // Bodies are in depth-first order (a parent before its children), so a subtree is contiguous.
  for (int b = 0; b < m.nbody; ++b) subtree_end_[b] = b + 1;
  for (int b = m.nbody - 1; b > 0; --b) {
    const int parent = m.body_parent[b];
    subtree_end_[parent] = std::max(subtree_end_[parent], subtree_end_[b]);
  }
}

void BiasForceVelocityJacobian::Add(const Model& m, const Data& d, double scale, double* out) {
  const int nv = m.nv;
  for (int j = 0; j < nv; ++j) {
    const int first = m.dof_body[j], end = subtree_end_[first];
    const Vec6& unit = d.cdof[j];
    // Forward: the velocity before each dof as AccumulateJointVelocity (velocity.cc) builds it.
    for (int b = first; b < end; ++b) {
      Vec6 v = b == first ? Vec6::Zero() : velocity_[m.body_parent[b]];
      for (int jnt = m.body_jnt_adr[b]; jnt >= 0 && jnt < m.body_jnt_adr[b] + m.body_jnt_num[b];
           ++jnt) {
        const int dof = m.jnt_dof_adr[jnt];
        switch (m.jnt_type[jnt]) {
          case JointType::kFree:
            for (int k = 0; k < 3; ++k) {
              dof_dot_[dof + k].setZero();
              if (dof + k == j) v += unit;
            }
            for (int k = 3; k < 6; ++k) {
              if (dof + k == j) v += unit;
            }
            for (int k = 3; k < 6; ++k) dof_dot_[dof + k] = CrossMotion(v, d.cdof[dof + k]);
            break;
          case JointType::kBall:
            for (int k = 0; k < 3; ++k) {
              if (dof + k == j) v += unit;
            }
            for (int k = 0; k < 3; ++k) dof_dot_[dof + k] = CrossMotion(v, d.cdof[dof + k]);
            break;
          case JointType::kSlide:
          case JointType::kHinge:
            dof_dot_[dof] = CrossMotion(v, d.cdof[dof]);
            if (dof == j) v += unit;
            break;
        }
      }
      velocity_[b] = v;
      Vec6 a = b == first ? Vec6::Zero() : acceleration_[m.body_parent[b]];
      const int dof_end = m.body_dof_adr[b] + m.body_dof_num[b];
      for (int k = m.body_dof_adr[b]; k >= 0 && k < dof_end; ++k) {
        a += dof_dot_[k] * d.qvel[k];
        if (k == j) a += d.cdof_dot[k];
      }
      acceleration_[b] = a;
      const RigidInertia& inertia = d.cinert[b];
      force_[b] = inertia.Apply(a) + CrossForce(v, inertia.Apply(d.cvel[b])) +
                  CrossForce(d.cvel[b], inertia.Apply(v));
    }
    // Backward: within the subtree, then the sum up the ancestors (a top-level body stops it).
    for (int b = end - 1; b > first; --b) force_[m.body_parent[b]] += force_[b];
    for (int k = m.body_dof_adr[first]; k < nv && k >= 0 && m.dof_body[k] < end; ++k) {
      out[static_cast<size_t>(k) * nv + j] += scale * d.cdof[k].dot(force_[m.dof_body[k]]);
    }
    const Vec6 total = force_[first];
    for (int b = first; m.body_parent[b] > 0;) {
      b = m.body_parent[b];
      for (int k = m.body_dof_adr[b]; k >= 0 && k < m.body_dof_adr[b] + m.body_dof_num[b]; ++k) {
        out[static_cast<size_t>(k) * nv + j] += scale * d.cdof[k].dot(total);
      }
    }
  }
}

}  // namespace alsim
