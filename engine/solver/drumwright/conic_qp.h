// A dense primal-dual interior-point method for the convex quadratic cone program
//   minimize    1/2 x^T P x + c^T x
//   subject to  G x + s = h,   s in K = R+^l x Q^{m_1} x ... x Q^{m_k}   (symmetric_cone.h)
// with dual  z in K,  P x + c + G^T z = 0,  s o z = 0  (CVXOPT's coneqp standard form without
// equality rows; Vandenberghe, "The CVXOPT linear and quadratic cone program solvers", 2010).
//
// Drumwright's solver (seed 003; digest seed-003-drumwright.md sections 5-8) solves one such
// program per step:
//   unilateral only, QP (83)-(85): min 1/2 |lam|^2 s.t. (I + W S) lam >= r, lam >= 0 is P = I,
//     c = 0, l = 2n orthant rows: -(I + W S) lam + s = -r and -lam + s = 0;
//   the master problem (181)-(189): min 1/2 x^T H x + g^T x s.t. A x >= q (182), x_u >= 0,
//     x_n >= 0, and per contact i the cone ||(x_r_i, x_s_i)|| <= mu_i x_n_i (120) (with x_n >= 0
//     it is the second-order cone, not the double cone of mu^2 x_n^2 >= x_r^2 + x_s^2): P = H,
//     c = g, the orthant rows -A x + s = -q and -x_u + s = 0 (x_n >= 0 follows from its cone),
//     and per contact one Q^3 block -(mu_i x_n_i, x_r_i, x_s_i) + s = 0.
// H is SPD there (H = blkdiag(zeta, I, I, zeta) + PSD terms, (180)/(183)), so the program is
// strictly convex and its solution unique; the method only needs P + G^T G nonsingular.
//
// Method (Vandenberghe 2010, Secs. 4-5):
// - Objective scaling: the method runs on P / omega, c / omega with omega = max_i P_ii (the same
//   minimizer, duals z / omega), so that the start's duals have the multipliers' scale whether
//   H's entries are 1 or (hB)^2; the caller sees z and the statistics in its own units.
// - Start: the solution of [P G^T; G -I] [x; z] = [-c; h] (the least-squares point of
//   min 1/2 x^T P x + c^T x + 1/2 ||G x - h||^2) gives x, s = h - G x and z = G x - h; s and z
//   are each moved into K by s += (1 + t) e when t = IdentityShift(s) >= -1e-8 max(1, ||s||).
//   A caller's primal start x0 (ConicQpSolver::Solve) replaces x and s = h - G x0 (shifted the
//   same way if not interior); z still comes from the least-squares point. Drumwright's
//   feasible point (normals and unilateral impulses large, tangents zero; Appendix 0.A) is such
//   a start. An infeasible-start method needs no feasible point, so this is an option (a
//   previous step's answer, say), not a phase 1; the answer is the same either way.
// - Scaling: Nesterov-Todd (nt_scaling.h), W z = W^-1 s = lambda, recomputed at each iterate.
// - Newton system: with r_x = P x + c + G^T z, r_z = G x + s - h and the scaled steps
//   ds~ = W^-1 ds, dz~ = W dz,
//     P dx + G^T dz = -r_x,   G dx + ds = -r_z,   lambda o (ds~ + dz~) = b_s,
//   reduced with G~ = W^-1 G to (P + G~^T G~) dx = -r_x - G~^T (W^-1 r_z + lambda \ b_s), then
//   dz~ = G~ dx + W^-1 r_z + lambda \ b_s, ds~ = lambda \ b_s - dz~. P + G~^T G~ is factored
//   once per iteration by Eigen's Cholesky (LLT), or, when rounding makes that fail near the
//   solution, where rows of G~ grow without bound, by a pivoted LDL^T (LDLT); refinement_steps
//   rounds of iterative refinement on the unreduced system's residual (Sec. 5.3) win back the
//   digits the reduction loses there.
// - Mehrotra predictor-corrector: the affine step b_s = -lambda o lambda, its step length alpha_a
//   in the scaled space (MaxStep on lambda), sigma = (gap_a / gap)^3 with
//   gap_a = (lambda + alpha_a ds~_a)^T (lambda + alpha_a dz~_a) clamped to [0, gap]; then the
//   combined step b_s = -lambda o lambda - ds~_a o dz~_a + sigma mu e, mu = s^T z / nu, taken
//   with alpha = min(1, step_fraction * MaxStep).
// - Stopping rule (checked at each iterate, before the Newton system is formed):
//     ||r_z|| <= feasibility_absolute + feasibility_relative * max(||G x||, ||s||, ||h||)
//     ||r_x|| <= feasibility_absolute + feasibility_relative * max(||P x||, ||c||, ||G^T z||)
//     s^T z   <= gap_absolute + gap_relative * max(|p*|, |d*|, 1e-300)
//   with p* = 1/2 x^T P x + c^T x and d* = p* + z^T (G x - h) (2-norms), all of the program
//   divided by omega. The relative terms use the sizes of the terms themselves, not of the
//   data, so that a problem scaled by O(hB) (the paper's warning, Sec. 8.4: "the number of
//   digits of precision required is O(hB)") stops at the same relative accuracy as its
//   unit-scaled copy. What the rule buys in x: 1/2 (x - x*)^T P (x - x*) <= gap, so x is met
//   to sqrt(2 gap / lambda_min(P)) along P's weakest direction. Two cases follow. (1) The
//   master problem's H spans ~1 to ~(hB)^2: its weak directions (impulse distributions that
//   G*^T barely sees) are fixed to fewer digits than its strong ones, which is the paper's
//   O(hB) warning restated. (2) A degenerate row, whose bound and multiplier both vanish at
//   the answer (the QP (83) with lam_i = 0: c = 0, so lam >= 0 holds with a zero multiplier),
//   converges linearly and as sqrt(gap): lam_i ~ sqrt(gap_absolute), until the polish below.
// - Polish: a solved answer is replaced by the exact solution of the equality-constrained QP on
//   its active set when that is feasible and no worse (active_set_polish.h; the active set must
//   be linear, so a sliding contact's cone block on its curved boundary keeps the interior
//   point's answer).
// - Floor: in double precision the iterates eventually stop improving (a step leaves K in
//   rounding, or the measure climbs divergence_factor above its best). The method then returns
//   the best iterate, solved if its kkt_residual is at most acceptable_kkt_residual.
// Every sum runs in a fixed order (each entry of P + G~^T G~ over G~'s rows in order; Eigen's
// dense products and factorizations, deterministic for given sizes), so a solve is
// deterministic. Storage is grow-only: Resize allocates only when the workspace it needs exceeds
// the largest seen so far, and a Solve after any Resize allocates nothing (Eigen's LLT runs in
// place, its LDLT and PartialPivLU kernels over the solver's own pivots: GrowOnlyLdlt,
// GrowOnlyLu), so an island whose program changes size every step allocates nothing once warm.
// The cost is dense: O(m n^2) to form P + G~^T G~ and O(n^3) to factor it per iteration.
//
// Diagonal plus low rank (SolveDiagonalLowRank): many rows over few dofs. In the QP (83)-(85),
//   min 1/2 |lam|^2  s.t.  (I + W S) lam >= r  (84),  lam >= 0  (85),
// S = G M^-1 G^T has rank <= nv, so A = I + (W G) M^-1 G^T is the identity plus a rank-nv term
// ("900 elements, 6 dofs": rank(G Lam G^T) <= nv). The structured program is
//   minimize 1/2 x^T diag(p) x + c^T x  s.t.  A x >= b,  x >= 0 (optional),
//   A = diag(a) + U V^T  (U, V n x r),
// i.e. G = [-A; -I], h = [-b; 0], K = R+^{2n} (R+^n without x >= 0), never formed. With the NT
// scaling W = diag(d1, d2) of the orthant and the row weights g1 = d1^-2, g2 = d2^-2, the reduced
// Newton matrix is
//   P + G~^T G~ = diag(p) + diag(g2) + A^T diag(g1) A = Delta + L C L^T,
//   Delta = diag(delta),  delta_i = p_i + g2_i + a_i^2 g1_i,
//   L = [diag(a g1) U, V],  C = [0, I; I, U^T diag(g1) U],
// diagonal plus rank <= 2r. The Woodbury identity
//   (Delta + L C L^T)^-1 = Delta^-1 - Delta^-1 L S^-1 L^T Delta^-1,  S = C^-1 + L^T Delta^-1 L,
// with C^-1 = [-U^T diag(g1) U, I; I, 0], gives S's blocks (2r x 2r, symmetric, indefinite)
//   S_11 = -sum_i g1_i (p_i + g2_i) / delta_i u_i u_i^T,
//   S_12 =  I + sum_i a_i g1_i / delta_i u_i v_i^T,   S_22 = sum_i v_i v_i^T / delta_i,
// S_11 written without the difference -g1_i + a_i^2 g1_i^2 / delta_i, which cancels to nothing
// on active rows (g1_i -> infinity). S is factored by LU with partial pivoting (it is
// indefinite), and a solve is
//   q = Delta^-1 b,  S xi = [U^T (a g1 q); V^T q],  x_i = q_i - (a_i g1_i u_i^T xi_1
//                                                              + v_i^T xi_2) / delta_i.
// S is equilibrated (E S E, E = diag(|S_kk|^-1/2)) before its LU: U carries W and V does not.
// The Woodbury solve's error is not confined to the Newton matrix's weak directions as the
// Cholesky's is, so this path refines woodbury_refinement_steps times, and the stopping rule's
// scales also hold the sizes of the pieces G x and G^T z are summed from (a o x, U V^T x;
// a o z_1, V U^T z_1), relative to which their products round.
// Conditioning: (84) as written, A = I + W S, has rows of size W |S| next to P = I; once
// (W |S|)^2 nears 1 / eps the dense path's P + G~^T G~ holds P below its rounding and its
// factor fails, and Woodbury's forward error grows with the same condition number. (84) divided
// by W,
//   (W^-1 + S) lam >= W^-1 r   (a = W^-1, U = G M^-1, V = G, b = W^-1 r),
// has the same lam (z_1 scaled by W) and rows of size |S|; it is the form to pass.
// G x and G^T z take O(n r) each; an iteration costs O(n r^2 + r^3) instead of O(n^3). The
// start, the iterations, the refinement, the stopping rule, the floor and the statistics are the
// dense path's (one loop, which differs only in the products with P and G and in the Newton
// matrix's factor). The active-set polish (S1 the active rows of A x >= b, S2 those of x >= 0,
// s_i < z_i) solves, where S1 and S2 are disjoint and a_i != 0 on S1, the equality QP's KKT
//   p_j x_j + c_j - a_j y_j [j in S1] - v_j^T eta - z_2j = 0,  eta = U_S1^T y,
//   a_i x_i + u_i^T mu = b_i (i in S1),  x_j = 0 (j in S2),  mu = V^T x,
// by x_i = (b_i - u_i^T mu) / a_i on S1, x_j = (v_j^T eta - c_j) / p_j off S1 and S2, which
// leaves the 2r x 2r system
//   eta + sum_S1 u_i v_i^T eta / a_i + sum_S1 p_i / a_i^2 u_i u_i^T mu
//       = sum_S1 u_i (p_i b_i / a_i^2 + c_i / a_i),
//   mu - sum_free v_j v_j^T eta / p_j + sum_S1 v_i u_i^T mu / a_i
//       = sum_S1 v_i b_i / a_i - sum_free v_j c_j / p_j,
// then y_i = (p_i x_i + c_i - v_i^T eta) / a_i and z_2j = c_j - v_j^T eta, refined
// refinement_steps times on the equality QP's residuals (x_i loses digits where a_i is small,
// as for (84) divided by W); it is kept, as on the dense path, when feasible to 1e-9 and no
// worse by the KKT measure. Where a row and its bound are both active (S1 and S2 meet) there is
// no polish. Every sum of this path runs over the rows in order (and Eigen's products and LU of
// fixed sizes), so a solve is deterministic; after ResizeDiagonalLowRank (grow-only, as Resize)
// it allocates nothing.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <vector>

