// The Nesterov-Todd scaling of a primal-dual pair (s, z) in the interior of the product cone K
// (symmetric_cone.h), after Vandenberghe (2010), Sec. 4: the block-diagonal W with
//   W^T = W,   W z = W^-1 s = lambda,   W K = K,
// so that lambda o lambda has s^T z as its trace and s + t ds = W (lambda + t W^-1 ds): the
// interior-point method measures steps and centrality in the scaled space of lambda.
//   orthant row i:   W_i = d_i = sqrt(s_i / z_i),   lambda_i = sqrt(s_i z_i)
//   cone block:      a = sqrt(s^T J s), b = sqrt(z^T J z), J = diag(1, -I),
//                    sbar = s / a, zbar = z / b, gamma = sqrt((1 + sbar^T zbar) / 2),
//                    wbar = (sbar + J zbar) / (2 gamma)  (wbar^T J wbar = 1), beta = sqrt(a / b),
//                    W    = beta [wbar_0, wbar_1^T; wbar_1, I + wbar_1 wbar_1^T / (1 + wbar_0)],
//                    W^-1 = (1 / beta) [wbar_0, -wbar_1^T; -wbar_1, I + wbar_1 wbar_1^T / (1 +
//                    wbar_0)], lambda = sqrt(a b) (gamma, ((gamma + zbar_0) sbar_1 + (gamma +
//                    sbar_0) zbar_1)
//                                                / (2 gamma + sbar_0 + zbar_0))
// lambda is formed from sbar and zbar, not as W z, so that it keeps its digits as s and z reach
// the boundary together. The scaling is recomputed from (s, z) at every iterate.
#pragma once

#include <Eigen/Core>

#include "engine/solver/drumwright/symmetric_cone.h"

namespace alsim {

class NtScaling {
 public:
  NtScaling() = default;
  NtScaling(const NtScaling&) = delete;
  NtScaling& operator=(const NtScaling&) = delete;
  NtScaling(NtScaling&&) = default;

  // Sizes the scaling for `cones`, grow-only: allocates only when K has more rows or blocks than
  // any before; Compute and the Apply* functions allocate nothing.
  void Resize(const ConeDimensions& cones);

  // W and lambda at (s, z); false (and the scaling unusable) unless both are interior to K.
  bool Compute(const double* s, const double* z);

  // out = W u and out = W^-1 u over all rows of K (out may not alias u).
  void Apply(const double* u, double* out) const;
  void ApplyInverse(const double* u, double* out) const;

  // Valid until the next Resize.
  Eigen::Ref<const Eigen::VectorXd> lambda() const { return lambda_; }
  const ConeDimensions& cones() const { return cones_; }

 private:
  using Vector = ArenaVector;
  ConeDimensions cones_;
  GrowOnlyArena arena_;
  Vector orthant_{nullptr, 0};  // d_i, per orthant row
  Vector wbar_{nullptr, 0};     // wbar per cone block, at the block's rows
  Vector beta_{nullptr, 0};     // beta per cone block
  Vector lambda_{nullptr, 0};
};

}  // namespace alsim
