// CANAL's own knobs (canal_solver.h), beside the shared SolverOptions. Every default is [OURS]
// where the paper gives none (digest seed-004 sections 5.6-5.8 and 12).
#pragma once

#include <cstdint>

// LineSearchParameters: the exact line search of eq. (26), shared with the Newton kit.
#include "engine/solver/newton/exact_line_search.h"

namespace alsim {

// The two Newton baselines of Table II inside CANAL's AL loop (newton_baselines.h). Both read
// CanalParameters' outer-loop knobs and inner cap and tolerance; these are their own [OURS].
struct NewtonBaselineParameters {
  // TRDogleg (Nocedal & Wright, Algorithm 4.1): a trial step is accepted when the merit's actual
  // reduction is more than eta times the reduction its quadratic model predicts; eta in [0, 1/4).
  double trust_region_eta = 1e-4;
  // DampedSN (De Luca, Facchinei & Kanzow 1996): Armijo's sufficient decrease, the merit must
  // fall by at least sigma t |grad . d| at step length t; sigma in (0, 1/2).
  double armijo_sigma = 1e-4;
  // DampedSN: the most halvings of t in one backtracking search. A gradient step -J^T r is in
  // units of beta^2 ||J||^2 ||r||, so at beta = 1e8 it needs about 50 halvings to be accepted.
  int max_backtracks = 60;
  // A baseline's inner failure ends its AL loop, and CANAL solves the island from the same start
  // (canal_solver.h); false runs the paper's loop on through its failures and keeps its last
  // iterate, as Table II measures it (bench/table2_bench.cc) [OURS].
  bool canal_fallback = true;
};

// How the penalty of constraint i, beta_i, follows the outer loop's penalty beta.
enum class CanalPenalty : std::uint8_t {
  // beta_i = beta for every constraint, in kg: the paper's single penalty (Algorithm 1).
  kUniform,
  // beta_i = beta m_i [OURS], m_i = dim_i / trace(J_i A^{-1} J_i^T) the constraint's effective
  // mass (SubADMM's Delassus scaling, engine/solver/admm/admm_penalty.h) and beta dimensionless.
  // With one beta, a constraint whose effective mass is far below beta is nearly hard in h while
  // one far above it is soft, so each Newton step stops at the first kink of the stiff ones and
  // the AL multipliers of the soft ones move slowly; scaled, every constraint sees the same
  // ratio beta_i / m_i in H (eq. 24) and the outer loop converges at one rate.
  kEffectiveMass,
};

const char* CanalPenaltyName(CanalPenalty penalty);
// False (and *penalty unchanged) for a name that is none of "uniform", "effective-mass".
bool ParseCanalPenaltyName(const char* name, CanalPenalty* penalty);

// CANAL's knobs, with the digest's defaults (section 12; [OURS] where the paper gives none).
struct CanalParameters {
  CanalPenalty penalty = CanalPenalty::kEffectiveMass;
  // kUniform: the initial penalty beta0 in kg (the paper's "moderate" 1e4 for its SI scenes), at
  // every step, and the largest of eq. (27).
  double beta0 = 1e4;
  double beta_max = 1e8;
  // kEffectiveMass: the same two as multiples of each constraint's effective mass [OURS].
  double relative_beta0 = 100;
  double relative_beta_max = 1e6;
  // Eq. (27): beta <- min(kappa beta, beta_max) when the AL residual fell by less than a factor
  // zeta in one outer iteration (Alg. 1 line 19; the paper's unused eta is this zeta) [OURS].
  double kappa = 10;
  double zeta = 0.5;
  // The inner Newton stops once ||r|| < newton_tolerance max(1, ||b||) (momentum units, b over
  // the island's dofs) or after max_newton_steps steps in one outer iteration [OURS].
  double newton_tolerance = 1e-10;
  int max_newton_steps = 50;
  // Anderson acceleration of the outer loop [OURS]: (lambda^l, e~^l) -> (lambda^{l+1}, e~^{l+1})
  // is a fixed-point iteration (linear near its fixed point: the AL update and the De Saxce
  // cascade), extrapolated from this many past iterates (admm/anderson.h; 0 for none). Any
  // lambda and e~ give a convex h, so an extrapolated iterate never breaks the inner solve.
  int anderson_memory = 3;
  // The exact line search of eq. (26) (its tolerances, digest 5.6 [OURS]).
  LineSearchParameters line_search;
  // The Newton baselines' own knobs (canal-trdogleg, canal-dampedsn).
  NewtonBaselineParameters baselines;
  // [OURS] The lagged De Saxce cascade p^{l+1} = mu ||z_t(p^l)|| is a fixed-point iteration with
  // no convergence guarantee: in a pile of spheres a sliding contact's speed can grow with its own
  // p (a wedged sphere), so p and ||z_t|| climb together while the normal velocity error
  // p^{l+1} - p^l stays put, and neither damping nor extrapolation finds the fixed point that the
  // exact (strict) Coulomb problem has. An island whose AL residual plus De Saxce change has not
  // halved in stall_window outer iterations at the largest penalty has stalled; SubADMM, which
  // solves the strict problem without a cascade, then finishes it from CANAL's impulses with up to
  // subadmm_fallback_iterations iterations (0: no fallback; the loop runs on to its cap).
  int stall_window = 20;
  int subadmm_fallback_iterations = 2000;
  // Where the first outer iteration's Newton starts: v_free = A^{-1} b (false), or the velocity
  // at the start of the step, v_k (true; for theta = 0 the previous step's v_hat).
  bool start_from_previous_velocity = false;
};

}  // namespace alsim