#include "engine/solver/drumwright/active_set_polish.h"
#include "engine/solver/drumwright/nt_scaling.h"
#include "engine/solver/drumwright/symmetric_cone.h"

namespace alsim {

struct ConicQpParameters {
  // The stopping rule above, in the units of the objective divided by omega. CVXOPT's coneqp
  // defaults (1e-7 feasibility, 1e-7 absolute and 1e-6 relative gap) fix x only to ~sqrt(1e-6)
  // relative: the master problem's impulses feed the next step's velocities, so the defaults
  // sit a few digits above double precision's floor instead.
  double feasibility_absolute = 1e-14;
  double feasibility_relative = 1e-12;
  double gap_absolute = 1e-18;
  double gap_relative = 1e-13;
  // Ipopt's "acceptable" level: when no further iteration is possible in double precision (the
  // last iterate is on the edge of K's interior, the step is not finite), an iterate whose
  // ConicQpStatistics::kkt_residual is at most this is reported solved (at_floor set).
  double acceptable_kkt_residual = 1e-9;
  // Rounding has taken over, and the method stops at the best iterate (as above), once the
  // kkt_residual exceeds this multiple of the least one seen.
  double divergence_factor = 1e3;
  // Interior-point iterations (Newton systems); CVXOPT's default is 100, a Mehrotra method on
  // these problems needs far fewer.
  int max_iterations = 50;
  // Iterative refinement of each Newton system on its unreduced residual (Vandenberghe 2010,
  // Sec. 5.3): near the solution G~ = W^-1 G has rows that grow without bound and one
  // refinement restores the digits the reduced system loses.
  int refinement_steps = 3;
  // The same on the diagonal-plus-low-rank path (SolveDiagonalLowRank): the Woodbury solve's
  // error is not confined to the Newton matrix's weak directions, as the Cholesky's is, so it
  // needs more rounds to reach the dense path's iterates, and a round costs O(n r) there.
  int woodbury_refinement_steps = 10;
  // Polish a solved answer on its active set (active_set_polish.h): exact where the active set
  // is linear (orthant rows, cone blocks inactive or at the apex), and the degenerate rows of
  // the QP (83) then read exactly 0 instead of O(sqrt(gap)).
  bool polish = true;
  // The fraction of the step to the boundary of K that an iteration takes (CVXOPT's 0.99).
  double step_fraction = 0.99;
};

enum class ConicQpStatus {
  kSolved,         // the stopping rule holds
  kMaxIterations,  // max_iterations Newton systems without it
  kFailed,         // infeasible, or stuck short of acceptable_kkt_residual (no infeasibility
                   // certificate is computed; the statistics hold the last iterate's residuals)
  kInvalidInput,   // the data's sizes do not match Resize's
};

const char* ConicQpStatusName(ConicQpStatus status);

struct ConicQpStatistics {
  ConicQpStatus status = ConicQpStatus::kFailed;
  int iterations = 0;           // Newton systems solved
  double primal_residual = 0;   // ||G x + s - h||
  double dual_residual = 0;     // ||P x + c + G^T z||
  double gap = 0;               // s^T z
  double primal_objective = 0;  // p*
  double dual_objective = 0;    // d*
  // max of the three ratios of the stopping rule, residual / (1 + its scale): one number for
  // "how far from KKT", comparable across scalings.
  double kkt_residual = 0;
  // The method stopped because double precision allowed no further iteration, not by the
  // stopping rule (see ConicQpParameters::acceptable_kkt_residual).
  bool at_floor = false;
  // omega = max_i P_ii: the method runs on the objective divided by omega (see the header
  // comment); the residuals, gap and objectives above are in the caller's units, kkt_residual
  // and the stopping rule's absolute tolerances in the divided ones.
  double objective_scale = 1;
  // The answer is the active-set polish of the interior point's (ConicQpParameters::polish).
  bool polished = false;
};

// The structured program: minimize 1/2 x^T diag(p) x + c^T x s.t. (diag(a) + U V^T) x >= b and,
// when `nonnegative`, x >= 0 (header comment). For the QP (83)-(85): p = 1, c = 0, and (84)
// divided by W (header comment): a = W^-1, U = G M^-1 (n x nv), V = G, b = W^-1 r.
// A view: callers pass segments and blocks of their own storage, which must outlive it (an
// expression, evaluated into a temporary of the constructor's Ref, would not).
struct DiagonalLowRankQp {
  DiagonalLowRankQp(Eigen::Ref<const Eigen::VectorXd> p_, Eigen::Ref<const Eigen::VectorXd> c_,
                    Eigen::Ref<const Eigen::VectorXd> a_diagonal_,
                    Eigen::Ref<const Eigen::MatrixXd> u_, Eigen::Ref<const Eigen::MatrixXd> v_,
                    Eigen::Ref<const Eigen::VectorXd> b_, bool nonnegative_ = true)
      : p(p_), c(c_), a_diagonal(a_diagonal_), u(u_), v(v_), b(b_), nonnegative(nonnegative_) {}
  Eigen::Ref<const Eigen::VectorXd> p;           // n, positive
  Eigen::Ref<const Eigen::VectorXd> c;           // n
  Eigen::Ref<const Eigen::VectorXd> a_diagonal;  // n
  Eigen::Ref<const Eigen::MatrixXd> u, v;        // n x r
  Eigen::Ref<const Eigen::VectorXd> b;           // n
  bool nonnegative;
};

// Eigen's pivoted LDL^T (Eigen::LDLT, lower) over grow-only storage: the same in-place kernel
// (Eigen::internal::ldlt_inplace) and the same solve, so the same bits, without LDLT's
// transpositions and workspace, which reallocate whenever the size changes.
class GrowOnlyLdlt {
 public:
  GrowOnlyLdlt() = default;
  GrowOnlyLdlt(const GrowOnlyLdlt&) = delete;
  GrowOnlyLdlt& operator=(const GrowOnlyLdlt&) = delete;
  GrowOnlyLdlt(GrowOnlyLdlt&&) = default;

