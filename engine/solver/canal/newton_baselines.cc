#include "engine/solver/canal/newton_baselines.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace alsim {
namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();
// TRDogleg: the largest radius, m/s (N&W's Delta-hat) [OURS: effectively none].
constexpr double kMaxRadius = 1e10;
// DampedSN: De Luca, Facchinei & Kanzow's descent test g^T d <= -rho ||d||^p, their values.
constexpr double kDescentRho = 1e-8;
constexpr double kDescentPower = 2.1;

double Dot(const double* x, const double* y, int n) {
  double sum = 0;
  for (int k = 0; k < n; ++k) sum += x[k] * y[k];
  return sum;
}

bool AllFinite(const double* x, size_t size) {
  for (size_t k = 0; k < size; ++k) {
    if (!std::isfinite(x[k])) return false;
  }
  return true;
}

// y = M x and y = M^T x for the column-major n x n M.
void Multiply(const double* matrix, const double* x, int n, double* y) {
  std::fill(y, y + n, 0.0);
  for (int col = 0; col < n; ++col) {
    const double* column = matrix + static_cast<size_t>(col) * n;
    for (int row = 0; row < n; ++row) y[row] += column[row] * x[col];
  }
}

void MultiplyTransposed(const double* matrix, const double* x, int n, double* y) {
  for (int col = 0; col < n; ++col) y[col] = Dot(matrix + static_cast<size_t>(col) * n, x, n);
}

// The state both baselines share: the accepted velocity v with r(v), ||r(v)|| and its tolerance,
// the trial point, and whether the island's per-row arrays hold the trial's values (after a
// rejected step) rather than v's.
struct NewtonState {
  AlIsland& island;
  double* velocity;
  double* residual;
  DenseNewtonWorkspace& work;
  double norm = 0;
  double tolerance = 0;
  bool stale = false;

  // r at v (evaluates the rows at v).
  void EvaluateAtVelocity() {
    island.Evaluate(velocity, /*with_derivative=*/true);
    norm = island.Residual(velocity, residual, work.mass_product.data());
    tolerance = island.Tolerance();
    stale = false;
  }
  // r at the trial point v + t p into work.trial_residual; returns ||r||. The rows then hold the
  // trial's values until Accept or EvaluateAtVelocity.
  double EvaluateTrial(double t, const double* p) {
    const int n = island.n;
    for (int k = 0; k < n; ++k) work.trial[k] = velocity[k] + t * p[k];
    island.Evaluate(work.trial.data(), /*with_derivative=*/true);
    stale = true;
    return island.Residual(work.trial.data(), work.trial_residual.data(), work.mass_product.data());
  }
  // The last trial becomes v (the rows already hold its values).
  void Accept(double trial_norm) {
    const int n = island.n;
    std::copy(work.trial.begin(), work.trial.begin() + n, velocity);
    std::copy(work.trial_residual.begin(), work.trial_residual.begin() + n, residual);
    norm = trial_norm;
    tolerance = island.Tolerance();
    stale = false;
  }
  // J_r at v into work.jacobian, its LU into work.factors; false when J_r is singular. Sets
  // *broken when J_r has a non-finite entry.
  bool Factor(bool* broken) {
    const int n = island.n;
    const size_t size = static_cast<size_t>(n) * n;
    AssembleResidualJacobian(island, work.jacobian.data());
    if (!AllFinite(work.jacobian.data(), size)) {
      *broken = true;
      return false;
    }
    std::copy(work.jacobian.begin(), work.jacobian.begin() + size, work.factors.begin());
    return DenseLuFactor(work.factors.data(), n, work.pivot.data());
  }
  // g = J_r^T r, and the Newton point -J_r^{-1} r into work.newton when `factored`; returns
  // whether the Newton point exists (finite).
  bool Directions(bool factored) {
    const int n = island.n;
    MultiplyTransposed(work.jacobian.data(), residual, n, work.gradient.data());
    if (!factored) return false;
    for (int k = 0; k < n; ++k) work.newton[k] = -residual[k];
    DenseLuSolve(work.factors.data(), work.pivot.data(), n, work.newton.data());
    return AllFinite(work.newton.data(), n);
  }
  void Record(const int* dofs, std::vector<NewtonJacobianRecord>* record) const {
    if (record == nullptr) return;
    const int n = island.n;
    const int rows = island.set->num_rows;
    NewtonJacobianRecord entry;
    entry.beta = island.beta;
    entry.penalty.assign(island.set->constraints.size(), 0.0);
    for (int s = 0; s < island.num_constraints; ++s) {
      entry.penalty[island.constraints[s]] = island.Penalty(island.constraints[s]);
    }
    entry.dofs.assign(dofs, dofs + n);
    entry.velocity.assign(velocity, velocity + n);
    entry.residual.assign(residual, residual + n);
    entry.jacobian.assign(work.jacobian.begin(), work.jacobian.begin() + n * n);
    entry.outer_impulse.assign(island.outer_impulse, island.outer_impulse + rows);
    entry.shifted_bias.assign(island.shifted_bias, island.shifted_bias + rows);
    record->push_back(std::move(entry));
  }
  InnerSolveResult Finish(InnerSolveResult result) {
    if (stale) EvaluateAtVelocity();
    result.residual = norm;
    result.tolerance = tolerance;
    return result;
  }
};

}  // namespace

