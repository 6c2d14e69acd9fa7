// CANAL's own knobs (canal_solver.h), beside the shared SolverOptions. Every default is [OURS]
// where the paper gives none (digest seed-004 sections 5.6-5.8 and 12).
#pragma once

namespace alsim {

// The exact line search of eq. (26): rtsafe on phi'(alpha) (exact_line_search.h).
struct LineSearchParameters {
  double relative_tolerance = 1e-12;  // on |phi'(alpha)| / |phi'(0)|
  double bracket_tolerance = 1e-14;   // on (alpha_hi - alpha_lo) / max(1, alpha_hi)
  int max_iterations = 100;           // evaluations of phi' and phi'', bracketing included
  int max_doublings = 60;             // of alpha_hi while phi'(alpha_hi) < 0
};

// CANAL's knobs, with the digest's defaults (section 12; [OURS] where the paper gives none).
struct CanalParameters {
  // Initial penalty beta0 in kg (the paper's "moderate" 1e4 for its SI scenes), at every step.
  double beta0 = 1e4;
  // Eq. (27): beta <- min(kappa beta, beta_max) when the AL residual fell by less than a factor
  // zeta in one outer iteration (Alg. 1 line 19; the paper's unused eta is this zeta) [OURS].
  double kappa = 10;
  double beta_max = 1e8;
  double zeta = 0.5;
  // The inner Newton stops once ||r|| < newton_tolerance max(1, ||b||) (momentum units, b over
  // the island's dofs) or after max_newton_steps steps in one outer iteration [OURS].
  double newton_tolerance = 1e-10;
  int max_newton_steps = 50;
  // The exact line search of eq. (26) (rtsafe tolerances, digest 5.6 [OURS]).
  LineSearchParameters line_search;
  // Where the first outer iteration's Newton starts: v_free = A^{-1} b (false), or the velocity
  // at the start of the step, v_k (true; for theta = 0 the previous step's v_hat).
  bool start_from_previous_velocity = false;
};

}  // namespace alsim
