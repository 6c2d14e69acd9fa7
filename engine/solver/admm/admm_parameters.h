// The knobs of the ADMM family (SubADMM and its ablations "No Sub" and "No Body" of Table III):
// one struct for all three, so that the ablations differ from SubADMM only in their splitting.
#pragma once

namespace alsim {

// How the ADMM solvers split the penalty beta into per-constraint penalties beta_i = s_i beta
// (engine/solver/admm/admm_penalty.h).
enum class PenaltyScaling {
  // The paper's rule: s_i = 1 for body-space rows, so every contact shares one beta (Sec. VI-D);
  // joint-space rows get their dof's own pseudo-density.
  kPseudoDensity,
  // [OURS] s_i beta0 = 1 / w_i, w_i the mean diagonal of constraint i's Delassus block
  // J_i A^{-1} J_i^T: each constraint starts at its own effective mass, as a Jacobi
  // preconditioner of the dual problem (fewer iterations and lower Sec. VII residuals on the
  // humanoids; BENCHMARKS.md).
  kDelassus,
};

// "delassus", "pseudo-density".
const char* PenaltyScalingName(PenaltyScaling scaling);
// Parses a PenaltyScalingName; false for an unknown name.
bool ParsePenaltyScalingName(const char* name, PenaltyScaling* scaling);

struct AdmmParameters {
  // Adaptive beta of eq. (43): rebalance when theta_p > gamma theta_d or theta_d > gamma theta_p.
  bool adaptive_beta = true;
  double beta_gamma = 10;  // gamma of eq. (43), > 1
  // Iterations between checks of eq. (43) [OURS]: checked every iteration, beta chases the
  // residuals' oscillation, and sparser checks gave lower Sec. VII residuals at 100 iterations
  // (docs/benchmarks-history.md).
  int beta_update_interval = 10;
  PenaltyScaling penalty_scaling = PenaltyScaling::kDelassus;
  // Over-relaxation [OURS] (Boyd et al. 2011, Sec. 3.4.3): the constraint step reads
  // alpha J_ij v_j + (1 - alpha) z_ij instead of J_ij v_j. 1 is the paper's Algorithm 2; values in
  // (1, 2) usually converge faster. Valid range (0, 2).
  double relaxation = 1.6;
};

}  // namespace alsim
