// Sparse LDL^T of matrices with branch-induced sparsity (RBDA §6.5, Table 6.3 "LTDL"):
// M = L^T D L with L unit lower triangular and D diagonal. Because every dof's parent precedes
// it, eliminating from the last dof to the first creates no fill-in: L has the sparsity of M and
// is stored over it (TreeSparseLayout). Works on any matrix with that layout (the mass matrix,
// or a solver's system matrix built from the same tree).
#pragma once

#include "engine/linalg/tree_sparse_layout.h"

namespace alsim {

// Factors `matrix` (layout storage, symmetric positive definite) in place: afterwards the
// off-diagonal entries hold L and the diagonal entries hold D. Cost sum_i depth(i)^2.
void TreeLdlFactor(const TreeSparseLayout& layout, double* matrix);

// Overwrites x (layout.size) with M^{-1} x, given the factor from TreeLdlFactor:
// solve L^T y = x, then D z = y, then L x = z (RBDA §6.5, back- and forward-substitution).
void TreeLdlSolve(const TreeSparseLayout& layout, const double* factor, double* x);

// The same on the dofs [begin, end) only, which must be closed under parents (a union of whole
// kinematic trees, e.g. one subsystem): trees share no entries, so each can be factored and
// solved on its own, in parallel. x is indexed by global dof.
void TreeLdlFactorRange(const TreeSparseLayout& layout, int begin, int end, double* matrix);
void TreeLdlSolveRange(const TreeSparseLayout& layout, int begin, int end, const double* factor,
                       double* x);

// Rank-1 update of a factor from TreeLdlFactor(Range): afterwards `factor` holds the factor of
// M + sigma w w^T, for w nonzero only on dof `deepest` and its ancestors (one chain; w indexed by
// global dof, left zero on return). With M = sum_k D_k l_k l_k^T, l_k = e_k + sum over ancestors
// a of L_ka e_a, the chain's dofs are visited leaf to root (the elimination order), each by the
// classic update of Gill, Golub, Murray and Saunders (1974, method C1): p = w_k,
// D_k' = D_k + alpha p^2, beta = alpha p / D_k', alpha <- alpha D_k / D_k', and for each ancestor
// a: w_a -= p L_ka, L_ka += beta w_a. Cost: sum over the chain of depth(k), against the
// factorization's sum over every dof of depth(k)^2. A downdate (sigma < 0) of a positive definite
// result stays positive definite in exact arithmetic; returns false if a pivot does not (the
// factor is then partly updated: factor again).
bool TreeLdlRankOneUpdate(const TreeSparseLayout& layout, int deepest, double sigma, double* w,
                          double* factor);

// The first substitution of TreeLdlSolveRange alone: x <- L^{-T} x on the dofs [begin, end)
// (closed under parents), for solvers that combine L^{-T} columns themselves.
void TreeLdlTransposeSubstituteRange(const TreeSparseLayout& layout, int begin, int end,
                                     const double* factor, double* x);

// The two forms of one step of L^T y = x (the back-substitution), for loops that fuse other work
// with it. Scatter: dof i, final at y_i, subtracts L_ia y_i from each ancestor a. Gather (in a
// depth-first layout, TreeSparseLayout::subtrees_contiguous): dof i subtracts L_ji y_j of each
// descendant j from x_i, the last descendant first; it returns y_i. Both apply the same
// operations in the same order to each entry, so they give the same bits.
inline void ScatterToAncestors(const TreeSparseLayout& layout, const double* factor, int i,
                               double yi, double* y) {
  const double* row = factor + layout.row_adr[i];
  const int* column = layout.column.data() + layout.row_adr[i];
  for (int k = 1; k < layout.row_nnz[i]; ++k) y[column[k]] -= row[k] * yi;
}
inline double GatherFromDescendants(const TreeSparseLayout& layout, const double* factor,
                                    const double* y, int i, double xi) {
  const int depth = layout.row_nnz[i];
  for (int j = layout.subtree_end[i] - 1; j > i; --j)
    xi -= factor[layout.row_end[j] - depth] * y[j];
  return xi;
}

// One step of L x = z (the forward substitution): returns x_i = z_i - sum_a L_ia x_a over the
// ancestors a of dof i. The farthest ancestor's term comes first and the parent's last: the
// parent's x_a is the newest value, so the subtractions that do not need it run while it is
// being computed (faster than parent first with the same instructions; docs/benchmarks-history.md).
inline double SubtractAncestorTerms(const TreeSparseLayout& layout, const double* factor,
                                    const double* x, int i, double zi) {
  const double* row = factor + layout.row_adr[i];
  const int* column = layout.column.data() + layout.row_adr[i];
  for (int k = layout.row_nnz[i] - 1; k >= 1; --k) zi -= row[k] * x[column[k]];
  return zi;
}

// y = matrix x on the dofs [begin, end) (closed under parents), for a symmetric matrix in layout
// storage (each stored entry acts twice). x and y are indexed by global dof.
void TreeSparseMultiplyRange(const TreeSparseLayout& layout, int begin, int end,
                             const double* matrix, const double* x, double* y);

}  // namespace alsim
