// The NCP functions, the friction compliance W and the complementarity factors r of the
// non-smooth Newton solver (Macklin et al. 2019, seed 002, issue 48; digest
// /work/shared/research/seed-002-nsn.md, sections 3, 4.3 and 5.1). Scalar kernels: no state, no
// allocation; the caller loops over contacts in its own fixed order.
//
// NCP functions (digest 3.3). An NCP function is zero iff 0 <= a PERP b >= 0, (17); the solver
// scales the multiplier side by the complementarity factor r > 0, which leaves the roots alone
// (phi(a, r b) = 0 iff a >= 0, b >= 0, a b = 0) and gives both sides the same units (5.1):
//   Fischer-Burmeister (93)-(95), with q = sqrt(a^2 + r^2 b^2):
//     phi = a + r b - q,   dphi/da = alpha = 1 - a / q,   dphi/db = beta r = (1 - r b / q) r
//   minimum map (96)-(98):
//     a <= r b:  phi = a,    dphi/da = 1,  dphi/db = 0
//     a >  r b:  phi = r b,  dphi/da = 0,  dphi/db = r
// Here a is the constraint (C_n(q), the slip s), b the multiplier (lambda_n, the cone slack g),
// and dphi/db includes the factor r, as in (95) and (98). At the kink (a, r b) = (0, 0) both use
// the convention (26)-(27), alpha = 0 and beta = 1, i.e. dphi/da = 0 and dphi/db = r (the row of
// J_n is zero; S = r keeps the multiplier's row): for the minimum map this overrides (97)-(98)'s
// "a <= r b" branch at exactly that point only. FB's phi is evaluated without cancellation:
// where a + r b > 0, a + r b - q = 2 a r b / (a + r b + q), the same number in exact arithmetic.
//
// Friction compliance (digest 3.4-3.5). For a contact with slip speed s = |J_f u| >= 0, cone limit
// m = mu lambda_n and friction magnitude f = |lambda_f|, the cone slack g = m - f and the friction
// NCP psi = psi_f(s, g) (the functions above, a = s, b = g). The fixed point (99)-(101),
//   s' = s - psi,   f' = f + psi / r,
// gives W = s' / f' (35), (103): the compliance that makes phi_f = J_f u + W lambda_f (36) the
// sliding law at a solution. Closed forms, with q = sqrt(s^2 + r^2 g^2):
//   W_FB  = r (q - r g) / (s + r m - q)        (104), s NOT squared (digest 13: (102) misprints
//                                              s^2, which disagrees with (101) and can go < 0)
//   W_min = 0                  if s <= r g      (105)
//         = (s - r g) / m      otherwise
// W_FB's numerator is r s' with s' = q - r g >= 0 formed as s^2 / (q + r g) where g > 0 (no
// cancellation; exactly 0 when s = 0, sticking), and its denominator is r f' = r f + psi.
// Guards (the paper has none; digest 3.5):
//   - inactive contact, m <= 0 (the set I of 2.5): no W; the caller zeroes the contact's J_f rows
//     and uses the block 1_{2x2} (106), so that the row drives lambda_f to 0. Reported as
//     active = false, w = 1.
//   - 0/0 (s = 0 and f = 0 with m > 0): s' = 0 exactly, and W = 0 whenever s' = 0 (sticking
//     inside the cone, whatever the denominator).
//   - a small or non-positive denominator: r f' >= r (2 m - f) reaches 0 only beyond twice the
//     cone (f >= 2 m; with s = 0 it is r (2 m - f)), where (104) would give W < 0 or infinite and
//     an indefinite C. The denominator is clamped from below to kFrictionComplianceFloor r m, so
//     W <= s' / (kFrictionComplianceFloor m): a large, positive W, which drives lambda_f back
//     towards 0 (the direction (104) takes as f approaches 2 m), continuous in (s, g, f).
//     Reported as clamped = true. Inside or on the cone with s' > 0 the denominator is at least
//     r f + psi > 0; it falls under the floor only in the 0/0 corner (f and s both below about
//     1e-6 of m and r m), where W ~ s / (2 m) is about 0 and the clamp lowers it further.
//   W_min's denominator is m > 0: no guard but the inactive case.
//
// Complementarity factors (66), digest 5.1, from the diagonal d_ii = [J M~^-1 J^T]_ii of the raw
// geometric rows (grad C_n G, D^T G; not the FB-scaled J_n, whose alpha is 0 on separated contacts
// at lambda = 0), M~ not H, as (66) reads:
//   effective mass (the paper's):  normal r = h^2 d_nn,   friction r = h (d_t1 + d_t2) / 2
//     (psi_f is one scalar per contact: the mean of its two tangent rows' diagonals, half the
//     trace of the contact's 2x2 tangent block, which does not depend on how the tangent pair is
//     rotated about the normal, and which is either diagonal for an isotropic contact)
//   identity (ablation, Sec 10.2):      r = 1 for both
//   time step squared (ablation, "global r = h^2"): r = h^2 for both
// Units: the normal r is m/N (h^2 / kg), so r lambda_n is a distance like C_n; the friction r is
// (m/s)/N (h / kg), so r g is a speed like s. A non-positive or non-finite diagonal (a row on
// static bodies only) falls back to r = h^2, so that r > 0 always (the roots do not depend on it).
#pragma once

