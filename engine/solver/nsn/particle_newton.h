// One backward-Euler step of a particle system by the non-smooth Newton method of Macklin et al.
// 2019 (seed 002, issue 48; digest seed-002-nsn.md sections 4-6): tetrahedral FEM elements over
// the particles in compliance form (engine/deformable/tet_material.h), pinned particles, and
// contacts of particles with static planes through NCP functions, with smooth isotropic Coulomb
// friction. The reference the engine's deformables will be tested against; rigid bodies later.
//
// Unknowns: the particles' velocities u (3 n) and the rows' multipliers lambda (forces, N). With
// q = q- + h u (45), u~ = u- + h M^-1 f (the free velocity: gravity and external forces, explicit)
// and rows
//   elements:  E_e (c_e(q) + lambda_e) = 0  (the generalized compliance form (79)-(80); for the
//              linear material E c = s, so this is s + E lambda = 0 as (47) reads)
//   contacts:  phi_n(C_n(q), lambda_n) = 0, C_n = n . q_v - d - thickness  (9), (28) or (96)
//   friction:  phi_f = D^T u_v + W lambda_f = 0 (2 rows per contact, (36)), on planes with mu > 0
// the step solves (46)-(49):
//   M (u - u~) - h J^T lambda = 0
// by Newton from u^0 = 0, lambda^0 = 0 ((67)-(68), the zero-velocity start), each iteration at
// q^n = q- + h u^n (digest 13: q- of the step, not q^n of the previous iterate):
//   g = M (u^n - u~) - h J^T lambda^n                                                    (57)
//   h-vector = [(1/h) E_e (c_e + lambda_e); (1/h) phi_n; phi_f]                           (58)
//   [J H^-1 J^T + C + eps I] dlambda = (1/h) (J H^-1 g - h-vector)                  (59), (8.4)
//   du = H^-1 (h J^T dlambda - g)                                                          (60)
//   lambda += t dlambda,  u += t du                                                   (61)-(62)
// with J the rows' Jacobians in u (elements: ds/dx, contacts: alpha n^T, the NCP derivative
// times the geometric row (44), friction: D^T = [d1 d2]^T (37), (44)),
// C = blockdiag(E_e / h^2, S / h^2, W / h) (55), S = dphi/dlambda (beta r, (54)), H = M (no
// geometric stiffness unless the option below), normal r = h^2 / m_v (66). Pinned particles have
// H^-1 = 0 and keep u = 0.
//
// Friction (digest 2.4, 3.4-3.5, 4.3). A plane with friction coefficient mu > 0 gives each of its
// contacts two velocity-level rows along a fixed tangent basis d1, d2 of the plane (orthonormal,
// orthogonal to n; chosen once per plane in SetSystem). Every Newton iteration, from the iterate's
// slip s = |D^T u_v|, cone limit m = mu lambda_n (the current normal multiplier) and |lambda_f|,
// EvaluateFrictionCompliance (ncp.h; (104) with s not squared, or (105)) gives the scalar W with
// r = FrictionComplementarityFactor (h (d_t1 + d_t2) / 2 = h / m_v, (66)); W is held constant in
// the derivative (quasi-Newton, (37)), which keeps A symmetric. Its rows: J_f = D^T, h-vector
// entry phi_f itself (velocity level, not divided by h, (58)), C block W / h, so the Schur
// diagonal has W / h on those rows ((53), (59)). Inactive contacts, m <= 0 (the set I of 2.5): J_f
// rows zero and W = 1 (106), so the row reads dlambda_f = -lambda_f and lambda_f goes to 0. A
// plane with mu = 0 (the default) adds no rows at all: frictionless results are bit-identical to
// the code before friction.
//
// Row order (lambda()): element rows (tet order), then one normal row per contact (contact
// order, contact_particles()), then two tangent rows (d1, d2) per contact on a frictional plane,
// in contact order (contact_friction_rows() gives each contact's first, or -1). The Schur system is
// never formed: Jacobi-preconditioned conjugate residual (conjugate_residual.h) applies A x = J
// (H^-1 (J^T x)) + C x + eps x.
//
// Neo-Hookean rows (3 per tet, principal stretches) keep their principal directions from one
// iteration to the next (each row takes the direction nearest its previous one). They do not
// converge yet: J = ds/dx from ds_i/dF = u_i v_i^T leaves out the rotation of the principal
// directions, which at rest (all stretches equal) is the whole shear stiffness, so the Newton
// matrix has none and a bar of Kuhn tets oscillates between iterates at any damping t (the
// geometric stiffness of Sec 8.3 is the paper's remedy for missing curvature). The engine's
// solver (nsn_solver.h) uses 9 rows in F instead, whose J is exact, and converges.
//
// Geometric stiffness (Sec 8.3, digest 5.4; option geometric_stiffness, off by default): after
// Newton iteration n, gc = -h J^T lambda (the constraint part of g) is formed with the new lambda
// at the old configuration's J and, at the next iteration, at the new one; per particle dof
// c_k = -(gc(u^{n+1}) - gc(u^n))_k / du_k (the digest's sign of (73)) and
// H~_kk = M_kk - min(0, c_k) (74), so H~ >= M; dofs with |du_k| <= 1e-12 max |du| keep their
// previous shift; the shift starts at 0 every step. H~ replaces M in H^-1 (59)-(60) and in A's
// diagonal, not in the complementarity factors (66). Measured on the Neo-Hookean hanging bar
// (1 x 1 x 8 cells, Y = 1e8, 200 steps of 10 ms): it still does not converge (60-150
// iterations, t = 1, 0.75, 0.5), but the residuals drop about 10-100x (|g| 0.1-0.3 N s, rows
// 1e-3-6e-3 m/s vs 0.8-2.4 and 0.3-0.6 without) and the stretch is within 14-24% of
// rho g L^2 / (2 Y) (12x off without); the linear and corotated bars converge with it as without.
//
// Newton stops after `newton_iterations`, or earlier once every residual is below
// `newton_tolerance` (0: the paper's fixed counts): |g|_inf <= tol max(1, |M u~|_inf) and the
// rows' |h-vector|_inf <= tol / h (their position units), friction rows weighted by r / (r + W)
// (inactive: r): phi_f = D^T u + W lambda_f is a force error times W where W >> r (a contact with
// lambda_n near 0, where W = s' / f' is huge and jumps between iterates), so the weight measures
// it as r times that force error, and as the slip itself where W << r (the paper gives no
// tolerance; digest 13).
//
// Measured (friction): a particle on an incline converges in 7-8 iterations per step with FB and
// holds or slides at g (sin - mu cos) in every direction (tests). A stiff block of tets (2 x 2 x 1
// cells, 9 contacts, Y = 1e8) on the incline does not converge: with W held constant (37) the
// friction rows of its redundant contacts fall into a period-2 cycle (a contact sticks with W ~ 0,
// the elastic solve gives it more than mu lambda_n, the next W is large and its lambda_f drops
// near 0, which makes W ~ 0 again), at t = 1, 0.75 and 0.5 and 200 iterations: row residual about
// 0.1-0.5 m/s. Unconverged at 60 iterations and t = 1 (100 steps of 10 ms, mu = 0.5) it holds
// at tan theta = 0.3 (speed ~1e-5 m/s) and slides at g (sin - mu cos) within 0.1% at 0.55 and
// 0.8, but at 0.45 it creeps in some slope directions (|a| up to 0.37 m/s^2, expected 0).
// Sequential, every sum in a fixed order: the result does not depend on threads. Storage grows
// with the system and is reused, so a step of sizes seen before allocates nothing.
#pragma once

