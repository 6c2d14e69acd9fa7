// Joint-space inertia matrix by the composite-rigid-body algorithm (RBDA §6.2, Table 6.2) in a
// single coordinate system, exploiting branch-induced sparsity (RBDA §6.3).
#pragma once

#include <Eigen/Core>

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/linalg/tree_sparse_layout.h"
#include "engine/math/types.h"
#include "engine/model/model.h"

namespace alsim {

// Computes d.crb and d.M (tree-sparse, see TreeSparseLayout), armature on the diagonal; needs
// Kinematics().
//   crb[b] = cinert[b] + sum over children c of crb[c]
//   M(i, j) = cdof[j]^T crb[body(i)] cdof[i]   for j = i and every ancestor dof j of i
void MassMatrix(const Model& m, Data& d);

// MassMatrix for the bodies and dofs of `trees` only (their rows of M).
void MassMatrixOfTrees(const Model& m, Data& d, const TreeRange& trees);

// Rows f .. f + 5 of S^T X S in layout storage, for the six dofs of a free joint (f its first; a
// free joint has no ancestor dofs) with motion subspaces S (cdof) and a symmetric 6 x 6 operator X
// on motion vectors, apply(s) = X s: a composite inertia gives the mass matrix's rows, a body's
// sum of J^T J SubADMM's Gram rows (eq. 40). The general row loop forms X s for every dof; a
// translation's subspace is (0, e_a), so its row is X's lower-right block (`linear_block`) and a
// rotation row's entries in the translation columns are the linear part of X s: only the three
// rotations need a product. Equal to the general loop's entries up to the sign of exact zeros.
template <class Apply>
void FreeJointRows(const TreeSparseLayout& layout, const Vec6* cdof, int f,
                   const Mat3& linear_block, const Apply& apply, double* matrix) {
  for (int a = 0; a < 3; ++a) {  // row f + a: columns f + a, ..., f (translations)
    double* row = matrix + layout.row_adr[f + a];
    for (int k = 0; k <= a; ++k) row[k] = linear_block(a - k, a);
  }
  // Row f + 3 + a: columns f + 3 + a, ..., f + 3 (rotations), then f + 2, ..., f (translations).
  for (int a = 0; a < 3; ++a) {
    const int i = f + 3 + a;
    const Vec6 force = apply(cdof[i]);
    double* row = matrix + layout.row_adr[i];
    int k = 0;
    for (int j = i; j >= f + 3; --j) row[k++] = cdof[j].dot(force);
    for (int b = 2; b >= 0; --b) row[k++] = force[3 + b];
  }
}

// d.M as a dense nv x nv matrix (for tests; allocates).
Eigen::MatrixXd MassMatrixToDense(const Data& d);

// d.qLD = factor of d.M (engine/linalg/tree_ldl.h); needs MassMatrix().
void FactorMassMatrix(const Model& m, Data& d);

// x (nv) = M^{-1} x with d.qLD; needs FactorMassMatrix().
void SolveMassMatrix(const Data& d, double* x);

}  // namespace alsim
