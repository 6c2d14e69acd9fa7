#include "engine/solver/canal/al_island.h"

#include <limits>

#include "engine/solver/canal/cone_operators.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

// The inner loop's rounding floor is this many unit round-offs of the summed magnitudes.
constexpr double kRoundingMargin = 16;

}  // namespace

void AlIsland::Apply(int c, const double* x, double* out) const {
  const int dim = set->constraints[c].dim;
  for (int r = 0; r < dim; ++r) out[r] = 0;
  for (int e = jacobian->entry_adr[c]; e < jacobian->entry_adr[c] + jacobian->entry_num[c]; ++e) {
    const double xe = x[local_dof[jacobian->dof[e]]];
    for (int r = 0; r < dim; ++r) out[r] += jacobian->value[e][r] * xe;
  }
}

void AlIsland::SubtractGather(const double* rows, double* out) const {
  for (int s = 0; s < num_constraints; ++s) {
    const int c = constraints[s];
    const Constraint& constraint = set->constraints[c];
    const double* y = rows + constraint.row_adr;
    for (int e = jacobian->entry_adr[c]; e < jacobian->entry_adr[c] + jacobian->entry_num[c]; ++e) {
      double sum = 0;
      for (int r = 0; r < constraint.dim; ++r) sum += jacobian->value[e][r] * y[r];
      out[local_dof[jacobian->dof[e]]] -= sum;
    }
  }
}

void AlIsland::MultiplyMass(const double* x, double* y) const {
  std::fill(y, y + n, 0.0);
  for (int col = 0; col < n; ++col) {
    for (int k = column_start[col]; k < column_start[col + 1]; ++k) {
      const int row = row_index[k];
      y[row] += mass[k] * x[col];
      if (row != col) y[col] += mass[k] * x[row];
    }
  }
}

void AlIsland::Evaluate(const double* velocity, bool with_derivative) {
  ForConstraints([&](int c) {
    const Constraint& constraint = set->constraints[c];
    const int row = constraint.row_adr;
    double* jv = row_velocity + row;
    Apply(c, velocity, jv);
    double* x = argument + row;
    const double beta_c = Penalty(c);
    for (int r = 0; r < constraint.dim; ++r) {
      x[r] = outer_impulse[row + r] - beta_c * (jv[r] + shifted_bias[row + r]);
    }
    double* D = with_derivative ? derivative + 3 * row : nullptr;
    if (strict) {
      StrictConstraintImpulse(constraint, beta_c, x, impulse + row, D);
    } else {
      CanalConstraintImpulse(constraint, beta_c, x, impulse + row, D);
    }
    // The size of the terms that x sums, times ||J_i||: with the unit round-off, a bound on the
    // rounding error this constraint puts into r.
    double terms = 0;
    for (int r = 0; r < constraint.dim; ++r) {
      terms += std::abs(outer_impulse[row + r]) +
               beta_c * (std::abs(jv[r]) + std::abs(shifted_bias[row + r]));
    }
    double jacobian_norm2 = 0;
    for (int e = jacobian->entry_adr[c]; e < jacobian->entry_adr[c] + jacobian->entry_num[c]; ++e) {
      jacobian_norm2 += jacobian->value[e].squaredNorm();
    }
    rounding[row] = std::sqrt(jacobian_norm2) * terms;
  });
}

double AlIsland::Residual(const double* velocity, double* residual, double* product) {
  MultiplyMass(velocity, product);
  for (int k = 0; k < n; ++k) residual[k] = product[k] - rhs[k];
  SubtractGather(impulse, residual);
  double rounding2 = 0;
  for (int s = 0; s < num_constraints; ++s) {
    const double scale = rounding[set->constraints[constraints[s]].row_adr];
    rounding2 += scale * scale;
  }
  rounding_floor = kRoundingMargin * std::numeric_limits<double>::epsilon() *
                   (IslandNorm(product, n) + IslandNorm(rhs, n) + std::sqrt(rounding2));
  return IslandNorm(residual, n);
}

}  // namespace alsim
