#include "engine/dynamics/mass_matrix.h"

namespace alsim {
namespace {

// Composite inertias, leaves to root. Top-level bodies stop there: trees use different reference
// points and nothing needs the world's composite inertia.
void CompositeInertias(const Model& m, Data& d) {
  for (int b = 0; b < m.nbody; ++b) d.crb[b] = d.cinert[b];
  for (int b = m.nbody - 1; b > 0; --b) {
    const int parent = m.body_parent[b];
    if (parent > 0) d.crb[parent] += d.crb[b];
  }
}

}  // namespace

void MassMatrix(const Model& m, Data& d) {
  CompositeInertias(m, d);
  const TreeSparseLayout& layout = d.mass_layout;
  for (int i = 0; i < m.nv; ++i) {
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
