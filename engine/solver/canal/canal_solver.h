// CANAL: the Cascaded Newton-based Augmented Lagrangian of Sec. V of the SubADMM/CANAL paper
// (Algorithm 1; digest seed-004-subadmm-canal.md sections 4.4, 5, 10-12), and the two Newton
// baselines of Table II (canal-trdogleg, canal-dampedsn) that share its AL loop.
//
// Per island, with u = -lambda (the multiplier identity, digest 5.9) and the warm-start impulses
// of ConstraintSet::lambda as lambda^0:
//   outer AL loop (l = 0, 1, ...):
//     e~_i = e_i + [mu_i ||z^l_i,t||, 0, 0] on a contact's normal row (the lagged De Saxce term of
//       eqs. 20-21; alsim's rows are (normal, t1, t2)), e~_i = e_i on other rows;
//     inner solve from v_hat^l (the pluggable step; the surrogate is al_island.h's AlIsland):
//       CANAL: Newton on the strongly convex h of eq. (22),
//         x_i = lambda^l_i - beta_i (J_i v_hat + e~_i),  lambda_i = T_i(x_i)   (cone_operators.h)
//         r = A v_hat - b - sum_i J_i^T lambda_i                               (eq. 21, = grad h)
//         H = A + sum_i beta_i J_i^T D_i J_i,  D_i = dT_i/dx_i                 (eq. 24, SPD)
//         d = -H^{-1} r                                                        (eq. 25)
//         alpha = argmin h(v_hat + alpha d) by Newton on phi' (piece-aware)    (eq. 26)
//         (the Newton solvers' loop and line search, newton/newton_loop.h and
//         newton/exact_line_search.h)
//       TRDogleg, DampedSN: the same r with the strict T of eq. (17) and e~ = e (eq. 19), by a
//         trust-region dogleg or a damped semismooth Newton on 1/2 ||r||^2 (newton_baselines.h);
//       until ||r|| < newton_tolerance max(1, ||b||) (or below r's rounding error, which grows
//       with beta) or max_newton_steps; an inner solve that ends short of that tolerance (not by
//       the clock) is an inner failure, Table II's failure (a baseline's: see below);
//     z^{l+1}_i = J_i v_hat + (lambda^{l+1}_i - lambda^l_i) / beta_i, u^{l+1} = -lambda^{l+1} (12)
//     stop when ||J v_hat - z|| + ||p^{l+1} - p^l|| < SolverOptions::tolerance, where
//       ||J v_hat - z|| is Alg. 1 line 16's AL residual and p_i = mu_i ||z_i,t|| the De Saxce
//       terms ([OURS], canal_solver.cc; 0 for the baselines);
//     beta <- min(kappa beta, beta_max) when it fell by less than zeta        (eq. 27, line 19).
// The penalty: the paper's single beta_i = beta in kg (CanalPenalty::kUniform), or by default
// [OURS] beta_i = beta m_i with m_i = dim_i / trace(J_i A^{-1} J_i^T) the constraint's effective
// mass, recomputed every step from A's tree factor (admm_penalty.h), and beta dimensionless
// (CanalParameters::relative_beta0, relative_beta_max). One beta in kg is stiff for a light
// contact and soft for a heavy one (a 0.1 kg dish under a 5 kg pot, a foot under a robot's
// trunk): the Newton steps of the inner solve stop at the stiff rows' kinks and the AL loop
// moves the soft rows' multipliers slowly, so the loop stalls far above the tolerance. Scaled,
// every row's term beta_i J_i^T D_i J_i weighs alike against A in H, and each outer iteration
// contracts every constraint's error at the same rate.
// Rows: contacts (proximal cone projection, or strict), joint limits (max(., 0)), equalities
// (identity) and soft servos (eq. 15, clamped to the force range) all enter h, r and H.
//
// [OURS] A baseline's inner failure ends its AL loop, and CANAL solves the island from the same
// start (lambda^0, v_hat^0; CanalParameters::baselines.canal_fallback, the figure
// canal_fallbacks). Why: the merit 1/2 ||r||^2 of eq. (19) can be stationary with r != 0 at a kink
// of the strict operator (a contact at x_n = 0 with a large x_t, between open and slip; a box
// row's end), where both baselines stop, Table II's "stuck where the merit cannot be reduced".
// The stalled iterate leaves r = A v - b - J^T lambda, momentum the step would apply with no
// constraint accounting for it, and the loop run on from it passes it into lambda^{l+1} and, with
// beta raised by eq. (27), into every later iterate. No iterate of the baseline's own is a safe
// fallback: the first inner solve can be the failed one, and lambda^0 with the velocity it gives,
// A^{-1} (b + J^T lambda^0), v_free, or the least-||r|| iterate (as is or with the velocity its
// impulses give) each leave some constraint unsolved, which a stiff spring in b (a light lever
// held by a connect) turns into a velocity far larger than the step's. CANAL's h is strongly convex
// and its Newton decreases h, so its own inner failures (a step cap) stop short of the minimizer,
// not at a stall; CANAL has no fallback. The fallback factors H dense in the baseline's workspace.
// Without it (Table II's bench), the loop runs on through the failures as the paper's does and the
// step keeps its last iterate.
//
// [OURS] An island whose lagged De Saxce cascade stalls (no halving of the AL residual plus the De
// Saxce change in CanalParameters::stall_window outer iterations at the largest penalty) leaves
// CANAL's loop early and SubADMM, which solves the strict problem without a cascade, finishes it
// from CANAL's impulses (CanalParameters::subadmm_fallback_iterations; canal_parameters.h says
// when the cascade has no fixed point to find), after every island's CANAL solve, the stalled
// islands in parallel; the figure subadmm_fallbacks counts them.
//
// CANAL's H is the Newton solvers' sparse island Hessian (engine/solver/newton/island_hessian.h,
// shared with the Newton kit): A's tree-sparse entries plus every pair of dofs one constraint
// reaches (J_i^T J_i over ALL the island's constraints, open contacts included, whose D_i = 0
// leaves explicit zeros), so the symbolic analysis of the CHOLMOD supernodal factorization
// (engine/linalg/cholmod_llt.h) runs at most once per step and island, and each Newton step runs
// a numeric factorization only. Each constraint's beta J_i^T D_i J_i is computed in parallel into
// its own slots and then added into H in constraint order. Every other sum (r, phi', the
// residuals) runs in a fixed order too. The baselines assemble their non-symmetric dr/dv dense per
// island (newton_baselines.h). Islands run in parallel and share no writable data, so results are
// bit-identical for any thread count.
//
// Stop tests are SolverOptions' (max_iterations counts outer iterations, tolerance is the AL
// threshold theta^AL of Alg. 1 line 16, in m/s, replacing the digest's 1e-10 n_contacts so that
// one knob stops every solver, applied to the AL residual plus the De Saxce change; deadline and
// interrupt are checked after every outer iteration and every inner step). CANAL's own knobs are
// in CanalParameters, which the baselines read too (their own in CanalParameters::baselines).
//
// Memory: storage grows with the largest step seen and is then reused; CHOLMOD allocates inside
// every numeric factorization and on every new pattern (see cholmod_llt.h), so unlike SubADMM a
// CANAL step is not allocation-free; the SubADMM fallback is made at the first stall. The
// baselines' dense LU works in grow-only storage and allocates nothing once warm.
#pragma once

