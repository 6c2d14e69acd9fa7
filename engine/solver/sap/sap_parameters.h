// SAP's physical and numerical parameters (the SAP paper, seed 001, Secs. VII and IX; digest
// seed-001-sap.md sections 5.2-5.4 and 6.6), with the paper's defaults.
#pragma once

#include <algorithm>
#include <cmath>

namespace alsim {

struct SapParameters {
  // Contact stiffness k, N/m (Sec. VII): R_n^-1 = dt k (dt + tau_d) in the compliant regime.
  // 0: near-rigid, k infinite, so R_n is the near-rigid floor of eq. (21) alone.
  double stiffness = 0;
  // Dissipation time scale tau_d, s (Sec. VII, c = tau_d k): vhat_n = -phi0 / (dt + tau_d).
  // 0: the near-rigid model's critical damping, tau_d = (beta / pi) dt (Sec. IX-A).
  double dissipation_time = 0;
  // Near-rigid parameter beta of eq. (21): R_n >= beta^2 / (4 pi^2) w, the contact's period
  // resolved as beta dt; the paper uses 1 everywhere.
  double beta = 1;
  // Stiction regularization sigma of eq. (22): R_t = sigma w, so that a stuck contact pushed
  // with F creeps at sigma w dt F; the paper uses 1e-3 everywhere.
  double sigma = 1e-3;
  // Stopping criterion of eq. (20): ||D grad|| <= absolute + relative max(||D p||, ||D j_c||),
  // D = diag(A)^-1/2, p = A v, j_c = J^T gamma (Drake's defaults), checked before each
  // factorization, so a warm start that already meets it costs none.
  double relative_tolerance = 1e-6;
  double absolute_tolerance = 1e-14;
};

// tau_d for a step of dt: the parameter, or the near-rigid (beta / pi) dt when it is 0.
inline double SapDissipationTime(const SapParameters& p, double dt) {
  return p.dissipation_time > 0 ? p.dissipation_time : p.beta / M_PI * dt;
}

// R_n of eq. (21) for a contact of effective inverse mass w: max(beta^2 / (4 pi^2) w,
// 1 / (dt k (dt + tau_d))), the near-rigid floor alone when k is 0 (infinite).
inline double SapNormalRegularization(const SapParameters& p, double w, double dt) {
  const double near_rigid = p.beta * p.beta / (4 * M_PI * M_PI) * w;
  if (!(p.stiffness > 0)) return near_rigid;
  return std::max(near_rigid, 1 / (dt * p.stiffness * (dt + SapDissipationTime(p, dt))));
}

}  // namespace alsim
