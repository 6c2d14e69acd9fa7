#include "engine/linalg/tree_ldl.h"

#include <algorithm>

#include "engine/linalg/short_chain.h"

namespace alsim {
namespace {

// A range that is one chain of at most kMaxChainDofs dofs takes the fixed-size kernels of
// engine/linalg/short_chain.h: unrolled loops without column indices, which pays most on scenes of
// many free bodies (docs/benchmarks-history.md).
int ChainLength(const TreeSparseLayout& layout, int begin, int end) {
  const int n = end - begin;
  return n >= 1 && ShortChainLength(layout, end - 1) == n ? n : 0;
}

template <int N>
void ChainFactor(double* chain) {
#pragma GCC unroll 8
  for (int k = N - 1; k >= 0; --k) {
    double* row_k = chain + ChainRow(k);
    const double inv_diag = 1.0 / row_k[0];
#pragma GCC unroll 8
    for (int p = 1; p <= k; ++p) {
      const double a = row_k[p] * inv_diag;
      double* row_i = chain + ChainRow(k - p);
#pragma GCC unroll 8
      for (int t = 0; t <= k - p; ++t) row_i[t] -= row_k[p + t] * a;
      row_k[p] = a;
    }
  }
}

template <int N>
void ChainSolve(const double* chain, double* x) {
#pragma GCC unroll 8
  for (int i = N - 1; i >= 0; --i) {
    const double* row = chain + ChainRow(i);
    const double xi = x[i];
#pragma GCC unroll 8
    for (int k = 1; k <= i; ++k) x[i - k] -= row[k] * xi;
  }
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) x[i] /= chain[ChainRow(i)];
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    const double* row = chain + ChainRow(i);
    double xi = x[i];
#pragma GCC unroll 8
    for (int k = i; k >= 1; --k) xi -= row[k] * x[i - k];  // as SubtractAncestorTerms
    x[i] = xi;
  }
}

template <int N>
void ChainMultiply(const double* chain, const double* x, double* y) {
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) y[i] = 0;
#pragma GCC unroll 8
  for (int i = 0; i < N; ++i) {
    const double* row = chain + ChainRow(i);
    y[i] += row[0] * x[i];
#pragma GCC unroll 8
    for (int k = 1; k <= i; ++k) {
      y[i] += row[k] * x[i - k];
      y[i - k] += row[k] * x[i];
    }
  }
}

}  // namespace

// RBDA Table 6.3 on the row storage: for k from the last dof down, each ancestor i of k (at
// offset p in row k) receives H(i, j) -= H(k, j) H(k, i) / H(k, k) for every j on i's chain,
// which is row i[t] -= row k[p + t] * a for t = 0 .. depth(i); then H(k, i) becomes a.
void TreeLdlFactor(const TreeSparseLayout& layout, double* matrix) {
  TreeLdlFactorRange(layout, 0, layout.size, matrix);
}

void TreeLdlSolve(const TreeSparseLayout& layout, const double* factor, double* x) {
  TreeLdlSolveRange(layout, 0, layout.size, factor, x);
}

void TreeLdlFactorRange(const TreeSparseLayout& layout, int begin, int end, double* matrix) {
  if (const int n = ChainLength(layout, begin, end)) {
    double* chain = matrix + layout.row_adr[begin];
    WithChainLength(n, [chain](auto length) { ChainFactor<decltype(length)::value>(chain); });
    return;
  }
  for (int k = end - 1; k >= begin; --k) {
    double* row_k = matrix + layout.row_adr[k];
    const int nnz_k = layout.row_nnz[k];
    const double inv_diag = 1.0 / row_k[0];
    int i = layout.parent[k];
    for (int p = 1; p < nnz_k; ++p, i = layout.parent[i]) {
      const double a = row_k[p] * inv_diag;
      double* row_i = matrix + layout.row_adr[i];
      const double* tail_k = row_k + p;
      const int nnz_i = nnz_k - p;
      for (int t = 0; t < nnz_i; ++t) row_i[t] -= tail_k[t] * a;
      row_k[p] = a;
    }
  }
}

