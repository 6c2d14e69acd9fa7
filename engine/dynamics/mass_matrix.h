// Joint-space inertia matrix by the composite-rigid-body algorithm (RBDA §6.2, Table 6.2) in a
// single coordinate system, exploiting branch-induced sparsity (RBDA §6.3).
#pragma once

#include <Eigen/Core>

#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"
#include "engine/sim/data.h"

namespace alsim {

// Computes d.crb and d.M (tree-sparse, see TreeSparseLayout), armature on the diagonal; needs
// Kinematics().
//   crb[b] = cinert[b] + sum over children c of crb[c]
//   M(i, j) = cdof[j]^T crb[body(i)] cdof[i]   for j = i and every ancestor dof j of i
void MassMatrix(const Model& m, Data& d);

// MassMatrix for the bodies and dofs of `trees` only (their rows of M).
void MassMatrixOfTrees(const Model& m, Data& d, const TreeRange& trees);

// d.M as a dense nv x nv matrix (for tests; allocates).
Eigen::MatrixXd MassMatrixToDense(const Data& d);

}  // namespace alsim
