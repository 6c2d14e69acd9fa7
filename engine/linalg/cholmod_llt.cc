#include "engine/linalg/cholmod_llt.h"

#include <suitesparse/cholmod.h>

#include <algorithm>

namespace alsim {

struct CholmodLlt::Impl {
  cholmod_common common;
  cholmod_sparse* matrix = nullptr;  // upper triangle (stype 1), int indices, real values
  cholmod_factor* factor = nullptr;  // symbolic after analysis, numeric after Factor
  cholmod_dense* rhs = nullptr;      // n x 1
  cholmod_dense* solution = nullptr;
  cholmod_dense* work_y = nullptr;  // cholmod_solve2's reusable workspace
  cholmod_dense* work_e = nullptr;
  int n = 0;
  bool analyzed = false;
  bool factored = false;
  long analyses = 0;

  Impl() {
    cholmod_start(&common);
    common.supernodal = CHOLMOD_SUPERNODAL;
    common.nmethods = 1;
    common.method[0].ordering = CHOLMOD_AMD;
    common.postorder = 1;
    common.print = 0;  // report through return values, never on stderr
  }
  ~Impl() {
    FreeAll();
    cholmod_finish(&common);
  }

  void FreeAll() {
    cholmod_free_sparse(&matrix, &common);
    cholmod_free_factor(&factor, &common);
    cholmod_free_dense(&rhs, &common);
    cholmod_free_dense(&solution, &common);
    cholmod_free_dense(&work_y, &common);
    cholmod_free_dense(&work_e, &common);
    analyzed = false;
    factored = false;
  }

  bool SamePattern(int size, const int* column_start, const int* row_index) const {
    if (matrix == nullptr || size != n) return false;
    const int* p = static_cast<const int*>(matrix->p);
    const int* i = static_cast<const int*>(matrix->i);
    if (!std::equal(column_start, column_start + size + 1, p)) return false;
    return std::equal(row_index, row_index + column_start[size], i);
  }
};

CholmodLlt::CholmodLlt() : impl_(std::make_unique<Impl>()) {}
CholmodLlt::~CholmodLlt() = default;

bool CholmodLlt::SetPattern(int n, const int* column_start, const int* row_index) {
  Impl& s = *impl_;
  if (s.SamePattern(n, column_start, row_index)) return false;
  s.FreeAll();
  s.n = n;
  const int nnz = column_start[n];
  s.matrix = cholmod_allocate_sparse(n, n, std::max(nnz, 1), /*sorted=*/1, /*packed=*/1,
                                     /*stype=*/1, CHOLMOD_REAL, &s.common);
  std::copy(column_start, column_start + n + 1, static_cast<int*>(s.matrix->p));
  std::copy(row_index, row_index + nnz, static_cast<int*>(s.matrix->i));
  std::fill_n(static_cast<double*>(s.matrix->x), nnz, 0.0);
  s.rhs = cholmod_allocate_dense(n, 1, n, CHOLMOD_REAL, &s.common);
  return true;
}

double* CholmodLlt::values() { return static_cast<double*>(impl_->matrix->x); }

bool CholmodLlt::Factor() {
  Impl& s = *impl_;
  s.factored = false;
  if (s.matrix == nullptr) return false;
  if (!s.analyzed) {
    s.factor = cholmod_analyze(s.matrix, &s.common);
    if (s.factor == nullptr) return false;
    s.analyzed = true;
    ++s.analyses;
  }
  if (!cholmod_factorize(s.matrix, s.factor, &s.common)) return false;
  s.factored = s.common.status == CHOLMOD_OK;
  return s.factored;
}

void CholmodLlt::Solve(double* x) {
  Impl& s = *impl_;
  if (!s.factored) return;
  double* b = static_cast<double*>(s.rhs->x);
  std::copy(x, x + s.n, b);
  cholmod_solve2(CHOLMOD_A, s.factor, s.rhs, nullptr, &s.solution, nullptr, &s.work_y, &s.work_e,
                 &s.common);
  const double* solution = static_cast<const double*>(s.solution->x);
  std::copy(solution, solution + s.n, x);
}

int CholmodLlt::size() const { return impl_->n; }

long CholmodLlt::analyses() const { return impl_->analyses; }

}  // namespace alsim
