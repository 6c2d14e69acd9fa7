#include "engine/dynamics/mass_matrix.h"

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

// Rows f .. f + 5 of M for a free joint's dofs (f its first; a free joint has no ancestors):
// translations along the world axes, then rotations. The generic loop below forms
// crb.Apply(cdof) for each; for a translation e_a that force is (h x e_a, m e_a), so the
// translation rows are m on the diagonal and zero off it, and a rotation row's entries in the
// translation columns are its force's linear part: only the three rotations need a product.
// humanoid100 (a humanoid and 100 free bodies): 1.5% fewer instructions per step.
void FreeJointRows(const Model& m, Data& d, int f) {
  const TreeSparseLayout& layout = d.mass_layout;
  const RigidInertia& crb = d.crb[m.dof_body[f]];
  for (int a = 0; a < 3; ++a) {  // row f + a: columns f + a, ..., f
    double* row = d.M.data() + layout.row_adr[f + a];
    row[0] = crb.mass + m.dof_armature[f + a];
    for (int k = 1; k <= a; ++k) row[k] = 0.0;
  }
  for (int a = 0; a < 3;
       ++a) {  // row f + 3 + a: rotations f + 3 + a, ..., f + 3, then f + 2, ..., f
    const int i = f + 3 + a;
    const Vec6 force = crb.Apply(d.cdof[i]);
    double* row = d.M.data() + layout.row_adr[i];
    int k = 0;
    for (int j = i; j >= f + 3; --j) row[k++] = d.cdof[j].dot(force);
    for (int b = 2; b >= 0; --b) row[k++] = force[3 + b];
    row[0] += m.dof_armature[i];
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
    if (m.jnt_type[m.dof_jnt[i]] == JointType::kFree) {
      FreeJointRows(m, d, i);
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

}  // namespace alsim
