#include "engine/dynamics/tree_sparse_layout.h"

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
