#include "engine/linalg/tree_sparse_layout.h"

#include <algorithm>
#include <stdexcept>

namespace alsim {

TreeSparseLayout TreeSparseLayout::FromParents(const std::vector<int>& parent) {
  TreeSparseLayout layout;
  layout.size = static_cast<int>(parent.size());
  layout.parent = parent;
  layout.row_adr.resize(parent.size());
  layout.row_nnz.resize(parent.size());
  for (int i = 0; i < layout.size; ++i) {
    const int p = parent[i];
    if (p >= i) throw std::invalid_argument("TreeSparseLayout: dof parent must precede the dof");
    layout.row_nnz[i] = p < 0 ? 1 : layout.row_nnz[p] + 1;
    layout.row_adr[i] = layout.nnz;
    layout.nnz += layout.row_nnz[i];
  }
  layout.column.reserve(layout.nnz);
  for (int i = 0; i < layout.size; ++i) {
    for (int j = i; j >= 0; j = parent[j]) layout.column.push_back(j);
  }
  // Subtree ranges, kept only when every dof's subtree is the contiguous range after it: then
  // each dof in (i, subtree_end[i]) has i on its chain.
  std::vector<int> subtree_end(layout.size), row_end(layout.size);
  for (int i = 0; i < layout.size; ++i) {
    subtree_end[i] = i + 1;
    row_end[i] = layout.row_adr[i] + layout.row_nnz[i];
  }
  for (int i = layout.size - 1; i >= 0; --i) {
    if (parent[i] >= 0) subtree_end[parent[i]] = std::max(subtree_end[parent[i]], subtree_end[i]);
  }
  long descendants = 0;
  for (int i = 0; i < layout.size; ++i) descendants += layout.row_nnz[i] - 1;
  long spans = 0;  // equals `descendants` exactly when no range holds a dof of another subtree
  for (int i = 0; i < layout.size; ++i) spans += subtree_end[i] - i - 1;
  if (spans == descendants) {
    layout.subtree_end = std::move(subtree_end);
    layout.row_end = std::move(row_end);
  }
  return layout;
}

Eigen::MatrixXd TreeSparseToDense(const TreeSparseLayout& layout, const double* matrix) {
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(layout.size, layout.size);
  for (int i = 0; i < layout.size; ++i) {
    const double* row = matrix + layout.row_adr[i];
    int k = 0;
    for (int j = i; j >= 0; j = layout.parent[j], ++k) {
      dense(i, j) = row[k];
      dense(j, i) = row[k];
    }
  }
  return dense;
}

}  // namespace alsim
