// Fixed-size kernels for short serial chains of dofs (a free body's 6, a ball joint's 3, a short
// arm). In the tree storage (engine/linalg/tree_sparse_layout.h) the rows of a chain of
// consecutive dofs are consecutive too: row k of the chain starts k (k + 1) / 2 entries after
// the first, and its entry p is element (k, k - p). With the chain's length a template argument
// the loops over it unroll and need no column indices. Each kernel does the general loops'
// arithmetic in the same order, so the results are bit for bit the same.
#pragma once

#include <type_traits>

#include "engine/linalg/tree_sparse_layout.h"

namespace alsim {

constexpr int kMaxChainDofs = 6;

// Offset of the chain's row k from its first row.
constexpr int ChainRow(int k) { return k * (k + 1) / 2; }

// The length of the chain from dof `last` to its root when that chain has at most kMaxChainDofs
// dofs and they are consecutive (last - n + 1 .. last), else 0.
inline int ShortChainLength(const TreeSparseLayout& layout, int last) {
  const int n = layout.row_nnz[last];
  if (n > kMaxChainDofs) return 0;
  // The row lists the chain in decreasing order, so its root being last - n + 1 makes it
  // consecutive.
  return layout.column[layout.row_adr[last] + n - 1] == last - n + 1 ? n : 0;
}

// Calls kernel(std::integral_constant<int, n>) for a chain length n in [1, kMaxChainDofs].
template <class Kernel>
void WithChainLength(int n, const Kernel& kernel) {
  static_assert(kMaxChainDofs == 6, "the cases below list the lengths up to kMaxChainDofs");
  switch (n) {
    case 1:
      return kernel(std::integral_constant<int, 1>{});
    case 2:
      return kernel(std::integral_constant<int, 2>{});
    case 3:
      return kernel(std::integral_constant<int, 3>{});
    case 4:
      return kernel(std::integral_constant<int, 4>{});
    case 5:
      return kernel(std::integral_constant<int, 5>{});
    default:
      return kernel(std::integral_constant<int, 6>{});
  }
}

}  // namespace alsim