  // Sizes it for n x n, allocating only beyond the largest n before.
  void Resize(int n);
  // Factors A (n x n, symmetric, lower triangle read); false as LDLT's NumericalIssue.
  bool Compute(const Eigen::Ref<const Eigen::MatrixXd>& a);
  // b = A^-1 b (D's zero pivots give 0, as LDLT's pseudo-inverse).
  void SolveInPlace(Eigen::Ref<Eigen::VectorXd> b) const;

 private:
  int n_ = 0;
  GrowOnlyArena arena_;
  ArenaMatrix matrix_{nullptr, 0, 0};  // L below, D on the diagonal
  ArenaVector temporary_{nullptr, 0};
  std::vector<int> transpositions_;  // grow-only
};

// Eigen's LU with partial pivoting (Eigen::PartialPivLU) over grow-only storage: the same
// in-place kernel (Eigen::internal::partial_lu_inplace, blocked beyond 16 x 16) and the same
// solve, so the same bits, without PartialPivLU's permutations, which reallocate whenever the
// size changes.
class GrowOnlyLu {
 public:
  GrowOnlyLu() = default;
  GrowOnlyLu(const GrowOnlyLu&) = delete;
  GrowOnlyLu& operator=(const GrowOnlyLu&) = delete;
  GrowOnlyLu(GrowOnlyLu&&) = default;