namespace alsim {

enum class NcpFunction {
  kFischerBurmeister,  // (93)-(95), the paper's default
  kMinimumMap,         // (96)-(98)
};

// phi(a, r b) and its derivatives with respect to a and b (dphi_db includes the factor r).
struct NcpEvaluation {
  double phi = 0;
  double dphi_da = 0;  // alpha
  double dphi_db = 0;  // beta r
};

NcpEvaluation FischerBurmeisterNcp(double a, double b, double r);
NcpEvaluation MinimumMapNcp(double a, double b, double r);
NcpEvaluation EvaluateNcp(NcpFunction function, double a, double b, double r);

// The friction compliance of one contact.
struct FrictionCompliance {
  bool active = false;   // mu lambda_n > 0: rows kept, block w 1_{2x2}; else rows zeroed, w = 1
  double w = 1;          // W (104)/(105), >= 0; 1 when inactive (106)
  double psi = 0;        // psi_f(s, mu lambda_n - |lambda_f|) with factor r; 0 when inactive
  bool clamped = false;  // W_FB's denominator was raised to the floor
};

// The floor of W_FB's denominator r |lambda_f|', relative to r mu lambda_n.
inline constexpr double kFrictionComplianceFloor = 1e-6;

// slip = |J_f u| >= 0, cone_limit = mu lambda_n, friction_norm = |lambda_f| >= 0, r > 0.
FrictionCompliance FischerBurmeisterFrictionCompliance(double slip, double cone_limit,
                                                       double friction_norm, double r);
FrictionCompliance MinimumMapFrictionCompliance(double slip, double cone_limit,
                                                double friction_norm, double r);
FrictionCompliance EvaluateFrictionCompliance(NcpFunction function, double slip, double cone_limit,
                                              double friction_norm, double r);

enum class ComplementarityScaling {
  kEffectiveMass,    // (66): h^2 d_nn, h (d_t1 + d_t2) / 2
  kIdentity,         // r = 1
  kTimeStepSquared,  // r = h^2
};

// r of a normal row from its diagonal d_nn = [J M~^-1 J^T]_nn and the time step h > 0.
double NormalComplementarityFactor(ComplementarityScaling scaling, double h, double diagonal);

// r of a contact's friction NCP from its two tangent rows' diagonals.
double FrictionComplementarityFactor(ComplementarityScaling scaling, double h,
                                     double tangent_diagonal_1, double tangent_diagonal_2);

}  // namespace alsim
