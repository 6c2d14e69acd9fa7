// Options and per-step statistics shared by every contact solver (engine/solver/solver.h).
#pragma once

#include <atomic>

namespace alsim {

enum class SolverType {
  kSubAdmm,     // subsystem- and body-split ADMM, Algorithm 2
  kPgs,         // projected Gauss-Seidel on the Delassus operator, the paper's baseline
  kAdmmNoSub,   // ADMM on one global system, eq. (28), factored with CHOLMOD
  kAdmmNoBody,  // subsystem split without the body-level split of eqs. (30)-(31)
  kCanal,       // cascaded Newton-based augmented Lagrangian, Algorithm 1 (engine/solver/canal)
};

// "subadmm", "pgs", "admm-nosub", "admm-nobody", "canal".
const char* SolverName(SolverType type);
// Parses a SolverName; false for an unknown name.
bool ParseSolverName(const char* name, SolverType* type);

// How the ADMM solvers split the penalty beta into per-constraint penalties beta_i = s_i beta.
enum class PenaltyScaling {
  // The paper's rule: s_i = 1 for body-space rows, so every contact shares one beta (Sec. VI-D);
  // joint-space rows get their dof's own pseudo-density (engine/solver/admm_penalty.h).
  kPseudoDensity,
  // [OURS] s_i beta0 = 1 / w_i, w_i the mean diagonal of constraint i's Delassus block
  // J_i A^{-1} J_i^T: each constraint starts at its own effective mass, as a Jacobi
  // preconditioner of the dual problem. On MuJoCo's humanoid.xml: 46 -> 37 mean iterations over
  // the first 500 steps, and 10x lower Sec. VII residuals (BENCHMARKS.md).
  kDelassus,
};

// "delassus", "pseudo-density".
const char* PenaltyScalingName(PenaltyScaling scaling);
// Parses a PenaltyScalingName; false for an unknown name.
bool ParsePenaltyScalingName(const char* name, PenaltyScaling* scaling);

struct SolverOptions {
  SolverType type = SolverType::kSubAdmm;
  // Stop an island after this many iterations (the paper's Table III uses 100).
  int max_iterations = 100;
  // Stop an island once theta_p + theta_d < tolerance (eq. 42; theta_p in m/s, theta_d in N s,
  // SI units as the paper). PGS stops once no impulse changed by more than `tolerance` N s.
  // [OURS] 1e-6: 1e-6 m/s is 5 nm of drift per 5 ms step; against 1e-8, the Sec. VII residual
  // and the penetration hardly change on our scenes and MuJoCo's humanoids while the mean
  // iterations fall by a quarter (BENCHMARKS.md).
  double tolerance = 1e-6;
  // Stop every island once the step's solve has taken this long, in microseconds (the paper's
  // 0.5 ms and 1 ms budgets); 0 for no budget. A budget makes results depend on the machine.
  double time_budget_us = 0;
  // Adaptive beta of eq. (43): rebalance when theta_p > gamma theta_d or theta_d > gamma theta_p.
  bool adaptive_beta = true;
  double beta_gamma = 10;
  // Iterations between checks of eq. (43) [OURS]: checking every iteration let beta chase the
  // residuals' oscillation; every 10 gave 10-2500x lower Sec. VII residuals at 100 iterations on
  // quadruped_drop_8 and box_stack than every 1 (BENCHMARKS.md).
  int beta_update_interval = 10;
  PenaltyScaling penalty_scaling = PenaltyScaling::kDelassus;
  // kDelassus, SubADMM [OURS]: a constraint among trees that persists from step to step (its
  // warm start) keeps its Delassus trace for this many steps before it is computed again; 1
  // computes every trace in every step (as the ADMM baselines always do). The scales only
  // precondition the iteration, and a robot's effective masses change slowly: on humanoid.xml,
  // 22_humanoids and quadruped_drop_27 the mean iterations, residuals and penetrations are those of
  // fresh traces, while the traces took 8% of a humanoid's step (BENCHMARKS.md). The traces and
  // their ages are part of the state snapshot.
  int delassus_refresh_steps = 16;
  // Over-relaxation of the ADMM solvers [OURS] (Boyd et al. 2011, Sec. 3.4.3): the constraint
  // step reads alpha J_ij v_j + (1 - alpha) z_ij instead of J_ij v_j. 1 is the paper's Algorithm
  // 2; values in (1, 2) usually converge faster. Valid range (0, 2).
  double relaxation = 1.6;
  // Anderson acceleration of SubADMM's iteration over (z, lambda / beta_i) with this many
  // history columns, 0 for none [OURS] (engine/solver/anderson.h). Valid range 0 to 8.
  int anderson_memory = 5;
  // SubADMM [OURS]: an island still iterating after this many iterations switches each of its
  // trees with at most 48 constraint rows to the constraint-space response of eq. (34) (one
  // rows x rows product per velocity step instead of the tree solve; the same iterates up to
  // rounding; subadmm_solver.cc). Building the response costs about a dozen tree velocity steps,
  // so it waits for islands that run long. 0 keeps the tree solve throughout.
  int response_after_iterations = 24;
  // Compute SolverStatistics::contact_residual: one extra solve per constrained subsystem, at
  // the end of each island's task (in parallel, so counted in solve_seconds).
  bool compute_residual = true;
  // Stop every island at its next iteration once this flag is set (null: never), for a caller
  // that must end a long solve early (a server whose call was cancelled or ran past its
  // deadline, or that is shutting down). A solve stopped this way leaves an unconverged answer,
  // as the iteration cap does; the caller decides what to tell its client.
  const std::atomic<bool>* interrupt = nullptr;
};

// What a step's solve reports (DESIGN.md: the same diagnostics for every solver).
struct SolverStatistics {
  int islands = 0;
  int constraints = 0;
  int contacts = 0;
  int max_iterations = 0;      // the most any island took
  double mean_iterations = 0;  // over islands
  double primal_residual = 0;  // theta_p, the largest over islands (m/s); PGS: 0
  double dual_residual = 0;    // theta_d, the largest over islands (N s); PGS: 0
  // Sec. VII accuracy metric: from the final impulses, v_hat = A^{-1}(b + J^T lambda), then
  // ||lambda - T(lambda - (J v_hat + e))|| over every constraint row, divided by the number of
  // contacts (by 1 when there are none). Zero iff the impulses solve the NCP exactly.
  double contact_residual = 0;
  // Wall time of the solve, including setup, factorizations and (compute_residual) the residual.
  double solve_seconds = 0;
};

}  // namespace alsim