  // Sizes it for n x n, allocating only beyond the largest n before.
  void Resize(int n);
  // P A = L U of A (n x n).
  void Compute(const Eigen::Ref<const Eigen::MatrixXd>& a);
  // x = A^-1 b (x may alias b).
  void Solve(const Eigen::Ref<const Eigen::VectorXd>& b, Eigen::Ref<Eigen::VectorXd> x) const;

 private:
  int n_ = 0;
  GrowOnlyArena arena_;
  ArenaMatrix lu_{nullptr, 0, 0};
  std::vector<int> transpositions_;  // grow-only
};

// The solver's storage is grow-only: Resize and ResizeDiagonalLowRank allocate only when the
// workspace they need exceeds the largest seen so far (its capacity); a Resize within it, then
// a Solve, allocate nothing. The solver holds views into its own storage: it moves, but does
// not copy.
class ConicQpSolver {
 public:
  explicit ConicQpSolver(const ConicQpParameters& parameters = {}) : parameters_(parameters) {}
  ConicQpSolver(const ConicQpSolver&) = delete;
  ConicQpSolver& operator=(const ConicQpSolver&) = delete;
  ConicQpSolver(ConicQpSolver&&) = default;

  // Sizes the workspace for n variables and the cone K, grow-only (above); a Solve of these
  // sizes then allocates nothing.
  void Resize(int num_variables, const ConeDimensions& cones);