#include <memory>
#include <vector>

#include "engine/solver/admm/admm_penalty.h"
#include "engine/solver/admm/anderson.h"
#include "engine/solver/canal/al_island.h"
#include "engine/solver/canal/newton_baselines.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/newton/exact_line_search.h"
#include "engine/solver/newton/island_hessian.h"
#include "engine/solver/solve_statistics.h"
#include "engine/solver/solver.h"
#include "engine/solver/subadmm/subadmm_solver.h"

namespace alsim {

// What CANAL (or a Newton baseline) did in one island's solve.
struct CanalIslandStatistics {
  int outer_iterations = 0;
  int newton_steps = 0;    // inner steps over all outer iterations (baselines: rejected included)
  int inner_failures = 0;  // inner solves that ended short of their tolerance (not by the clock)
  int line_search_iterations = 0;  // evaluations of phi' (DampedSN: of the merit) over all searches
  int factorizations = 0;          // numeric factorizations of H (eq. 24), or LU of dr/dv
  int failed_factorizations = 0;   // H not positive definite, dr/dv not finite (a broken input)
  int rejected_steps = 0;          // TRDogleg: trial steps the trust region refused
  int gradient_steps = 0;          // DampedSN: gradient steps instead of the Newton direction
  int canal_fallbacks = 0;         // baselines: solved again by CANAL (0 or 1)
  bool stalled = false;            // CANAL: the De Saxce cascade stalled (CanalParameters)
  int subadmm_iterations = 0;      // CANAL: SubADMM's iterations finishing a stalled island
  double al_residual = 0;          // ||J v_hat - z|| after the last outer iteration, m/s
  double desaxce_change = 0;       // ||p^{l+1} - p^l|| after the last outer iteration, m/s
  double newton_residual = 0;      // ||r|| (eq. 21) at the end of the last inner loop, N s
  double beta = 0;                 // the final penalty, kg
  bool converged = false;          // the AL residual met SolverOptions::tolerance
};

// The step's totals over islands (sums of counts; the largest residuals and outer iterations).
struct CanalStatistics {
  int islands = 0;
  int outer_iterations = 0;  // summed over islands
  int max_outer_iterations = 0;
  int newton_steps = 0;
  int inner_failures = 0;
  int line_search_iterations = 0;
  int factorizations = 0;
  int failed_factorizations = 0;
  int rejected_steps = 0;
  int gradient_steps = 0;
  int canal_fallbacks = 0;     // islands a baseline left to CANAL
  int subadmm_fallbacks = 0;   // stalled islands SubADMM finished (CanalParameters)
  double al_residual = 0;      // the largest final AL residual over islands, m/s
  double desaxce_change = 0;   // the largest final De Saxce change over islands, m/s
  double newton_residual = 0;  // the largest final Newton residual over islands, N s
};

// One outer iteration of island 0, recorded when CanalSolver::set_record_history(true).
struct CanalOuterRecord {
  double al_residual = 0;
  double desaxce_change = 0;
  double newton_residual = 0;
  int newton_steps = 0;
  bool inner_failure = false;
  double beta = 0;  // the penalty this iteration ran with
};

class CanalSolver final : public IslandSolver {
 public:
  // `type`: kCanal, or one of the Table II baselines kCanalTrDogleg and kCanalDampedSn.
  explicit CanalSolver(const Model& m, SolverType type = SolverType::kCanal);
  SolverType type() const override { return type_; }

