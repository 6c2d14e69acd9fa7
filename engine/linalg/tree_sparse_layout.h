// Storage of a symmetric nv x nv matrix with branch-induced sparsity (RBDA §6.3): entry (i, j) can
// be nonzero only if dof j is dof i or one of its ancestors along dof_parent. Row i stores exactly
// those entries, contiguously, starting with the diagonal and walking towards the root:
//   matrix[row_adr[i] + 0] = M(i, i)
//   matrix[row_adr[i] + 1] = M(i, parent(i))
//   matrix[row_adr[i] + k] = M(i, parent^k(i)),  k < row_nnz[i] = depth(i) + 1
// Because dof j's ancestor chain is the tail of dof i's chain when j is an ancestor of i, row j
// equals the tail of row i's column indices: row_i[k + s] and row_j[s] name the same column for
// s >= 0, with k = row_nnz[i] - row_nnz[j]. The tree LDL^T and the CRBA use this to run over
// contiguous ranges. The mass matrix, its factor and any matrix with the same sparsity (e.g. the
// SubADMM system matrices) share one layout.
#pragma once

#include <vector>

#include <Eigen/Core>

namespace alsim {

struct TreeSparseLayout {
  int size = 0;              // nv
  int nnz = 0;               // stored entries, sum of row_nnz
  std::vector<int> parent;   // dof_parent (size); -1 for a root dof
  std::vector<int> row_adr;  // first stored entry of row i (size)
  std::vector<int> row_nnz;  // depth(i) + 1 (size)
  std::vector<int> column;   // column of every stored entry (nnz): the ancestor chain as an
                             // index list, so loops over a row need not chase parent links
  // Depth-first order (MuJoCo's): dof i's descendants are the dofs in (i, subtree_end[i]), and
  // entry (j, i) of a descendant j sits at row_end[j] - row_nnz[i]. Empty when some subtree is
  // not contiguous; loops then walk the rows instead (subtrees_contiguous()).
  std::vector<int> subtree_end;
  std::vector<int> row_end;  // row_adr[i] + row_nnz[i]

  bool subtrees_contiguous() const { return !subtree_end.empty(); }

  // Requires parent[i] < i (MuJoCo's dof ordering).
  static TreeSparseLayout FromParents(const std::vector<int>& parent);

  // Offset in row i of the entry for its ancestor j (requires j to be i or an ancestor of i).
  int AncestorOffset(int i, int j) const { return row_nnz[i] - row_nnz[j]; }
};

// The full symmetric matrix stored in `matrix` (for tests and debugging; allocates).
Eigen::MatrixXd TreeSparseToDense(const TreeSparseLayout& layout, const double* matrix);

}  // namespace alsim
