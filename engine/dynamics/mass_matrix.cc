#include "engine/dynamics/mass_matrix.h"

#include <algorithm>

#include "engine/linalg/tree_ldl.h"

namespace alsim {
namespace {

// Composite inertias, leaves to root. Top-level bodies stop there: trees use different reference
// points and nothing needs the world's composite inertia.
void CompositeInertias(const Model& m, Data& d, const TreeRange& trees) {
  for (int b = trees.body_begin; b < trees.body_end; ++b) d.crb[b] = d.cinert[b];
  for (int b = trees.body_end - 1; b >= trees.body_begin; --b) {
    const int parent = m.body_parent[b];
    if (parent > 0) d.crb[parent] += d.crb[b];
  }
}

}  // namespace

void MassMatrix(const Model& m, Data& d) {
  d.crb[0] = d.cinert[0];
  MassMatrixOfTrees(m, d, TreeRange{1, m.nbody, 0, m.nv});
}

void MassMatrixOfTrees(const Model& m, Data& d, const TreeRange& trees) {
  CompositeInertias(m, d, trees);
  const TreeSparseLayout& layout = d.mass_layout;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    if (m.jnt_type[m.dof_jnt[i]] == JointType::kFree) {  // six rows from three products
      const RigidInertia& crb = d.crb[m.dof_body[i]];
      FreeJointRows(
          layout, d.cdof.data(), i, crb.mass * Mat3::Identity(),
          [&crb](const Vec6& s) { return crb.Apply(s); }, d.M.data());
      for (int k = i; k < i + 6; ++k) d.M[layout.row_adr[k]] += m.dof_armature[k];
      i += 5;
      continue;
    }
    // The force needed to move the subtree of dof i at unit rate along it (RBDA Table 6.2, F).
    const Vec6 force = d.crb[m.dof_body[i]].Apply(d.cdof[i]);
    double* row = d.M.data() + layout.row_adr[i];
    int k = 0;
    for (int j = i; j >= 0; j = layout.parent[j], ++k) row[k] = d.cdof[j].dot(force);
    row[0] += m.dof_armature[i];
  }
}

Eigen::MatrixXd MassMatrixToDense(const Data& d) {
  return TreeSparseToDense(d.mass_layout, d.M.data());
}

void FactorMassMatrix(const Model& /*m*/, Data& d) {
  std::copy(d.M.begin(), d.M.end(), d.qLD.begin());
  TreeLdlFactor(d.mass_layout, d.qLD.data());
}

void SolveMassMatrix(const Data& d, double* x) { TreeLdlSolve(d.mass_layout, d.qLD.data(), x); }

}  // namespace alsim
