// One step of Drumwright's first-order scheme (seed 003; digest seed-003-drumwright.md sections
// 4-8, Appendix 0.A) on one dense system: every constraint row is a spring-damper evaluated at
// t0 and integrated by implicit Euler through the constraint-space inertia, so the step is one
// linear solve (bilateral rows only) or one strictly convex program (unilateral rows, contacts).
//
// The system: M (nv x nv, SPD), generalized force f, velocity v0, step h, and rows G_i (1 x nv)
// with phi0_i, stiffness K_i and damping B_i, each of a class (digest section 7):
//   b  bilateral:   lam_b = -K phi1 - B phid1                                    (53), (141)
//   u  unilateral:  lam_u >= -K phi1 - B phid1, lam_u >= 0                  (135)-(136)
//   n  contact normal, as u, plus the cone of its contact                   (137)-(138)
//   r, s  a contact's two tangents: lam_t = -K_t phi1 - B_t phid1 + beta_t, beta_t minimized
//                                                                           (139)-(140)
// with phid1 = G v1, phi1 = phi0 + h phid1 and v1 = v0 + h M^-1 (G^T lam + f) (36)-(37); the
// policy on Gd v0 is to omit it (Mhat Gd v0 = 0: digest section 4, no Mhat for redundant rows).
//
// Bilateral rows are eliminated through the effective mass (digest 7, [derived]):
//   M_eff = M + G_b^T W_b G_b,  W_x = diag(h^2 K_x + h B_x),
//   v_c = M_eff^-1 (M v0 + h f - h G_b^T K_b phi0_b)    (the velocity with lam* = 0),
//   v1 = v_c + h M_eff^-1 G*^T lam*,  lam_b = -K_b phi0_b - (h K_b + B_b) G_b v1,
// with G* the other rows in the order (n, r, s, u) of (162)/(193); M_eff is SPD whatever the rank
// of G_b (a duplicated row needs no regularization: digest test E). The rest is the master
// problem (181)-(189) with the appendix's errata (digest 7.1; erratum 6: d and e include the
// bilateral rows through v_c):
//   min 1/2 lam*^T H lam* + g^T lam*  s.t.  lam_x + W_x G_x Lam G*^T lam* >= q_x  (x in n, u),
//        lam_u >= 0,  mu_i lam_n_i >= ||(lam_r_i, lam_s_i)||
//   Lam = M_eff^-1 (189), q_x = -K_x phi0_x - (h K_x + B_x) G_x v_c (186),
//   E_t = W_t G_t Lam G*^T, d_t = K_t phi0_t + (h K_t + B_t) G_t v_c (172)-(175) (t in r, s),
//   H = blkdiag(zeta I_n, I_r, I_s, zeta I_u) + sum_t (P_t + E_t)^T (P_t + E_t)       (183)
//   g = sum_t (P_t + E_t)^T d_t                                                       (184)
// (P_t selects block t of lam*: beta_t = (P_t + E_t) lam* + d_t). Without contacts it is the
// unilateral QP (83)-(85) up to the factor zeta on its identity Hessian, which leaves its
// minimizer unchanged. The program goes to ConicQpSolver (conic_qp.h): P = H, c = g, orthant
// rows for the spring laws and lam_u >= 0, one Q^3 block (mu lam_n, lam_r, lam_s) per contact.
//
// The program is passed equilibrated: lam* = D y, D = diag(H_kk^-1/2), so that D H D has a unit
// diagonal, c = D g, G D, and each Q^3 block of G D divided by its Frobenius norm (h is 0 there);
// the same minimizer, the cone multipliers scaled by the block factors. H_kk spans zeta (the
// normals) to 1 + |a_k|^2 ~ (h B_t G_t Lam G_t^T)^2 (the tangents: 1.6e13 for Fig. 9's box on
// four feet, B_t = 1e6 / h): without D the normals sit below the rounding of the Newton matrix
// P + G~^T G~, whose factor fails (or whose steps leave K) before the stopping rule holds; after
// D a cone block's entries are mu zeta^-1/2 and ~1 / |a_k|, which the block's norm restores to
// order one. The law rows keep their size in y (dividing them by their norms too stalled a
// settled stack of 50 spheres, Fig. 10). Should the interior point fail, it tries again with
// every orthant row of unit length, then also with y scaled to O(1), then ADMM solves the
// program (slowly, but it converges on any convex program): FirstOrderResult::retries, ::admm.
// Friction and lam_n: while a contact's cone binds the objective trades its tangential slack
// beta against lam_n. One contact (the test H): lam_n = max(spring law,
// a mu |c| / (zeta + mu^2 (1 + a^2))), a = 1 + h B_t / m, c = B_t (v_t + h f_t / m), about
// |c| / (a mu) (the force that stops the slip in one step, over mu) unless zeta >> mu^2 a^2: at
// the paper's zeta = 1 / h and B_t = 1e6 / h the normal force is inflated (digest 10.1, item 7).
//
// Unilateral rows only, at least 4 per dof and each with W > 0 (the elastic foundation's 100 or
// 900 rows over 6 dofs): the QP (83)-(85) goes to ConicQpSolver::SolveDiagonalLowRank with (84)
// divided by W, (W^-1 + G M^-1 G^T) lam >= W^-1 q, lam >= 0 (a = W^-1, U = G M^-1, V = G: the
// same program without forming the n x n matrix; O(n nv^2) per iteration instead of O(n^3)),
// and to the dense program where that fails.
//
// The caller includes a unilateral row or contact only where phi0 <= 0 (the paper has no
// speculative rows). Dense and allocating (Eigen dynamic matrices): the reference the engine's
// per-island solver is tested against.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "engine/solver/drumwright/conic_qp.h"

