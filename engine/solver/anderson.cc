#include "engine/solver/anderson.h"

#include <algorithm>
#include <cmath>

namespace alsim {
namespace {

double Dot(const double* a, const double* b, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

AndersonAccelerator::AndersonAccelerator(double* storage, int size, int memory)
    : storage_(storage),
      size_(size),
      memory_(std::min(memory, kMaxMemory)),
      previous_g_(storage + static_cast<long>(2 * memory_) * size),
      previous_f_(storage + static_cast<long>(2 * memory_ + 1) * size),
      f_(storage + static_cast<long>(2 * memory_ + 2) * size) {}

void AndersonAccelerator::Reset() {
  columns_ = 0;
  next_ = 0;
  has_previous_ = false;
}

bool AndersonAccelerator::Step(const double* w, double* g) {
  const int n = size_;
  double norm2 = 0;
  for (int i = 0; i < n; ++i) {
    f_[i] = g[i] - w[i];
    norm2 += f_[i] * f_[i];
  }
  const double norm = std::sqrt(norm2);
  if (has_previous_ && norm > previous_norm_) {
    Reset();  // the last extrapolation did worse than a plain step would have
  } else if (has_previous_) {
    const int k = next_;
    double* dg = column_g(k);
    double* df = column_f(k);
    for (int i = 0; i < n; ++i) {
      dg[i] = g[i] - previous_g_[i];
      df[i] = f_[i] - previous_f_[i];
    }
    next_ = (next_ + 1) % memory_;
    columns_ = std::min(columns_ + 1, memory_);
    for (int j = 0; j < columns_; ++j) {
      gram_[k][j] = gram_[j][k] = Dot(df, column_f(j), n);
    }
  }
  std::copy(g, g + n, previous_g_);
  std::copy(f_, f_ + n, previous_f_);
  has_previous_ = true;
  previous_norm_ = norm;
  const int m = columns_;
  if (m == 0) return false;

  // gamma from (dF^T dF + eps I) gamma = dF^T f by a small Cholesky; the Tikhonov term, relative
  // to the scale of dF, keeps nearly parallel columns harmless.
  double matrix[kMaxMemory][kMaxMemory], gamma[kMaxMemory];
  double trace = 0;
  for (int a = 0; a < m; ++a) trace += gram_[a][a];
  if (!(trace > 0) || !std::isfinite(trace)) {
    Reset();
    return false;
  }
  for (int a = 0; a < m; ++a) {
    for (int b = 0; b < m; ++b) matrix[a][b] = gram_[a][b];
    matrix[a][a] += 1e-10 * trace;
    gamma[a] = Dot(column_f(a), f_, n);
  }
  for (int a = 0; a < m; ++a) {  // L L^T in the lower triangle
    for (int b = 0; b < a; ++b) matrix[a][a] -= matrix[a][b] * matrix[a][b];
    if (!(matrix[a][a] > 0)) {
      Reset();
      return false;
    }
    matrix[a][a] = std::sqrt(matrix[a][a]);
    for (int c = a + 1; c < m; ++c) {
      for (int b = 0; b < a; ++b) matrix[c][a] -= matrix[c][b] * matrix[a][b];
      matrix[c][a] /= matrix[a][a];
    }
  }
  for (int a = 0; a < m; ++a) {
    for (int b = 0; b < a; ++b) gamma[a] -= matrix[a][b] * gamma[b];
    gamma[a] /= matrix[a][a];
  }
  for (int a = m - 1; a >= 0; --a) {
    for (int b = a + 1; b < m; ++b) gamma[a] -= matrix[b][a] * gamma[b];
    gamma[a] /= matrix[a][a];
  }
  for (int a = 0; a < m; ++a) {
    const double* dg = column_g(a);
    const double weight = gamma[a];
    for (int i = 0; i < n; ++i) g[i] -= weight * dg[i];
  }
  return true;
}

}  // namespace alsim
