#include "engine/solver/admm/anderson.h"

#include <algorithm>
#include <cmath>

namespace alsim {
namespace {

// Four partial sums: a single running sum would wait on each add in turn.
double Dot(const double* a, const double* b, int n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

double SquaredDistance(const double* a, const double* b, int n) {
  double s0 = 0, s1 = 0;
  int i = 0;
  for (; i + 2 <= n; i += 2) {
    s0 += (a[i] - b[i]) * (a[i] - b[i]);
    s1 += (a[i + 1] - b[i + 1]) * (a[i + 1] - b[i + 1]);
  }
  for (; i < n; ++i) s0 += (a[i] - b[i]) * (a[i] - b[i]);
  return s0 + s1;
}

// An extrapolation may move the iterate at most this many plain steps (||f||) away from the plain
// iterate g. A linear iteration with rate rho has its fixed point 1 / (1 - rho) plain steps away,
// so this admits rates up to 0.999; farther jumps came from nearly parallel history columns and
// blew islands up (humanoid100 went to NaN with eq. (43) checked every 40 iterations, or every
// 20 with relaxation 1.4). At 1000 no default run of our scenes changed; a tighter bound cost
// iterations (docs/benchmarks-history.md).
constexpr double kMaxExtrapolationSteps = 1000;

}  // namespace

AndersonAccelerator::AndersonAccelerator(double* storage, int size, int memory)
    : storage_(storage),
      size_(size),
      memory_(std::min(memory, kMaxMemory)),
      previous_g_(storage + static_cast<long>(2 * memory_) * size),
      previous_f_(storage + static_cast<long>(2 * memory_ + 1) * size) {}

void AndersonAccelerator::Reset() {
  columns_ = 0;
  next_ = 0;
  has_previous_ = false;
}

bool AndersonAccelerator::Step(const double* w, double* g, bool extrapolate) {
  const int n = size_;
  // One pass: f = g - w, the new columns g - g_prev and f - f_prev (written to the ring slot
  // before the safeguard below decides whether to keep them), and g, f become the previous ones.
  const int k = next_;
  double* dg = column_g(k);
  double* df = column_f(k);
  double norm2 = 0;  // the pass stores four values per element, so one sum keeps up
  if (has_previous_) {
    for (int i = 0; i < n; ++i) {
      const double f = g[i] - w[i];
      dg[i] = g[i] - previous_g_[i];
      df[i] = f - previous_f_[i];
      previous_g_[i] = g[i];
      previous_f_[i] = f;
      norm2 += f * f;
    }
  } else {
    for (int i = 0; i < n; ++i) {
      const double f = g[i] - w[i];
      previous_g_[i] = g[i];
      previous_f_[i] = f;
      norm2 += f * f;
    }
  }
  const double norm = std::sqrt(norm2);
  const double* f = previous_f_;
  if (has_previous_ && norm > previous_norm_) {
    Reset();  // the last extrapolation did worse than a plain step would have
  } else if (has_previous_) {
    next_ = (next_ + 1) % memory_;
    columns_ = std::min(columns_ + 1, memory_);
    for (int j = 0; j < columns_; ++j) {
      if (j == k) continue;
      gram_[k][j] = gram_[j][k] = Dot(df, column_f(j), n);
      projection_[j] += gram_[k][j];  // dF_j^T f = dF_j^T f_prev + dF_j^T df
    }
    gram_[k][k] = Dot(df, df, n);
    projection_[k] = Dot(df, f, n);
  }
  has_previous_ = true;
  previous_norm_ = norm;
  const int m = columns_;
  if (m == 0 || !extrapolate) return false;

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
    gamma[a] = projection_[a];
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
  for (int a = 0; a < m; ++a) {  // one pass per column: each vectorizes, with no sum to wait on
    const double* column = column_g(a);
    const double weight = gamma[a];
    for (int i = 0; i < n; ++i) g[i] -= weight * column[i];
  }
  // previous_g_ still holds the plain iterate.
  const double moved2 = SquaredDistance(g, previous_g_, n);
  if (!(moved2 <= kMaxExtrapolationSteps * kMaxExtrapolationSteps * norm2)) {
    std::copy(previous_g_, previous_g_ + n, g);
    Reset();
    return false;
  }
  return true;
}

}  // namespace alsim
