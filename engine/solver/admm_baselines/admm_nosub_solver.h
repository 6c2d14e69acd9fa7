// "No Sub": vanilla ADMM on one global system, eq. (28) of the SubADMM paper, the first ablation
// of Table III. The system spans the whole scene: every island's subsystems and constraints are
// solved together, with one beta, one stopping test and one factorization, as the paper's
// baseline (splitting by islands is itself a decomposition, the first step towards SubADMM).
// Every constraint has a single slack z_i (|Z_i| = 1) for its whole Jacobian J_i, whatever
// subsystems and bodies it touches; with u = -lambda (eq. 39):
//   v-step (28):   (A + beta J^T S J) v = b + J^T (beta S z + lambda)   over all constrained dofs
//   lambda-step:   lambda_i' = T_i(lambda_i - beta_i (J_i v + e_i))     (UpdateImpulse, |Z_i| = 1)
//   z-step:        z_i' = J_i v + (lambda_i' - lambda_i) / beta_i
// with S = diag(s_i) and beta_i = s_i beta the per-constraint penalties of AdmmPenalty (SubADMM's
// rule). The matrix couples every pair of dofs that one constraint reaches, across subsystems,
// so it is assembled as a sparse matrix (A's tree-sparse entries plus J^T S J) and factored by
// CHOLMOD (CholmodLlt): the symbolic analysis when the pattern changes, the numeric
// factorization every step and whenever beta changes.
//
// Residuals (eq. 42), through the identities of the digest (6.6): theta_p = max_i ||lambda_i' -
// lambda_i|| / beta_i; theta_d = max over subsystems j of ||sum_i J_ij^T beta_i (z_i - z_i')||,
// which equals ||A_j v_j - b_j - sum_i J_ij^T lambda_i'|| after this v-step. Stopping, adaptive
// beta (eq. 43, every options.admm.beta_update_interval iterations) and beta0 as SubADMM; z^0 = J
// v_k. Every island reports the system's iterations and residuals.
//
// The lambda-step runs in parallel over constraints for large systems (Jacobi-like), so results
// do not depend on the thread count; the factorization and the solves are sequential. Memory:
// linear storage is reserved by the constructor; the pattern storage grows with the largest
// step seen. CHOLMOD itself allocates (see cholmod_llt.h).
#pragma once

#include <memory>
#include <vector>

#include "engine/linalg/cholmod_llt.h"
#include "engine/solver/admm/admm_iteration.h"
#include "engine/solver/admm/admm_penalty.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/island_sparse_pattern.h"
#include "engine/solver/joint_space_jacobian.h"

namespace alsim {

class AdmmNoSubSolver final : public IslandSolver {
 public:
  explicit AdmmNoSubSolver(const Model& m);
  SolverType type() const override { return SolverType::kAdmmNoSub; }

  // Symbolic analyses of the factorization so far (pattern changes), for tests.
  long analyses() const;

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void AddFigures(SolverStatistics* stats) const override {
    AddAdmmFigures(island_results_, stats);
  }
  void SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                    double deadline_us) override;
  // Solves group `island` of system_ (the one system) into system_results_[island].
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  // Pattern of A + J^T J over the system's dofs (upper triangle) and the values of A and J^T S J.
  void Assemble(const Model& m, const Data& d, int island);
  // Values A + beta J^T S J into the island's factorization, then factors.
  bool Refactor(int island, double beta);

  // The storage below is laid out per group of system_ (its "islands"), which holds one group.
  AdmmPenalty penalty_;
  JointSpaceJacobian jacobian_;
  IslandSparsePattern pattern_;        // A + J^T J over the system's dofs
  std::vector<double> gram_values_;    // per pattern entry: J^T S J
  std::vector<double> velocity_;       // per island dof: v during the iterations
  std::vector<double> force_;          // per island dof: right-hand side, then J^T (dual terms)
  std::vector<double> penalty_scale_;  // per constraint: s_i
  std::vector<PenaltyTerms> penalty_terms_;           // per constraint, at the current beta
  std::vector<double> slack_;                         // per constraint row: z_i
  std::vector<double> slack_change_;                  // per constraint row: beta_i (z_i - z_i')
  std::vector<double> primal_;                        // per constraint: ||J_i v - z_i'||^2
  std::vector<std::unique_ptr<CholmodLlt>> factors_;  // per system (one)
  Islands system_;                                    // the one system, as a single island
  std::vector<IslandSolveResult> system_results_;     // its result
};

}  // namespace alsim
