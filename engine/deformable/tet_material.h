// Per-tet elastic materials in the compliance form of Macklin et al. 2019 (seed 002; digest
// seed-002-nsn.md sections 7.1-7.2, 13): a constant-strain tetrahedron with rest vertices X0..X3
// and current vertices x0..x3 contributes constraint rows c(x), their Jacobian J and a compliance
// block E, with
//   f = -J^T c                                                                         (75)
//   dc/dx = N J,  lambda = -c,  M xdd - J^T lambda = 0,  c + lambda = 0            (76)-(78)
//   J dx + E dlambda = -E (c + lambda),  E = N^-1                                  (79)-(80)
// For an energy U = V_e Psi(s(x)) over strains or stretches s (81)-(84):
//   c = (dU/ds)^T = V_e dPsi/ds,  J = ds/dx,  E = (d2U/ds2)^-1 = (V_e d2Psi/ds2)^-1,
// so that J^T c = (dU/dx)^T: the elastic force on the 12 vertex coordinates is -J^T c = J^T lambda.
// Each Evaluate* returns s, c, J (rows x 12, columns x0, y0, z0, x1, ..., z3), E and U.
//
// Kinematics: Dm = [X1 - X0, X2 - X0, X3 - X0], V_e = det(Dm) / 6 > 0 (a rest tet of positive
// orientation; MakeTetRest refuses the others), F = Ds Dm^-1 = sum_a x_a b_a^T with the shape
// gradients b_{k+1} = row k of Dm^-1 and b_0 = -(b_1 + b_2 + b_3), so dF/dx_{a,i} = e_i b_a^T.
//
// Linear (Hookean, (85)): s = (eps_xx, eps_yy, eps_zz, gamma_yz, gamma_xz, gamma_xy), eps =
// (F + F^T) / 2 - I, with ENGINEERING shear gamma_jk = 2 eps_jk (Voigt; the digest leaves the
// convention open). Then Psi = mu eps:eps + lambda/2 tr(eps)^2 = 1/2 s^T K_e s with
//   K_e = [[lambda + 2 mu, lambda, lambda], ... ] (+) diag(mu, mu, mu),
//   K_e^-1 = (1/Y) [[1, -nu, -nu], [-nu, 1, -nu], [-nu, -nu, 1]] (+) diag(1/mu, 1/mu, 1/mu),
// lambda = Y nu / ((1 + nu)(1 - 2 nu)), mu = Y / (2 (1 + nu)). c = V_e K_e s, J = ds/dx (constant),
// E = (V_e K_e)^-1 = K_e^-1 / V_e (closed form, constant), U = V_e/2 s^T K_e s. Rotations strain
// it: a rigid rotation by theta gives eps = (cos theta - 1)(I - a a^T) and a spurious force.
//
// Corotated linear: the same s, K_e, E on R^T F instead of F, R the rotation of F's polar
// decomposition from the SVD F = U Sigma V^T with the reflection fix (SignedSvd below: det U =
// det V = +1, the smallest singular value negative when det F < 0), R = U V^T. R^T F = V Sigma
// V^T is then symmetric, so eps = R^T F - I. J = ds/dx with R held fixed:
//   d(R^T F)_jk / dx_{a,i} = R_ij b_a[k].
// Since R^T F is symmetric and K_e isotropic, tau = dPsi/dS commutes with S = R^T F and the dR
// term of dU/dx vanishes: -J^T c is the exact gradient of U = V_e/2 s^T K_e s (R fixed or not),
// while dc/dx = V_e K_e ds/dx differs from N J by the dR term (left out, as the geometric
// stiffness is, digest 5.4).
//
// Stable Neo-Hookean in principal stretches (Appendix B, Smith et al. 2018 without its log term):
//   Psi = C1 (I_C - 3) + D1 (J - alpha)^2,  I_C = s1^2 + s2^2 + s3^2,  J = s1 s2 s3       (107)
//   dPsi/ds = 2 C1 s + 2 D1 (J - alpha) (s2 s3, s1 s3, s1 s2)   ((J - alpha): digest 13's fix)
//   d2Psi/ds2 = 2 [[D1 s2^2 s3^2 + C1, k1, k2], [k1, D1 s1^2 s3^2 + C1, k3],
//                  [k2, k3, D1 s1^2 s2^2 + C1]],  k0 = 2 J - alpha, k1 = D1 s3 k0,
//                  k2 = D1 s2 k0, k3 = D1 s1 k0                                (as printed)
// alpha = 1 + C1 / D1 makes s = 1 stress-free (dPsi/ds = 2 C1 + 2 D1 (1 - alpha) = 0). U = V_e Psi
// as printed, so the rest energy is V_e C1^2 / D1, not 0.
// Lame mapping: expanding Psi about s = 1 + e gives Psi = C1^2/D1 + 2 C1 |e|^2 + (D1 - C1)(tr e)^2
// + O(e^3), which is linear elasticity (mu |e|^2 + lambda/2 (tr e)^2) iff
//   C1 = mu / 2,  D1 = (lambda + mu) / 2,  alpha = 1 + mu / (lambda + mu).
// Neither candidate of the digest does: C1 = mu/2, D1 = lambda/2 gives mu and lambda - mu, and
// Smith et al.'s mu' = 4/3 mu, lambda' = lambda + 5/6 mu (which compensates their log term,
// absent here) gives 4/3 mu and lambda - mu/2 (at nu = 0.3: Y x 0.90, nu 0.17, and Y x 1.25,
// nu 0.21; the patch test measures all three). NeoHookeanFromYoungPoisson uses the match.
// s = the signed principal stretches (SignedSvd: Irving/Teran's inversion handling, so an
// inverted tet has s3 < 0 and J = det F < 0), J = ds/dx from ds_i/dF = u_i v_i^T:
//   ds_r / dx_{a,i} = U_ir (v_r . b_a),
// exact where the singular values are distinct (at repeated ones J^T c stays exact, since Psi
// is symmetric in s: J^T c = V_e (2 C1 F + 2 D1 (J - alpha) cof F) : dF/dx). E: the 3 x 3 Hessian
// H = d2Psi/ds2 has eigenvalues 3 lambda + 2 mu and 2 mu (twice) at rest but turns indefinite
// under compression and inversion; its eigenvalues are projected to >= hessian_floor (Teran et
// al. 2005, with a floor instead of 0 so that E exists), default 1e-4 mu: E = Q diag(1 / (V_e
// max(h_i, floor))) Q^T, symmetric positive definite, its condition number at most max h_i /
// floor.
//
// Units: positions m; Y, lambda, mu, C1, D1 Pa; V_e m^3; s 1; c joules (N m); J 1/m; E 1/(N m);
// U joules; the force N. Everything is fixed-size: no call allocates.
#pragma once