void DenseNewtonWorkspace::Resize(int size) {
  n = size;
  const size_t square = static_cast<size_t>(size) * size;
  if (jacobian.size() < square) {
    jacobian.resize(square);
    factors.resize(square);
  }
  if (pivot.size() < static_cast<size_t>(size)) {
    pivot.resize(size);
    for (std::vector<double>* vector :
         {&gradient, &newton, &cauchy, &step, &product, &trial, &trial_residual, &mass_product}) {
      vector->resize(size);
    }
  }
}

void AssembleResidualJacobian(const AlIsland& island, double* out) {
  const int n = island.n;
  std::fill(out, out + static_cast<size_t>(n) * n, 0.0);
  for (int col = 0; col < n; ++col) {
    for (int k = island.column_start[col]; k < island.column_start[col + 1]; ++k) {
      const int row = island.row_index[k];
      out[static_cast<size_t>(col) * n + row] += island.mass[k];
      if (row != col) out[static_cast<size_t>(row) * n + col] += island.mass[k];
    }
  }
  const JointSpaceJacobian& jacobian = *island.jacobian;
  for (int s = 0; s < island.num_constraints; ++s) {
    const int c = island.constraints[s];
    const Constraint& constraint = island.set->constraints[c];
    const int dim = constraint.dim;
    const double* D = island.derivative + 3 * constraint.row_adr;
    const double beta = island.Penalty(c);
    const int first = jacobian.entry_adr[c], last = first + jacobian.entry_num[c];
    for (int b = first; b < last; ++b) {
      double w[3] = {0, 0, 0};  // beta_i D J(:, b)
      for (int r = 0; r < dim; ++r) {
        for (int k = 0; k < dim; ++k) w[r] += D[dim * r + k] * jacobian.value[b][k];
        w[r] *= beta;
      }
      double* column = out + static_cast<size_t>(island.local_dof[jacobian.dof[b]]) * n;
      for (int a = first; a < last; ++a) {
        double sum = 0;
        for (int r = 0; r < dim; ++r) sum += jacobian.value[a][r] * w[r];
        column[island.local_dof[jacobian.dof[a]]] += sum;
      }
    }
  }
}

bool DenseLuFactor(double* a, int n, int* pivot) {
  auto at = [&](int row, int col) -> double& { return a[static_cast<size_t>(col) * n + row]; };
  double largest = 0;
  for (size_t k = 0; k < static_cast<size_t>(n) * n; ++k)
    largest = std::max(largest, std::abs(a[k]));
  const double singular = n * kEpsilon * largest;
  if (largest == 0) return false;
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i) {
      if (std::abs(at(i, k)) > std::abs(at(p, k))) p = i;
    }
    pivot[k] = p;
    if (std::abs(at(p, k)) <= singular) return false;
    if (p != k) {
      for (int j = 0; j < n; ++j) std::swap(at(k, j), at(p, j));
    }
    const double inverse = 1.0 / at(k, k);
    for (int i = k + 1; i < n; ++i) at(i, k) *= inverse;
    for (int j = k + 1; j < n; ++j) {
      const double factor = at(k, j);
      if (factor == 0) continue;
      double* column = a + static_cast<size_t>(j) * n;
      const double* multipliers = a + static_cast<size_t>(k) * n;
      for (int i = k + 1; i < n; ++i) column[i] -= multipliers[i] * factor;
    }
  }
  return true;
}