  // Solves the program of P (n x n, symmetric, lower triangle read), c (n), G (rows(K) x n) and
  // h (rows(K)). `primal_start`, when not null, is the caller's x0 (see the header comment).
  // P and G may be blocks of larger column-major matrices, c and h segments: none is copied.
  // kInvalidInput unless Resize (not ResizeDiagonalLowRank) sized the solver for these sizes.
  ConicQpStatistics Solve(const Eigen::Ref<const Eigen::MatrixXd>& P,
                          const Eigen::Ref<const Eigen::VectorXd>& c,
                          const Eigen::Ref<const Eigen::MatrixXd>& G,
                          const Eigen::Ref<const Eigen::VectorXd>& h,
                          const Eigen::VectorXd* primal_start = nullptr);

  // Sizes the workspace for the structured program of n variables, U and V of `rank` columns, and
  // the rows x >= 0 when `nonnegative` (O(n rank), no n x n matrix), grow-only (above); a
  // SolveDiagonalLowRank of these sizes then allocates nothing.
  void ResizeDiagonalLowRank(int num_variables, int rank, bool nonnegative);

  // Solves the structured program (header comment): K = R+^{2n}, the rows ordered A x >= b first,
  // then x >= 0; s and z are those rows' slacks and multipliers. kInvalidInput unless
  // ResizeDiagonalLowRank sized the solver for these sizes.
  ConicQpStatistics SolveDiagonalLowRank(const DiagonalLowRankQp& qp,
                                         const Eigen::VectorXd* primal_start = nullptr);