bool TreeLdlRankOneUpdate(const TreeSparseLayout& layout, int deepest, double sigma, double* w,
                          double* factor) {
  double alpha = sigma;
  bool positive = true;
  for (int k = deepest; k >= 0; k = layout.parent[k]) {
    const double p = w[k];
    w[k] = 0;
    if (p == 0 || !positive) continue;
    double* row = factor + layout.row_adr[k];
    const double pivot = row[0] + alpha * p * p;
    if (!(pivot > 0)) {
      positive = false;
      continue;
    }
    const double beta = alpha * p / pivot;
    alpha *= row[0] / pivot;
    row[0] = pivot;
    const int* column = layout.column.data() + layout.row_adr[k];
    for (int t = 1; t < layout.row_nnz[k]; ++t) {
      double& wa = w[column[t]];
      wa -= p * row[t];
      row[t] += beta * wa;
    }
  }
  return positive;
}

void TreeLdlTransposeSubstituteRange(const TreeSparseLayout& layout, int begin, int end,
                                     const double* factor, double* x) {
  // L^T y = x: y_i is final once all its descendants (higher indices) have been folded in. The
  // gather keeps each y_i in a register instead of a load-modify-store of an ancestor per dof.
  if (layout.subtrees_contiguous()) {
    for (int i = end - 1; i >= begin; --i) x[i] = GatherFromDescendants(layout, factor, x, i, x[i]);
    return;
  }
  for (int i = end - 1; i >= begin; --i) ScatterToAncestors(layout, factor, i, x[i], x);
}

void TreeLdlSolveRange(const TreeSparseLayout& layout, int begin, int end, const double* factor,
                       double* x) {
  if (const int n = ChainLength(layout, begin, end)) {
    const double* chain = factor + layout.row_adr[begin];
    WithChainLength(n, [chain, x, begin](auto length) {
      ChainSolve<decltype(length)::value>(chain, x + begin);
    });
    return;
  }
  TreeLdlTransposeSubstituteRange(layout, begin, end, factor, x);
  // D z = y.
  for (int i = begin; i < end; ++i) x[i] /= factor[layout.row_adr[i]];
  // L x = z: x_i depends only on its ancestors (lower indices).
  for (int i = begin; i < end; ++i) x[i] = SubtractAncestorTerms(layout, factor, x, i, x[i]);
}

void TreeSparseMultiplyRange(const TreeSparseLayout& layout, int begin, int end,
                             const double* matrix, const double* x, double* y) {
  if (const int n = ChainLength(layout, begin, end)) {
    const double* chain = matrix + layout.row_adr[begin];
    WithChainLength(n, [chain, x, y, begin](auto length) {
      ChainMultiply<decltype(length)::value>(chain, x + begin, y + begin);
    });
    return;
  }
  if (layout.subtrees_contiguous()) {
    // Each y_i summed in a register from row i (dof i, then its ancestors) and column i (its
    // descendants, the range after it), in the order the scatter below adds them: the scatter
    // adds to the ancestors' y_j in memory, one dependent add after another. Bit for bit the
    // same, and faster (docs/benchmarks-history.md).
    for (int i = begin; i < end; ++i) {
      const double* row = matrix + layout.row_adr[i];
      const int* column = layout.column.data() + layout.row_adr[i];
      const int depth = layout.row_nnz[i];
      double yi = 0;
      yi += row[0] * x[i];  // from 0 as the scatter's y: a -0.0 product sums to +0.0 there too
      for (int k = 1; k < depth; ++k) yi += row[k] * x[column[k]];
      for (int j = i + 1; j < layout.subtree_end[i]; ++j)
        yi += matrix[layout.row_end[j] - depth] * x[j];
      y[i] = yi;
    }
    return;
  }
  for (int i = begin; i < end; ++i) y[i] = 0;
  for (int i = begin; i < end; ++i) {
    const double* row = matrix + layout.row_adr[i];
    y[i] += row[0] * x[i];
    int j = layout.parent[i];
    for (int k = 1; k < layout.row_nnz[i]; ++k, j = layout.parent[j]) {
      y[i] += row[k] * x[j];
      y[j] += row[k] * x[i];
    }
  }
}

}  // namespace alsim
