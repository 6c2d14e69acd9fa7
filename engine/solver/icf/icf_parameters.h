// The physical and numerical parameters of Irrotational Contact Fields (Castro, Han and
// Masterjohn, seed 000; digest seed-000-icf.md sections 3, 6 and 10), with their defaults.
#pragma once

namespace alsim {

// Which convex approximation of compliant contact with regularized Coulomb friction (eq. 11).
enum class IcfModel : unsigned char {
  kLagged,   // eq. (18): friction from the previous step's normal impulse, the normal implicit
  kSimilar,  // eqs. (19)-(21): the similarity variable z = v_n - mu |v_t|_s couples both
};

struct IcfParameters {
  // Linear contact stiffness k, N/m, of the normal law (22): f_n = k (-phi)_+ (1 - d v_n)_+.
  // "1e5-1e6 N/m suffices to approximate rigid contact in typical robotics" (Sec. XII-A).
  double stiffness = 1e6;
  // Hunt & Crossley dissipation d, s/m, of eq. (22); the paper's clutter uses 10.
  double dissipation = 10;
  // Stiction tolerance v_s, m/s: the slip speed of the stick-slip transition (eq. 9,
  // epsilon_s = v_s); the paper's experiments use 1e-4.
  double stiction_speed = 1e-4;
  // Regularized Lagged (eq. 26): epsilon_s = max(v_s, sigma w mu gamma_n0), softer during impacts.
  bool regularized = false;
  // sigma of eq. (26) (SAP's R_t = sigma w), 1e-3 as the paper.
  double sigma = 1e-3;
  // Stopping criterion (digest 10.3): ||D grad|| <= absolute + relative max(||D p||, ||D j_c||),
  // D = diag(A)^-1/2, p = A v, j_c = J^T gamma; the paper's relative tolerance is 1e-5.
  double relative_tolerance = 1e-5;
  double absolute_tolerance = 1e-14;
};

}  // namespace alsim
