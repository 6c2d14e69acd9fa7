// "No Body": the subsystem split of the SubADMM paper without its body-level split (eqs. 30-31),
// i.e. the authors' earlier SubADMM (ICRA 2023, ref. [34]), the second ablation of Table III.
// Each constraint has one slack z_ij per subsystem j it touches, whose Jacobian J_ij is the SUM of
// the constraint's blocks in j: a contact between two bodies of one subsystem has a single slack,
// so |Z_i| is the number of distinct subsystems (1 or 2; a fixed tendon's rows may touch more).
// With u = -lambda (eq. 39):
//   v-step (34), per subsystem:  (A_j + beta sum_i s_i J_ij^T J_ij) v_j
//                                   = b_j + sum_i J_ij^T (beta s_i z_ij + lambda_i)
//   lambda-step (36)-(38):       UpdateImpulse with sum_j J_ij v_j and |Z_i| as above
//   z-step (35):                 z_ij' = J_ij v_j + (lambda_i' - lambda_i) / beta_i
// The cross terms of two bodies' rows in one subsystem fill the matrix outside the mass matrix's
// branch-induced pattern, so it cannot be built by the CRBA of eq. (40): it is assembled densely
// in joint space (n_j x n_j) from the joint-space Jacobian rows and factored by a dense LLT per
// subsystem. That cost is the point of the ablation.
//
// Penalties, beta0, residuals (eq. 42 through the identities of the digest's 6.6), stopping and
// adaptive beta (43) exactly as SubADMM (AdmmPenalty); z^0_ij = J_ij v_k. Islands run in
// parallel; inside an island the subsystem and constraint steps are Jacobi-like and run in
// parallel for large islands, so results do not depend on the thread count. The dense matrices
// are sized per subsystem by the constructor; a step allocates nothing once its constraint
// storage has seen the largest step.
#pragma once

#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "engine/solver/admm/admm_iteration.h"
#include "engine/solver/admm/admm_penalty.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/joint_space_jacobian.h"

namespace alsim {

class AdmmNoBodySolver final : public IslandSolver {
 public:
  explicit AdmmNoBodySolver(const Model& m);
  SolverType type() const override { return SolverType::kAdmmNoBody; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void AddFigures(SolverStatistics* stats) const override {
    AddAdmmFigures(island_results_, stats);
  }
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  // Dense A_j and sum_i s_i J_ij^T J_ij of subsystem j.
  void Assemble(const Model& m, const Data& d, int subsystem);
  // Factors A_j + beta sum_i s_i J_ij^T J_ij; false if it is not positive definite.
  bool Refactor(int subsystem, double beta);
  // Calls visit(constraint, slack, entry_begin, entry_end) for each slack of subsystem j.
  template <class Visit>
  void ForEachSlack(const Model& m, const Data& d, int subsystem, const Visit& visit) const;

  AdmmPenalty penalty_;
  JointSpaceJacobian jacobian_;
  std::vector<Eigen::MatrixXd> mass_;             // per subsystem: A_j, dense
  std::vector<Eigen::MatrixXd> gram_;             // per subsystem: sum_i s_i J_ij^T J_ij
  std::vector<Eigen::LLT<Eigen::MatrixXd>> llt_;  // per subsystem
  std::vector<double> force_;                     // nv: sum_i J_ij^T (dual terms)
  std::vector<double> subsystem_dual_;            // per subsystem: its theta_d term
  std::vector<char> factored_;                    // per subsystem: the last Refactor succeeded
  // Constraint i's slacks: slack_num_[i] of them (its distinct subsystems, in dof order), slack s
  // over its Jacobian entries up to slack_end_[block_adr + s] (a constraint has at most as many
  // subsystems as blocks), its z_ij at slack_adr_[i] + s dim.
  std::vector<int> slack_num_;
  std::vector<int> slack_end_;
  std::vector<int> slack_adr_;
  std::vector<double> penalty_scale_;        // per constraint: s_i
  std::vector<PenaltyTerms> penalty_terms_;  // per constraint, at the current beta
  std::vector<double> slack_;                // z_ij, by slack_adr_
  std::vector<double> slack_change_;         // same layout: beta_i (z_ij - z_ij')
  std::vector<double> primal_;               // per constraint: max_j ||J_ij v_j - z_ij'||^2
};

}  // namespace alsim