#include <Eigen/Core>

#include "engine/math/types.h"

namespace alsim {

using Vec12 = Eigen::Matrix<double, 12, 1>;
// A tet's vertices as columns x0..x3 (m); its column-major storage is the 12 coordinates in J's
// column order (x0, y0, z0, x1, ...).
using TetVertices = Eigen::Matrix<double, 3, 4>;

// What a tet keeps from its rest shape.
struct TetRest {
  Mat3 dm_inverse = Mat3::Identity();                                                 // Dm^-1, 1/m
  Eigen::Matrix<double, 3, 4> shape_gradients = Eigen::Matrix<double, 3, 4>::Zero();  // b_a, 1/m
  double volume = 0;                                                                  // V_e, m^3
};

// The rest data of the tet with vertices `rest`; false (and *out untouched) where det Dm <= 0
// (inverted or degenerate, relative to the edges' lengths: det Dm <= 1e-14 max|edge|^3) or a
// coordinate is not finite.
bool MakeTetRest(const TetVertices& rest, TetRest* out);

// F = Ds Dm^-1.
Mat3 DeformationGradient(const TetRest& rest, const TetVertices& x);

// Lame's parameters of Young's modulus Y (Pa) and Poisson's ratio nu (-1 < nu < 0.5).
struct LameParameters {
  double lambda = 0;  // Pa
  double mu = 0;      // Pa
};
LameParameters LameFromYoungPoisson(double young, double poisson);

// K_e and K_e^-1 of an isotropic material in the engineering-shear Voigt order above.
struct LinearMaterial {
  Mat6 stiffness = Mat6::Zero();   // K_e, Pa
  Mat6 compliance = Mat6::Zero();  // K_e^-1, 1/Pa
};
LinearMaterial LinearMaterialFromYoungPoisson(double young, double poisson);

// (xx, yy, zz, 2 yz, 2 xz, 2 xy) of (G + G^T) / 2 - I: the strain s of a linear (G = F) or
// corotated (G = R^T F) tet.
Vec6 VoigtStrain(const Mat3& g);

// F = U diag(sigma) V^T with det U = det V = +1 and |sigma_0| >= |sigma_1| >= |sigma_2|; only
// sigma_2 may be negative (where det F < 0). Eigen's JacobiSVD (fixed size: no allocation), then
// U's and V's last columns and sigma_2 negated where det U or det V is -1. A non-finite F gives
// sigma = NaN.
struct SignedSvd {
  Mat3 u = Mat3::Identity();
  Mat3 v = Mat3::Identity();
  Vec3 sigma = Vec3::Ones();
};
SignedSvd ComputeSignedSvd(const Mat3& f);

// The compliance-form rows of one tet (header comment), Rows = 6 (linear, corotated), 9 (Neo-
// Hookean in F) or 3 (Neo-Hookean in principal stretches).
template <int Rows>
struct TetRows {
  using Vector = Eigen::Matrix<double, Rows, 1>;
  Vector strain = Vector::Zero();  // s, 1 (strains or principal stretches)
  Vector value = Vector::Zero();   // c = V_e dPsi/ds, N m
  // J = ds/dx, 1/m
  Eigen::Matrix<double, Rows, 12> jacobian = Eigen::Matrix<double, Rows, 12>::Zero();
  // E, 1/(N m)
  Eigen::Matrix<double, Rows, Rows> compliance = Eigen::Matrix<double, Rows, Rows>::Zero();
  double energy = 0;  // U, N m

