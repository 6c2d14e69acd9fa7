// Sparse Cholesky factorization A = L L^T of symmetric positive definite matrices through
// CHOLMOD's supernodal method, for a sequence of matrices that mostly keep one sparsity pattern
// (the ADMM "No Sub" baseline, eq. 28 of the SubADMM paper: one matrix per island per step,
// refactored whenever beta changes). The symbolic analysis (AMD fill-reducing ordering,
// elimination tree, supernodes) runs only when the pattern differs from the previous one;
// otherwise only the numeric factorization runs.
//
// Each instance owns its cholmod_common, so different instances may be used from different
// threads at once; one instance is not thread-safe. AMD (not METIS) is the only ordering tried,
// which keeps the factorization a deterministic function of the matrix.
//
// CHOLMOD allocates internally with malloc: on every new pattern (the matrix, the symbolic
// factor), and on each numeric factorization (supernodal workspace). That is acceptable for a
// baseline, but unlike the rest of the engine a step through this class is not allocation-free.
// Debian's CHOLMOD is also built with OpenMP: for larger matrices (seen with 600 rows, not with
// 18) its numeric factorization runs short parallel loops on libgomp's own threads, outside TBB
// and alsim's thread count. The results do not depend on it (300 steps of ball_pile's 600-dof
// island through "No Sub" are bit-identical for 1 and 2 TBB threads); ThreadSanitizer, which
// cannot see libgomp's barriers, reports those loops as races inside libcholmod.
#pragma once

#include <memory>

namespace alsim {

class CholmodLlt {
 public:
  CholmodLlt();
  ~CholmodLlt();
  CholmodLlt(const CholmodLlt&) = delete;
  CholmodLlt& operator=(const CholmodLlt&) = delete;

  // Sets the pattern of the n x n matrix's upper triangle in compressed-column form: column c
  // holds the rows row_index[column_start[c] .. column_start[c + 1]), increasing, each <= c, the
  // diagonal included. Returns true when it differs from the current pattern, which discards the
  // analysis and the values (the next Factor analyzes again); false keeps both.
  bool SetPattern(int n, const int* column_start, const int* row_index);

  // The stored entries' values in pattern order (column_start[n] of them); write them before
  // Factor. Valid until the next SetPattern that changes the pattern.
  double* values();

  // Numeric factorization of the current values (after the symbolic analysis if the pattern is
  // new). Returns false if the matrix is not positive definite or CHOLMOD fails.
  bool Factor();

  // x (n) <- A^{-1} x with the last successful factorization.
  void Solve(double* x);

  int size() const;
  // Number of symbolic analyses so far (the pattern changes), for tests and diagnostics.
  long analyses() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace alsim