void DenseLuSolve(const double* factors, const int* pivot, int n, double* b) {
  for (int k = 0; k < n; ++k) std::swap(b[k], b[pivot[k]]);
  for (int k = 0; k < n; ++k) {  // L y = P b, L unit lower
    const double* column = factors + static_cast<size_t>(k) * n;
    for (int i = k + 1; i < n; ++i) b[i] -= column[i] * b[k];
  }
  for (int k = n - 1; k >= 0; --k) {  // U x = y
    const double* column = factors + static_cast<size_t>(k) * n;
    b[k] /= column[k];
    for (int i = 0; i < k; ++i) b[i] -= column[i] * b[k];
  }
}

InnerSolveResult TrustRegionDoglegSolve(AlIsland& island, double* velocity, double* residual,
                                        const CanalParameters& parameters,
                                        const SolverOptions& options, double deadline_us,
                                        DenseNewtonWorkspace& work, NewtonBaselineCounts* counts,
                                        const int* dofs,
                                        std::vector<NewtonJacobianRecord>* record) {
  const int n = island.n;
  const double eta = parameters.baselines.trust_region_eta;
  NewtonState state{island, velocity, residual, work};
  InnerSolveResult result;
  state.EvaluateAtVelocity();
  double radius = -1;       // set by the first step
  bool fresh = true;        // J_r, g and the dogleg's points must be computed at v
  bool has_newton = false;  // the Newton point exists at v
  double gradient_norm = 0, newton_norm = 0, cauchy_norm = 0;
  while (state.norm >= state.tolerance && result.steps < parameters.max_newton_steps) {
    if (OutOfTime(options, deadline_us)) {
      result.out_of_time = true;
      break;
    }
    if (fresh) {
      const bool factored = state.Factor(&result.broken);
      if (result.broken) break;
      ++counts->factorizations;
      state.Record(dofs, record);
      has_newton = state.Directions(factored);
      gradient_norm = IslandNorm(work.gradient.data(), n);
      newton_norm = has_newton ? IslandNorm(work.newton.data(), n) : 0;
      // The Cauchy point: the model's minimizer along -g, -(||g||^2 / ||J_r g||^2) g.
      Multiply(work.jacobian.data(), work.gradient.data(), n, work.product.data());
      const double curvature = Dot(work.product.data(), work.product.data(), n);
      if (gradient_norm == 0 || curvature == 0) break;  // v is stationary for the merit: stuck
      const double scale = -gradient_norm * gradient_norm / curvature;
      for (int k = 0; k < n; ++k) work.cauchy[k] = scale * work.gradient[k];
      cauchy_norm = -scale * gradient_norm;
      if (radius < 0) radius = has_newton ? newton_norm : cauchy_norm;
      fresh = false;
    }
    // The dogleg point at this radius (N&W Sec. 4.1): the Newton point inside the region; else
    // the steepest-descent step to the boundary when the Cauchy point lies outside it (or the
    // Cauchy point itself when there is no Newton point); else the point of the segment from
    // the Cauchy to the Newton point on the boundary, ||p_U + tau (p_N - p_U)|| = radius.
    double* step = work.step.data();
    if (has_newton && newton_norm <= radius) {
      std::copy(work.newton.begin(), work.newton.begin() + n, step);
    } else if (cauchy_norm >= radius) {
      const double scale = -radius / gradient_norm;
      for (int k = 0; k < n; ++k) step[k] = scale * work.gradient[k];
    } else if (!has_newton) {
      std::copy(work.cauchy.begin(), work.cauchy.begin() + n, step);
    } else {
      double a = 0, b = 0;
      for (int k = 0; k < n; ++k) {
        const double difference = work.newton[k] - work.cauchy[k];
        a += difference * difference;
        b += work.cauchy[k] * difference;
      }
      const double c = cauchy_norm * cauchy_norm - radius * radius;  // < 0
      // The positive root of a tau^2 + 2 b tau + c, in the form that does not cancel.
      const double tau = -c / (b + std::sqrt(b * b - a * c));
      for (int k = 0; k < n; ++k) {
        step[k] = work.cauchy[k] + tau * (work.newton[k] - work.cauchy[k]);
      }
    }
    // m(0) - m(p) = -g^T p - 1/2 ||J_r p||^2.
    Multiply(work.jacobian.data(), step, n, work.product.data());
    const double predicted = -Dot(work.gradient.data(), step, n) -
                             0.5 * Dot(work.product.data(), work.product.data(), n);
    const double step_norm = IslandNorm(step, n);
    const double trial_norm = state.EvaluateTrial(1.0, step);
    ++result.steps;
    const double actual = 0.5 * (state.norm - trial_norm) * (state.norm + trial_norm);
    const double rho = predicted > 0 ? actual / predicted : -1;
    if (rho < 0.25) {
      radius = 0.25 * step_norm;
    } else if (rho > 0.75 && step_norm >= (1 - 1e-12) * radius) {
      radius = std::min(2 * radius, kMaxRadius);
    }
    if (rho > eta) {
      state.Accept(trial_norm);
      fresh = true;
    } else {
      ++counts->rejected_steps;
    }
    // The region has shrunk to the rounding of v: the merit cannot be reduced from here.
    if (radius <= kEpsilon * (1 + IslandNorm(velocity, n))) break;
  }
  return state.Finish(result);
}