#include <array>
#include <vector>

#include "engine/deformable/tet_material.h"
#include "engine/math/types.h"
#include "engine/model/deformable_spec.h"
#include "engine/solver/nsn/conjugate_residual.h"
#include "engine/solver/nsn/ncp.h"

namespace alsim {

struct ParticleNewtonParameters {
  int newton_iterations = 20;    // N, the most Newton iterations (Table 2's counts: 4 to 6)
  double newton_tolerance = 0;   // > 0: stop once the residuals are below it (header)
  double step_fraction = 0.75;   // t (61)-(62): the paper's damping for every scene
  double regularization = 1e-6;  // eps on the Schur matrix (Sec 8.4)
  KrylovOptions krylov;          // the linear solves' fixed count and optional tolerance
  NcpFunction ncp = NcpFunction::kFischerBurmeister;
  ComplementarityScaling scaling = ComplementarityScaling::kEffectiveMass;
  bool geometric_stiffness = false;  // H~ = M - min(0, c_k) per particle dof (Sec 8.3; header)
};

struct ParticleNewtonStatistics {
  int newton_iterations = 0;
  int krylov_iterations = 0;     // summed over the Newton iterations
  double momentum_residual = 0;  // |g|_inf at the last iterate, N s
  double row_residual = 0;       // |h-vector|_inf at the last iterate, m/s
  bool converged = false;        // newton_tolerance met
};

// An elastic tet of the system: its particles, rest data and material.
struct ParticleTet {
  std::array<int, 4> vertices{};
  TetRest rest;
  DeformableMaterial material = DeformableMaterial::kLinear;
  LinearMaterial linear;           // linear and corotated
  NeoHookeanMaterial neo_hookean;  // neohookean
};

// A static plane n . x = offset that particles rest on, with a thickness kept above it.
struct ParticlePlane {
  Vec3 normal{0, 0, 1};
  double offset = 0;
  double thickness = 0;
  double friction = 0;  // mu, Coulomb's coefficient; 0: frictionless, no friction rows
};

class ParticleNewtonStep {
 public:
  // The system: per particle its mass (kg) and whether it is pinned; the tets and planes.
  void SetSystem(std::vector<double> mass, std::vector<char> pinned, std::vector<ParticleTet> tets,
                 std::vector<ParticlePlane> planes);

