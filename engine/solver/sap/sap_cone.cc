#include "engine/solver/sap/sap_cone.h"

#include <cmath>

namespace alsim {

SapConeState SapConeAt(const double* x, double normal_regularization, double tangent_regularization,
                       double mu, double* hessian) {
  SapConeState state;
  const double rn = normal_regularization, rt = tangent_regularization;
  const double yn = -x[0] / rn, y1 = -x[1] / rt, y2 = -x[2] / rt;
  const double yr = std::sqrt(y1 * y1 + y2 * y2);
  if (hessian != nullptr) {
    for (int k = 0; k < 9; ++k) hessian[k] = 0;
  }
  // Frictionless: gamma = (max(0, y_n), 0, 0).
  if (!(mu > 0)) {
    if (yn > 0) {
      state.zone = 1;
      state.impulse[0] = yn;
      state.cost = 0.5 * rn * yn * yn;
      if (hessian != nullptr) hessian[0] = 1 / rn;
    }
    return state;
  }
  // Stiction (the closed cone; y_t = 0 with y_n >= 0 included).
  if (yr <= mu * yn || (yr == 0 && yn >= 0)) {
    state.zone = 1;
    state.impulse[0] = yn;
    state.impulse[1] = y1;
    state.impulse[2] = y2;
    state.cost = 0.5 * (rn * yn * yn + rt * yr * yr);
    if (hessian != nullptr) {
      hessian[0] = 1 / rn;
      hessian[4] = hessian[8] = 1 / rt;
    }
    return state;
  }
  const double muhat = mu * rt / rn;
  const double mutilde2 = mu * muhat;
  // No contact (the polar cone's interior; also y_t = 0 with y_n < 0).
  if (yn <= -muhat * yr || yr == 0) return state;
  // Sliding: the cone's wall.
  state.zone = 2;
  const double t1 = y1 / yr, t2 = y2 / yr;
  const double gn = (yn + muhat * yr) / (1 + mutilde2);
  state.impulse[0] = gn;
  state.impulse[1] = mu * gn * t1;
  state.impulse[2] = mu * gn * t2;
  state.cost = 0.5 * rn * (1 + mutilde2) * gn * gn;
  if (hessian == nullptr) return state;
  // dgamma/dy (rows gamma_n, gamma_t; columns y_n, y_t), then times R^-1 (digest 6.3, Drake's
  // form): dgn/dyn = 1/(1 + mt^2), dgn/dyt = muhat/(1 + mt^2) t^T, dgt/dyn = mu/(1 + mt^2) t,
  // dgt/dyt = mu (gn / y_r (I - t t^T) + muhat / (1 + mt^2) t t^T).
  const double inv = 1 / (1 + mutilde2);
  const double t[2] = {t1, t2};
  double dg[3][3];
  dg[0][0] = inv;
  for (int j = 0; j < 2; ++j) {
    dg[0][1 + j] = muhat * inv * t[j];
    dg[1 + j][0] = mu * inv * t[j];
    for (int k = 0; k < 2; ++k) {
      const double projection = t[j] * t[k];
      dg[1 + j][1 + k] =
          mu * (gn / yr * ((j == k ? 1.0 : 0.0) - projection) + muhat * inv * projection);
    }
  }
  const double rinv[3] = {1 / rn, 1 / rt, 1 / rt};
  for (int row = 0; row < 3; ++row) {
    for (int column = 0; column < 3; ++column) {
      hessian[row + 3 * column] = dg[row][column] * rinv[column];
    }
  }
  return state;
}

}  // namespace alsim