InnerSolveResult DampedSemismoothNewtonSolve(AlIsland& island, double* velocity, double* residual,
                                             const CanalParameters& parameters,
                                             const SolverOptions& options, double deadline_us,
                                             DenseNewtonWorkspace& work,
                                             NewtonBaselineCounts* counts, const int* dofs,
                                             std::vector<NewtonJacobianRecord>* record) {
  const int n = island.n;
  const double sigma = parameters.baselines.armijo_sigma;
  NewtonState state{island, velocity, residual, work};
  InnerSolveResult result;
  state.EvaluateAtVelocity();
  while (state.norm >= state.tolerance && result.steps < parameters.max_newton_steps) {
    if (OutOfTime(options, deadline_us)) {
      result.out_of_time = true;
      break;
    }
    const bool factored = state.Factor(&result.broken);
    if (result.broken) break;
    ++counts->factorizations;
    state.Record(dofs, record);
    const bool has_newton = state.Directions(factored);
    const double* gradient = work.gradient.data();
    double* direction = work.step.data();
    double slope = 0;  // g^T d, the merit's directional derivative
    bool descent = false;
    if (has_newton) {
      std::copy(work.newton.begin(), work.newton.begin() + n, direction);
      slope = Dot(gradient, direction, n);
      descent = slope <= -kDescentRho * std::pow(IslandNorm(direction, n), kDescentPower);
    }
    if (!descent) {
      for (int k = 0; k < n; ++k) direction[k] = -gradient[k];
      slope = -Dot(gradient, gradient, n);
      ++counts->gradient_steps;
    }
    ++result.steps;
    if (!(slope < 0)) break;  // g = 0: v is stationary for the merit, stuck
    const double merit = 0.5 * state.norm * state.norm;
    bool accepted = false;
    double t = 1;
    for (int k = 0; k <= parameters.baselines.max_backtracks; ++k, t *= 0.5) {
      const double trial_norm = state.EvaluateTrial(t, direction);
      ++counts->evaluations;
      if (0.5 * trial_norm * trial_norm <= merit + sigma * t * slope) {
        state.Accept(trial_norm);
        accepted = true;
        break;
      }
    }
    if (!accepted) break;  // no step length reduces the merit enough: stuck
  }
  return state.Finish(result);
}

}  // namespace alsim