  // Of the last Solve.
  const CanalStatistics& statistics() const { return statistics_; }
  const std::vector<CanalIslandStatistics>& island_statistics() const { return island_stats_; }
  // Records island 0's outer iterations, and for the baselines every dr/dv they assemble, in
  // the next solves (allocates while on).
  void set_record_history(bool on) { record_history_ = on; }
  const std::vector<CanalOuterRecord>& history() const { return history_; }
  const std::vector<NewtonJacobianRecord>& jacobian_history() const { return jacobian_history_; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  // The islands in parallel, then SubADMM on the islands whose cascade stalled (in parallel), then
  // the step's CanalStatistics from theirs.
  void SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                    double deadline_us) override;
  void AddFigures(SolverStatistics* stats) const override;
  // CANAL's inner solve: Newton on h with the exact line search (eqs. 24-26), from the island's
  // velocity; counts into *stats. H is the sparse island Hessian, or with `dense` (a baseline's
  // fallback) factored dense there.
  InnerSolveResult ExactNewton(AlIsland& problem, const SolverOptions& options, double deadline_us,
                               int island, DenseNewtonWorkspace* dense,
                               CanalIslandStatistics* stats);

  JointSpaceJacobian jacobian_;
  // H of eq. (24) per island: its pattern (A + J^T J), local dofs and A's values (which the
  // baselines use too), the per-constraint blocks beta J_i^T D_i J_i, CHOLMOD (CANAL only).
  IslandHessian hessian_;
  SolverType type_;
  // Per island dof.
  std::vector<double> velocity_;         // v_hat
  std::vector<double> rhs_;              // b
  std::vector<double> newton_residual_;  // r, then the Newton direction d
  std::vector<double> product_;          // A v, then A d
  // Per constraint row.
  std::vector<double> argument_;       // x = lambda^l - beta (J v_hat + e~) at the current v_hat
  std::vector<double> impulse_;        // lambda = T(x)
  std::vector<double> outer_impulse_;  // lambda^l
  std::vector<double> shifted_bias_;   // e~ (0 on soft rows: their k e enters T)
  std::vector<double> row_velocity_;   // J v_hat
  std::vector<double> row_direction_;  // J d
  std::vector<double> rounding_;       // per constraint, at its first row: r's rounding scale
  std::vector<double> derivative_;     // D_i, c.dim x c.dim at 3 row_adr (per row: 3 values)
  // Per constraint: s_i of beta_i = beta s_i (CanalPenalty), from penalty_ (effective masses).
  AdmmPenalty penalty_;
  std::vector<double> penalty_scale_;
  // Anderson acceleration of the outer loop (CanalParameters::anderson_memory): per island, at
  // anderson_offset_[island], the gathered state w = (lambda^l, e~^l), its image g, and the
  // accelerator's history.
  std::vector<double> anderson_storage_;
  std::vector<long> anderson_offset_;
  std::vector<std::unique_ptr<DenseNewtonWorkspace>> dense_;  // per island (the baselines)
  // SubADMM for stalled islands (CanalParameters::subadmm_fallback_iterations; made on first use)
  // and this step's stalled islands, in island order.
  std::unique_ptr<SubAdmmSolver> fallback_;
  std::vector<int> stalled_islands_;
  std::vector<CanalIslandStatistics> island_stats_;
  CanalStatistics statistics_;
  bool record_history_ = false;
  std::vector<CanalOuterRecord> history_;
  std::vector<NewtonJacobianRecord> jacobian_history_;
};

}  // namespace alsim
