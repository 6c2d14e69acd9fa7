#include "engine/dynamics/bias_forces.h"

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

}  // namespace alsim