namespace alsim {

enum class SpringRowClass { kBilateral, kUnilateral, kNormal, kTangent };

struct SpringRow {
  SpringRowClass type = SpringRowClass::kBilateral;
  double phi0 = 0;       // m (rad for angular rows); a tangent row's spring stretch
  double stiffness = 0;  // K, N/m (N m/rad)
  double damping = 0;    // B, N s/m (N m s/rad)
  double friction = 0;   // mu, on a contact's normal row
};

// The rows of G in any order, except that a contact's rows come as normal, tangent, tangent.
struct FirstOrderProblem {
  Eigen::MatrixXd mass;      // M
  Eigen::VectorXd velocity;  // v0
  Eigen::VectorXd force;     // f
  double h = 0;
  Eigen::MatrixXd jacobian;  // G, one row per SpringRow
  std::vector<SpringRow> rows;
  double zeta = 0;  // the weight of lam_n and lam_u in the objective (124); 0: 1 / h (the paper's)
};

struct FirstOrderResult {
  bool ok = false;            // false: bad input (sizes, a contact's rows) or the program failed
  Eigen::VectorXd velocity;   // v1
  Eigen::VectorXd lambda;     // per row of G, N (N m): the force of the step
  ConicQpStatistics program;  // of the convex program, when there was one
  bool solved_program = false;
  bool low_rank = false;  // the program went through the diagonal-plus-low-rank path
  // Further tries of the interior point after the first failed (0, 1 or 2: the header
  // comment); program.iterations counts them all. If all failed, ADMM solved it (`admm`, to a
  // relative 1e-10 within 20000 iterations; its iterations apart), or `ok` is false.
  int retries = 0;
  bool admm = false;
  int admm_iterations = 0;
};

// The step of the header: bilateral rows eliminated through M_eff, the rest by the master
// problem (no program when only bilateral rows).
FirstOrderResult SolveFirstOrderStep(const FirstOrderProblem& problem,
                                     const ConicQpParameters& parameters = {});

// Bilateral rows only, the paper's n x n form (61)-(62) then (53):
//   (I + S W) phid1 = phid0 - h S K phi0 + h G M^-1 f,  S = G M^-1 G^T,
//   lam = -K (phi0 + h phid1) - B phid1,  v1 = v0 + h M^-1 (G^T lam + f),
// solved by LU (I + S W is not symmetric); for the check against the velocity form (test F).
FirstOrderResult SolveBilateralConstraintSpace(const FirstOrderProblem& problem);

}  // namespace alsim