  // f = -J^T c (N), the elastic force on the 12 vertex coordinates.
  Vec12 Force() const { return -jacobian.transpose() * value; }
};

// Linear: s of F, c = V_e K_e s, constant J and E.
void EvaluateLinearTet(const TetRest& rest, const LinearMaterial& material, const TetVertices& x,
                       TetRows<6>* rows);

// Corotated linear: s of R^T F, J with R held fixed; `rotation` (optional) receives R.
void EvaluateCorotatedTet(const TetRest& rest, const LinearMaterial& material, const TetVertices& x,
                          TetRows<6>* rows, Mat3* rotation = nullptr);

// The stable Neo-Hookean coefficients of (107).
struct NeoHookeanMaterial {
  double c1 = 0;             // C1, Pa
  double d1 = 0;             // D1, Pa
  double alpha = 1;          // 1 + C1 / D1
  double hessian_floor = 0;  // the least eigenvalue of d2Psi/ds2 kept in E, Pa
};
// C1 = mu / 2, D1 = (lambda + mu) / 2 (the header's small-strain match), floor 1e-4 mu.
NeoHookeanMaterial NeoHookeanFromYoungPoisson(double young, double poisson);
// Any C1, D1 > 0: alpha = 1 + C1 / D1, floor 1e-4 (2 C1).
NeoHookeanMaterial NeoHookeanFromCoefficients(double c1, double d1);

// Psi (Pa = J/m^3), dPsi/ds and d2Psi/ds2 at the stretches s.
double NeoHookeanEnergyDensity(const NeoHookeanMaterial& material, const Vec3& s);
Vec3 NeoHookeanStress(const NeoHookeanMaterial& material, const Vec3& s);
Mat3 NeoHookeanHessian(const NeoHookeanMaterial& material, const Vec3& s);

// (V h)^-1 of a symmetric h with its eigenvalues raised to at least `floor` > 0 (V > 0).
Mat3 ProjectedInverse(const Mat3& h, double volume, double floor);

// Stable Neo-Hookean: s the signed principal stretches, c = V_e dPsi/ds, J = ds/dx, E the
// projected (V_e d2Psi/ds2)^-1, U = V_e Psi; `svd` (optional) receives the SVD of F.
void EvaluateNeoHookeanTet(const TetRest& rest, const NeoHookeanMaterial& material,
                           const TetVertices& x, TetRows<3>* rows, SignedSvd* svd = nullptr);

// Stable Neo-Hookean in the deformation gradient: s = vec(F) (9 rows, column-major: row 3 j + i
// is F_ij), c = V_e P with P = dPsi/dF = 2 C1 F + 2 D1 (J - alpha) cof(F) ((107) with
// I_C = |F|^2 and J = det F, the same energy as in stretches), J = dF/dx constant (F is linear in
// the vertices), E the projected (V_e d2Psi/dF2)^-1 with
//   d2Psi/dF2 = 2 C1 I + 2 D1 g g^T + 2 D1 (J - alpha) d2J/dF2,  g = vec(cof F).
// [OURS] The Newton systems use these rows: the stretch rows' J^T E^-1 J misses the terms
// (dPsi/ds) d2s/dx2, which hold the shear stiffness (at rest every stretch is 1 and ds/dx is blind
// to shear), so Newton on them does not converge; here J is exact and J^T E^-1 J is the energy's
// Hessian up to its projection. The projection replaces each eigenvalue by its absolute value, at
// least the floor ([OURS]: the energy is not convex, e.g. in tension with J < alpha; raising a
// negative eigenvalue to the floor leaves almost no curvature along it and the damped Newton
// steps overshoot there, taking several times the iterations). The rotations of F are the
// Hessian's null space at rest (at the floor: compliant rows whose multipliers stay near zero).
void EvaluateNeoHookeanGradientTet(const TetRest& rest, const NeoHookeanMaterial& material,
                                   const TetVertices& x, TetRows<9>* rows);

}  // namespace alsim