  // The solution when Solve returned kSolved; otherwise the last (or, at the floor, the best)
  // iterate. Views of the current sizes, valid until the next Resize or Solve.
  Eigen::Ref<const Eigen::VectorXd> x() const { return x_; }
  Eigen::Ref<const Eigen::VectorXd> s() const { return s_; }
  Eigen::Ref<const Eigen::VectorXd> z() const { return z_; }

  const ConicQpParameters& parameters() const { return parameters_; }
  ConicQpParameters& mutable_parameters() { return parameters_; }

 private:
  enum class Layout { kNone, kDense, kDiagonalLowRank };
  using Vector = ArenaVector;
  using Matrix = ArenaMatrix;
  using RowMajorMatrix =
      Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>,
                 Eigen::AlignedMax>;
  using ConstVector = Eigen::Ref<const Eigen::VectorXd>;
  // Seats every view for n_, m_, rank_ and the layout's matrices (dense: n x n and m x n).
  void Seat(bool dense);
  // The vectors both layouts share.
  void ResizeCommon(int num_variables, const ConeDimensions& cones, bool dense);
  // The caller's units back from the objective divided by omega.
  ConicQpStatistics Unscale(double omega, ConicQpStatistics stats);
  // The one interior-point loop on the program whose objective is divided by omega: P is
  // scaled_p_ (dense) or diag(scaled_p_diagonal_), G is *dense_g_ or structured_'s.
  ConicQpStatistics SolveScaled(const Vector& c, const ConstVector& h,
                                const Eigen::VectorXd* primal_start);
  // The products of the current layout: out = P x, out = G x, out -= G x, out -= G^T z.
  void ProductP(const Vector& x, Vector* out) const;
  void ProductG(const Vector& x, Vector* out);
  void SubtractG(const Vector& x, Vector* out);
  void SubtractGt(const ConstVector& z, Vector* out);
  // Factors P + G~^T G~ with W = I (`start`) or the current scaling; false if it fails.
  bool FactorNewton(bool start);
  // The structured layout's Delta and S (header comment) for the row weights row_weight_.
  bool FactorDiagonalLowRank();
  // Replaces a solved answer by its active-set polish (active_set_polish.h) when that is
  // feasible and its kkt_residual no larger.
  void TryPolish(const Vector& c, const ConstVector& h, ConicQpStatistics* stats);
  // The structured layout's active-set polish into polish_x_, polish_s_, polish_z_ (header
  // comment); false where it does not apply or the point is not feasible.
  bool PolishDiagonalLowRank(const ConstVector& h);
  // Its solve for the right sides b (rows of S1) and c with the factored 2r x 2r system: x and
  // z (y on S1, z_2 on S2, 0 elsewhere) out.
  bool PolishSolve(const ConstVector& b, const ConstVector& c, Vector* x, Vector* z);
  // Shared by both starts: factors P + G~^T G~ for the current G~; false if it fails.
  bool Factor(const Matrix& P);
  // v = (P + G~^T G~)^-1 v with the last factor.
  void SolveFactored(Vector* v);
  // Solves the reduced Newton system P dx + G^T dz = b_x, G dx + ds = b_z,
  // lambda o (ds~ + dz~) = b_s with the current factor; ds and dz out in the scaled space.
  void SolveReduced(const Vector& bx, const Vector& bz, const Vector& bs, Vector* dx, Vector* ds,
                    Vector* dz);
  // The Newton system for b_s (in bs_) and the residuals r_x_, r_z_, refined
  // refinement_steps times on its unreduced residual: writes dx_, ds_ (= ds~), dz_ (= dz~).
  void SolveNewton();
  // The method can go no further in double precision (the scaling, the factor or the step
  // failed, or the iterates diverge in rounding): x_, s_, z_ and the statistics become the best
  // iterate's; kSolved if its kkt_residual is acceptable, else kFailed.
  ConicQpStatistics AtFloor(ConicQpStatistics stats);
  // x_, s_, z_ and `stats` become the best iterate's when it beats the current one.
  ConicQpStatistics RestoreBest(ConicQpStatistics stats);
  // Remembers the iterate with the least kkt_residual, which AtFloor returns.
  void KeepIfBest(const ConicQpStatistics& stats);
  // The iterate's residuals, objectives and stopping test into `stats`; true when it stops.
  bool Measure(const Vector& c, const ConstVector& h, ConicQpStatistics* stats);
  // Swaps the polished point with the iterate (the views, not their entries).
  void SwapPolished();

