#include "engine/solver/nsn/conjugate_residual.h"

#include <algorithm>
#include <cmath>

namespace alsim {

void KrylovWorkspace::Resize(int n) {
  if (n <= capacity_) return;
  storage_.assign(static_cast<std::size_t>(kVectors) * n, 0.0);
  capacity_ = n;
}

namespace {

// The vectors of a workspace, by role.
enum Slot { kInverseDiagonal = 0, kR, kZ, kP, kAp, kAz, kY };

// sum_i u_i v_i in index order.
double Dot(const double* u, const double* v, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += u[i] * v[i];
  return sum;
}

double Norm(double squared) { return std::sqrt(std::max(0.0, squared)); }

// P^-1: 1 / d_i for a positive, finite d_i; else 1 (and P = I without a diagonal).
void InvertDiagonal(const double* diagonal, int n, double* inverse) {
  for (int i = 0; i < n; ++i) {
    const double d = diagonal == nullptr ? 1.0 : diagonal[i];
    inverse[i] = d > 0 && std::isfinite(d) ? 1 / d : 1.0;
  }
}

void Record(ResidualHistory* history, int k, double value) {
  if (history == nullptr || k >= history->capacity) return;
  history->values[k] = value;
  history->size = k + 1;
}

// Starts a solve: sizes the workspace, zeroes x, sets r = b and z = P^-1 b, records and returns
// the initial residual ||b||_{P^-1}.
double Start(const double* diagonal, const double* b, int n, KrylovWorkspace* workspace, double* x,
             ResidualHistory* history) {
  workspace->Resize(n);
  double* inverse = workspace->vector(kInverseDiagonal);
  double* r = workspace->vector(kR);
  double* z = workspace->vector(kZ);
  InvertDiagonal(diagonal, n, inverse);
  for (int i = 0; i < n; ++i) {
    x[i] = 0;
    r[i] = b[i];
    z[i] = inverse[i] * b[i];
  }
  if (history != nullptr) history->size = 0;
  const double residual = Norm(Dot(r, z, n));
  Record(history, 0, residual);
  return residual;
}

}  // namespace

KrylovResult JacobiConjugateResidual(LinearOperatorRef a, const double* diagonal, const double* b,
                                     int n, const KrylovOptions& options,
                                     KrylovWorkspace* workspace, double* x,
                                     ResidualHistory* history) {
  KrylovResult result;
  result.initial_residual = Start(diagonal, b, n, workspace, x, history);
  result.residual = result.initial_residual;
  if (result.initial_residual == 0) {
    result.converged = true;
    return result;
  }
  const double* inverse = workspace->vector(kInverseDiagonal);
  double* r = workspace->vector(kR);
  double* z = workspace->vector(kZ);
  double* p = workspace->vector(kP);
  double* ap = workspace->vector(kAp);
  double* az = workspace->vector(kAz);
  double* y = workspace->vector(kY);
  const bool monitor = history != nullptr || options.relative_tolerance > 0;
  const double target = options.relative_tolerance * result.initial_residual;

  a(z, az);
  for (int i = 0; i < n; ++i) {
    p[i] = z[i];
    ap[i] = az[i];
  }
  double rho = Dot(z, az, n);
  const double threshold = kKrylovBreakdown * rho;
  if (!(rho > 0) || !std::isfinite(rho)) {
    result.breakdown = true;
    return result;
  }
  for (int k = 0; k < options.max_iterations; ++k) {
    for (int i = 0; i < n; ++i) y[i] = inverse[i] * ap[i];
    const double curvature = Dot(ap, y, n);
    if (!(curvature > threshold) || !std::isfinite(curvature)) {
      result.breakdown = true;
      break;
    }
    const double alpha = rho / curvature;
    for (int i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
      z[i] -= alpha * y[i];
    }
    ++result.iterations;
    if (monitor) {
      result.residual = Norm(Dot(r, z, n));
      Record(history, result.iterations, result.residual);
      if (options.relative_tolerance > 0 && result.residual <= target) {
        result.converged = true;
        return result;
      }
    }
    if (k + 1 == options.max_iterations) break;  // the next direction is not needed
    a(z, az);
    const double next_rho = Dot(z, az, n);
    if (!(next_rho > threshold) || !std::isfinite(next_rho)) {
      result.breakdown = true;
      break;
    }
    const double beta = next_rho / rho;
    rho = next_rho;
    for (int i = 0; i < n; ++i) {
      p[i] = z[i] + beta * p[i];
      ap[i] = az[i] + beta * ap[i];
    }
  }
  if (!monitor) result.residual = Norm(Dot(r, z, n));
  return result;
}

KrylovResult JacobiConjugateGradient(LinearOperatorRef a, const double* diagonal, const double* b,
                                     int n, const KrylovOptions& options,
                                     KrylovWorkspace* workspace, double* x,
                                     ResidualHistory* history) {
  KrylovResult result;
  result.initial_residual = Start(diagonal, b, n, workspace, x, history);
  result.residual = result.initial_residual;
  if (result.initial_residual == 0) {
    result.converged = true;
    return result;
  }
  const double* inverse = workspace->vector(kInverseDiagonal);
  double* r = workspace->vector(kR);
  double* z = workspace->vector(kZ);
  double* p = workspace->vector(kP);
  double* ap = workspace->vector(kAp);
  const double target = options.relative_tolerance * result.initial_residual;

  for (int i = 0; i < n; ++i) p[i] = z[i];
  double rz = Dot(r, z, n);
  const double threshold = kKrylovBreakdown * rz;
  for (int k = 0; k < options.max_iterations; ++k) {
    a(p, ap);
    const double curvature = Dot(p, ap, n);
    if (!(curvature > threshold) || !std::isfinite(curvature)) {
      result.breakdown = true;
      break;
    }
    const double alpha = rz / curvature;
    for (int i = 0; i < n; ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
      z[i] = inverse[i] * r[i];
    }
    ++result.iterations;
    const double next_rz = Dot(r, z, n);
    result.residual = Norm(next_rz);
    Record(history, result.iterations, result.residual);
    if (options.relative_tolerance > 0 && result.residual <= target) {
      result.converged = true;
      break;
    }
    if (!(next_rz > threshold) || !std::isfinite(next_rz)) {
      result.breakdown = true;
      break;
    }
    const double beta = next_rz / rz;
    rz = next_rz;
    for (int i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
  }
  return result;
}

KrylovResult JacobiIteration(LinearOperatorRef a, const double* diagonal, const double* b, int n,
                             const KrylovOptions& options, KrylovWorkspace* workspace, double* x,
                             ResidualHistory* history) {
  KrylovResult result;
  result.initial_residual = Start(diagonal, b, n, workspace, x, history);
  result.residual = result.initial_residual;
  if (result.initial_residual == 0) {
    result.converged = true;
    return result;
  }
  const double* inverse = workspace->vector(kInverseDiagonal);
  double* r = workspace->vector(kR);
  double* z = workspace->vector(kZ);
  double* ax = workspace->vector(kAp);
  const double target = options.relative_tolerance * result.initial_residual;
  const double omega = options.relaxation;

  for (int k = 0; k < options.max_iterations; ++k) {
    for (int i = 0; i < n; ++i) x[i] += omega * z[i];  // z = P^-1 r
    ++result.iterations;
    a(x, ax);
    for (int i = 0; i < n; ++i) {
      r[i] = b[i] - ax[i];
      z[i] = inverse[i] * r[i];
    }
    result.residual = Norm(Dot(r, z, n));
    Record(history, result.iterations, result.residual);
    if (options.relative_tolerance > 0 && result.residual <= target) {
      result.converged = true;
      break;
    }
    if (!std::isfinite(result.residual)) {
      result.breakdown = true;
      break;
    }
  }
  return result;
}

KrylovResult GaussSeidelIteration(RowProductRef rows, const double* diagonal, const double* b,
                                  int n, const KrylovOptions& options, KrylovWorkspace* workspace,
                                  double* x, ResidualHistory* history) {
  KrylovResult result;
  result.initial_residual = Start(diagonal, b, n, workspace, x, history);
  result.residual = result.initial_residual;
  if (result.initial_residual == 0) {
    result.converged = true;
    return result;
  }
  const double* inverse = workspace->vector(kInverseDiagonal);
  double* r = workspace->vector(kR);
  const bool monitor = history != nullptr || options.relative_tolerance > 0;
  const double target = options.relative_tolerance * result.initial_residual;
  const double omega = options.relaxation;
  // ||b - A x||_{P^-1} by n row products.
  auto residual = [&]() {
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      r[i] = b[i] - rows(i, x);
      sum += r[i] * (inverse[i] * r[i]);
    }
    return Norm(sum);
  };

  for (int k = 0; k < options.max_iterations; ++k) {
    for (int i = 0; i < n; ++i) x[i] += omega * inverse[i] * (b[i] - rows(i, x));
    ++result.iterations;
    if (monitor) {
      result.residual = residual();
      Record(history, result.iterations, result.residual);
      if (options.relative_tolerance > 0 && result.residual <= target) {
        result.converged = true;
        return result;
      }
      if (!std::isfinite(result.residual)) {
        result.breakdown = true;
        return result;
      }
    }
  }
  if (!monitor) result.residual = residual();
  return result;
}

}  // namespace alsim
