#include "engine/dynamics/applied_forces.h"

#include <algorithm>

namespace alsim {
namespace {

bool AnyAppliedForce(const Data& d, const TreeRange& trees) {
  for (int b = trees.body_begin; b < trees.body_end; ++b) {
    // NaN compares unequal to 0: it is passed on, and the step reports the divergence.
    if (!(d.xfrc_applied[b].array() == 0).all()) return true;
  }
  return false;
}

}  // namespace

void AppliedForces(const Model& m, Data& d) {
  AppliedForcesOfTrees(m, d, TreeRange{1, m.nbody, 0, m.nv});
}

void AppliedForcesOfTrees(const Model& m, Data& d, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;  // static trees: nothing moves
  if (!AnyAppliedForce(d, trees)) {
    std::fill(d.qfrc_applied.begin() + trees.dof_begin, d.qfrc_applied.begin() + trees.dof_end,
              0.0);
    return;
  }
  for (int b = trees.body_begin; b < trees.body_end; ++b) {
    const Vec6& wrench = d.xfrc_applied[b];  // (force, torque), MuJoCo's order
    const Vec3 force = wrench.head<3>();
    const Vec3 com_from_reference = d.xipos[b] - SpatialReferencePoint(m, d, b);
    d.cfrc_applied[b] << wrench.tail<3>() + com_from_reference.cross(force), force;
  }
  // Top-level bodies stop the sum: each tree has its own reference point (engine/data/data.h).
  for (int b = trees.body_end - 1; b >= trees.body_begin; --b) {
    const int parent = m.body_parent[b];
    if (parent > 0) d.cfrc_applied[parent] += d.cfrc_applied[b];
  }
  for (int k = trees.dof_begin; k < trees.dof_end; ++k) {
    d.qfrc_applied[k] = d.cdof[k].dot(d.cfrc_applied[m.dof_body[k]]);
  }
}

}  // namespace alsim