  ConicQpParameters parameters_;
  ConeDimensions cones_;
  NtScaling scaling_;
  int n_ = 0, m_ = 0;
  // Every view below lies in arena_ (grow-only, symmetric_cone.h).
  GrowOnlyArena arena_;
  Vector x_{nullptr, 0}, s_{nullptr, 0}, z_{nullptr, 0};
  // P x, G x, G^T z and the residuals
  Vector px_{nullptr, 0}, gx_{nullptr, 0}, gtz_{nullptr, 0}, r_x_{nullptr, 0}, r_z_{nullptr, 0};
  Matrix scaled_p_{nullptr, 0, 0};  // P / omega
  Vector scaled_c_{nullptr, 0};     // c / omega
  Matrix scaled_g_{nullptr, 0, 0};  // G~ = W^-1 G
  Matrix kkt_{nullptr, 0, 0};       // P + G~^T G~
  RowMajorMatrix scaled_g_rows_{nullptr, 0, 0};
  Matrix cholesky_{nullptr, 0, 0};  // P + G~^T G~, then its Cholesky factor in place (LLT)
  GrowOnlyLdlt factor_;             // when the Cholesky fails
  bool use_cholesky_ = true;
  // Newton right side and steps
  Vector bs_{nullptr, 0}, u_{nullptr, 0}, t_{nullptr, 0}, dx_{nullptr, 0}, ds_{nullptr, 0},
      dz_{nullptr, 0};
  Vector ds_affine_{nullptr, 0}, dz_affine_{nullptr, 0}, step_s_{nullptr, 0}, step_z_{nullptr, 0};
  ActiveSetPolish polish_;
  Vector polish_x_{nullptr, 0}, polish_s_{nullptr, 0}, polish_z_{nullptr, 0};
  ConicQpStatistics best_;
  Vector best_x_{nullptr, 0}, best_s_{nullptr, 0}, best_z_{nullptr, 0};
  // refinement
  Vector bx_{nullptr, 0}, bz_{nullptr, 0}, ex_{nullptr, 0}, ez_{nullptr, 0}, es_{nullptr, 0},
      refine_x_{nullptr, 0}, refine_s_{nullptr, 0}, refine_z_{nullptr, 0};

