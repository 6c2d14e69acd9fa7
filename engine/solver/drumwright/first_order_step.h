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
// with phid1 = G v1, phi1 = phi0 + h phid1 and v1 = v0 + h M^-1 (G^T lam + f) (36)-(37); by
// default Gd v0 is omitted (Mhat Gd v0 = 0: digest section 4, option (a); no Mhat exists for
// redundant rows).
//
// With the velocity product (FirstOrderProblem::velocity_product, digest 4 option (b)) each row
// carries a_i = (Gd v0)_i, its phi'' at zero acceleration (29), and the laws become (53), (141),
// (135)-(140) with phid1 = G v1 + h a and the force -Mhat_x a_x of its class x (the paper's
// Mhat_x = (G_x M^-1 G_x^T)^-1 per class, here the minimum-norm solve of S_x y = a_x,
// S_x = G_x M^-1 G_x^T, so that redundant rows need no inverse): every K phi0 below becomes
//   K phi0 + o,  o_i = W_i a_i + y_i,   W_i = h^2 K_i + h B_i,
// since K phi1 + B phid1 + y = K phi0 + (h K + B) G v1 + W a + y (the digest's velocity form
// with Gd v0: (M + G^T W G) v1 = M v0 + h f - h G^T (K phi0 + W Gd v0 + Mhat Gd v0)). The
// minimum-norm solve: pivoted Cholesky P^T S P = L L^T to rank r (pivots above 1e-8 max S_ii),
// then S^+ a = P L (L^T L)^-2 L^T P^T a.
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
// speculative rows). Dense: FirstOrderStepSolver holds the problem and every intermediate in
// grow-only storage (each matrix at the largest size seen, used through its top-left block), so
// once it has seen an island's sizes a step allocates nothing; SolveFirstOrderStep is the same
// solve on a problem in Eigen's own matrices (allocating), for tests and benchmarks.
#pragma once

#include <optional>
#include <vector>

#include <Eigen/Cholesky>
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
  // a = (Gd v0)_i, m/s^2 (rad/s^2): phi'' at zero acceleration; read with velocity_product only.
  double acceleration = 0;
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
  bool velocity_product = false;  // include Gd v0 (the rows' acceleration) with Mhat (header)
};

// How a step went.
struct FirstOrderStatistics {
  bool ok = false;            // false: bad input (sizes, a contact's rows) or the program failed
  ConicQpStatistics program;  // of the convex program, when there was one
  bool solved_program = false;
  bool low_rank = false;  // the program went through the diagonal-plus-low-rank path
  // Further tries of the interior point after the first failed (0, 1 or 2: the header
  // comment); program.iterations counts them all. If all failed, ADMM solved it (`admm`, to a
  // relative 1e-10 within 20000 iterations; its iterations apart), or `ok` is false.
  int retries = 0;
  bool admm = false;
  int admm_iterations = 0;
  int velocity_product_rank = 0;  // sum over the classes of rank(S_x) (velocity_product only)
};

struct FirstOrderResult : FirstOrderStatistics {
  Eigen::VectorXd velocity;  // v1
  Eigen::VectorXd lambda;    // per row of G, N (N m): the force of the step
};

// The step of the header in grow-only storage. Reset sizes the problem (allocating only beyond
// the largest sizes seen) with M, f, G zero; the caller fills them, v0 and the rows, may drop
// rows (KeepRows), and Solve()s; the answers stay valid until the next Reset or Solve.
class FirstOrderStepSolver {
 public:
  explicit FirstOrderStepSolver(const ConicQpParameters& parameters = {}) : program_(parameters) {}

  void Reset(int nv, int num_rows, double h, double zeta, bool velocity_product);
  int nv() const { return nv_; }
  int num_rows() const { return num_rows_; }
  Eigen::Block<Eigen::MatrixXd> mass() { return mass_.topLeftCorner(nv_, nv_); }
  Eigen::VectorXd::SegmentReturnType velocity() { return velocity_.head(nv_); }
  Eigen::VectorXd::SegmentReturnType force() { return force_.head(nv_); }
  Eigen::Block<Eigen::MatrixXd> jacobian() { return jacobian_.topLeftCorner(num_rows_, nv_); }
  SpringRow& row(int k) { return rows_[k]; }
  const SpringRow& row(int k) const { return rows_[k]; }
  // Keeps the rows k with keep[k] != 0 in their order (their G rows with them).
  void KeepRows(const std::vector<char>& keep);

  // The header's step; false as FirstOrderStatistics::ok.
  bool Solve();
  const FirstOrderStatistics& statistics() const { return statistics_; }
  Eigen::VectorXd::ConstSegmentReturnType velocity_out() const { return velocity_out_.head(nv_); }
  Eigen::VectorXd::ConstSegmentReturnType lambda() const { return lambda_.head(num_rows_); }
  // phid1 of each row: G v1, plus h a with the velocity product.
  Eigen::VectorXd::ConstSegmentReturnType row_rate() const { return row_rate_.head(num_rows_); }

  ConicQpParameters& program_parameters() { return program_.mutable_parameters(); }

 private:
  bool WellFormed() const;
  // The offsets o_i = W_i a_i + (S_x^+ a_x)_i of the header, per class, into offset_.
  void VelocityProductOffsets();
  // Unilateral rows only, enough per dof: the diagonal-plus-low-rank program (first_order_step.cc).
  bool SolveLowRank();
  // The master problem, densely; false when every try failed.
  bool SolveDense();

  int nv_ = 0, num_rows_ = 0;
  double h_ = 0, zeta_ = 0;
  bool velocity_product_ = false;
  Eigen::MatrixXd mass_, jacobian_;
  Eigen::VectorXd velocity_, force_;
  std::vector<SpringRow> rows_;

  FirstOrderStatistics statistics_;
  std::vector<int> bilateral_, normals_, first_tangents_, second_tangents_, unilateral_;
  std::vector<int> cone_contacts_, star_, class_rows_;
  Eigen::MatrixXd effective_, response_, g_star_, delassus_, hessian_, g_matrix_, low_rank_u_;
  Eigen::MatrixXd class_response_, class_delassus_, class_gram_;
  Eigen::VectorXd momentum_, free_velocity_, row_velocity_, linear_, h_vector_, unit_, a_;
  Eigen::VectorXd star_impulse_, offset_, class_rhs_, class_work_, low_rank_p_, low_rank_c_;
  Eigen::VectorXd low_rank_a_, low_rank_b_, velocity_out_, lambda_, row_rate_;
  std::vector<int> pivot_;
  std::optional<Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>>> factor_, mass_factor_;
  Eigen::MatrixXd mass_copy_;
  ConeDimensions cones_;
  ConicQpSolver program_;
  ConicQpAdmm admm_;
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