  // One step of length h from positions x (3 n, m) and velocities v (3 n, m/s) under the force f
  // (3 n, N; e.g. m g per particle); x and v are replaced by the step's. Contact candidates: the
  // particles within `margin` of a plane at the step's start (digest 6 step 1), plus the
  // distance the free velocity covers in the step.
  ParticleNewtonStatistics Step(double h, const ParticleNewtonParameters& parameters,
                                const double* f, double margin, double* x, double* v);

  // The last step's multipliers: element rows (6 per linear or corotated tet, 3 per Neo-Hookean,
  // in tet order), then one normal row per contact, then two friction rows per frictional
  // contact (header); each contact's particle, plane, and first friction row (-1: none).
  const std::vector<double>& lambda() const { return lambda_; }
  int num_element_rows() const { return element_rows_; }
  int num_contacts() const { return static_cast<int>(contact_vertex_.size()); }
  const std::vector<int>& contact_particles() const { return contact_vertex_; }
  const std::vector<int>& contact_planes() const { return contact_plane_; }
  const std::vector<int>& contact_friction_rows() const { return contact_friction_row_; }
  // The tangent d_i (i = 0, 1) of plane k's friction rows.
  const Vec3& plane_tangent(int k, int i) const { return plane_tangent_[2 * k + i]; }

 private:
  // Rows, Jacobians, compliance blocks and residuals at q = q- + h u.
  void Evaluate(double h, const ParticleNewtonParameters& parameters);
  // out = -h J^T lambda (3 n), the constraint part of g, with the last Evaluate's J.
  void ConstraintForce(double* out) const;
  // y = A x for the Schur matrix of the last Evaluate.
  void Apply(const double* x, double* y);

  std::vector<double> mass_, inverse_mass_;
  std::vector<char> pinned_;
  std::vector<ParticleTet> tets_;
  std::vector<ParticlePlane> planes_;
  std::vector<Vec3> plane_tangent_;  // d1, d2 per plane
  int n_ = 0;                        // particles

  // Per step.
  int element_rows_ = 0, rows_ = 0;
  std::vector<int> tet_row_adr_;  // first row of each tet
  std::vector<Mat3> tet_frame_;   // Neo-Hookean tets: the principal directions of their rows
  std::vector<int> contact_vertex_, contact_plane_, contact_friction_row_;
  // Rows on one particle (normal and friction, from row element_rows_ on): the particle.
  std::vector<int> point_row_vertex_;
  std::vector<double> start_, free_velocity_, u_, lambda_, q_;
  // Per Newton iteration.
  std::vector<double> jacobian_;     // elements: 12 per row; contacts: 3 per row (alpha n, d_i)
  std::vector<double> compliance_;   // elements: rows x rows per tet, row-major
  std::vector<double> point_c_;      // C's diagonal on particle rows: S / h^2, W / h
  std::vector<double> point_scale_;  // the stopping test's weight on particle rows (header)
  std::vector<double> residual_h_, g_, diagonal_, rhs_, dlambda_, du_, work_n_, work_rows_;
  std::vector<double> inverse_h_;  // H~^-1 per dof: 1 / m_v, or with the geometric stiffness
  std::vector<double> constraint_force_, work_force_;
  bool geometric_stiffness_ = false;
  double h_ = 0, regularization_ = 0;
  KrylovWorkspace krylov_;
};

}  // namespace alsim