  // The problem of the current solve (set by Solve / SolveDiagonalLowRank for its duration).
  Layout layout_ = Layout::kNone;
  const Eigen::Ref<const Eigen::MatrixXd>* dense_g_ = nullptr;
  const DiagonalLowRankQp* structured_ = nullptr;
  // The structured layout: rank r, whether x >= 0 is present, diag(p) / omega, h = [-b; 0].
  int rank_ = 0;
  bool nonnegative_ = true;
  Vector scaled_p_diagonal_{nullptr, 0}, structured_h_{nullptr, 0};
  Vector ones_{nullptr, 0}, row_weight_{nullptr, 0};     // e and g = W^-2 e (m)
  Vector inv_delta_{nullptr, 0}, coupling_{nullptr, 0};  // 1 / delta_i and a_i g1_i / delta_i (n)
  Matrix capacitance_{nullptr, 0, 0};                    // E S E (2r x 2r)
  Vector capacitance_scale_{nullptr, 0};                 // E
  GrowOnlyLu capacitance_lu_;
  Vector rank_r_{nullptr, 0}, rank_rhs_{nullptr, 0}, rank_xi_{nullptr, 0};  // r, 2r, 2r
  Vector woodbury_q_{nullptr, 0}, woodbury_l_{nullptr, 0};                  // n
  Vector work_n_{nullptr, 0}, work_m_{nullptr, 0}, work_m2_{nullptr, 0};
};

// s <- its projection onto K = R+^linear x Q^k1 x ...: the orthant's max(0, s_i); a second-order
// block (t, u): itself inside, 0 in the polar cone, else ((t + |u|) / 2) (1, u / |u|).
void ProjectOntoCone(const ConeDimensions& cones, Eigen::Ref<Eigen::VectorXd> s);

// The fallback for a program the interior point could not solve: ADMM on the same program (the
// operator splitting of OSQP and SCS), min 1/2 x^T P x + c^T x s.t. G x + s = h, s in K:
//   x <- (P + sigma I + rho G^T G)^-1 (sigma x - c - rho G^T (s - h + u))
//   s <- Pi_K(h - G x - u),   u <- u + G x + s - h,
// sigma 1e-6, rho from 1 rebalanced by the ratio of the scaled primal and dual residuals every 50
// iterations; converged once both residuals are below `tolerance` relative to their terms.
// Linear convergence, but on any convex program; sized data well scaled (unit rows, an O(1)
// answer) converge in tens of iterations. Grow-only storage as ConicQpSolver's: Solve allocates
// nothing after a Resize within capacity (its Cholesky of P + sigma I + rho G^T G in place,
// refactored when rho changes).
class ConicQpAdmm {
 public:
  ConicQpAdmm() = default;
  ConicQpAdmm(const ConicQpAdmm&) = delete;
  ConicQpAdmm& operator=(const ConicQpAdmm&) = delete;
  ConicQpAdmm(ConicQpAdmm&&) = default;

  // Sizes the workspace for n variables and K, grow-only.
  void Resize(int num_variables, const ConeDimensions& cones);
  // The method above from x = 0; true once converged, false after max_iterations (x the last
  // iterate) or for sizes other than Resize's. P and G may be blocks, c and h segments.
  bool Solve(const Eigen::Ref<const Eigen::MatrixXd>& P, const Eigen::Ref<const Eigen::VectorXd>& c,
             const Eigen::Ref<const Eigen::MatrixXd>& G, const Eigen::Ref<const Eigen::VectorXd>& h,
             int max_iterations, double tolerance, int* iterations);
  // Valid until the next Resize or Solve.
  Eigen::Ref<const Eigen::VectorXd> x() const { return x_; }

 private:
  using Vector = ArenaVector;
  using Matrix = ArenaMatrix;
  // The Cholesky of P + sigma I + rho G^T G in place in factor_; false if it fails.
  bool Factor(const Eigen::Ref<const Eigen::MatrixXd>& P, double sigma, double rho);

  ConeDimensions cones_;
  int n_ = 0, m_ = 0;
  GrowOnlyArena arena_;
  Matrix gram_{nullptr, 0, 0}, factor_{nullptr, 0, 0};  // G^T G; the Cholesky factor (n x n)
  Vector x_{nullptr, 0}, work_n_{nullptr, 0};           // n
  // s, u, the previous s, the residual G x + s - h, G x, and a workspace (m)
  Vector s_{nullptr, 0}, u_{nullptr, 0}, previous_s_{nullptr, 0}, residual_{nullptr, 0},
      gx_{nullptr, 0}, work_m_{nullptr, 0};
};

// ConicQpAdmm on the program, x and the iterations out (allocates: a ConicQpAdmm each call).
bool SolveConicQpByAdmm(const Eigen::Ref<const Eigen::MatrixXd>& p,
                        const Eigen::Ref<const Eigen::VectorXd>& c,
                        const Eigen::Ref<const Eigen::MatrixXd>& g,
                        const Eigen::Ref<const Eigen::VectorXd>& h, const ConeDimensions& cones,
                        int max_iterations, double tolerance, Eigen::VectorXd* x, int* iterations);

}  // namespace alsim
