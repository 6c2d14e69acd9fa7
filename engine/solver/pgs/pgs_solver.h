// Projected Gauss-Seidel on the Delassus operator: the baseline of the SubADMM paper's
// experiments (Sec. VII), which leaves its details open; alsim follows the digest's section 10
// ("Baseline PGS" [OURS]).
//
// Per island, with the Delassus operator W = J A^{-1} J^T = sum_j J_j A_j^{-1} J_j^T and the free
// velocity J v_free (v_free = A^{-1} b), sweep the constraints in their fixed order, without
// over-relaxation:
//   contact: lambda_i <- T(x), T the strict operator, x from the normal row first and then the
//            tangent pair (Gauss-Seidel between them, pgs_solver.cc):
//              x_n = lambda_n - (W lambda + J v_free + e)_n / W_nn, then the tangents' velocity
//              with lambda_n = max(x_n, 0), x_t = lambda_t - (W lambda + J v_free + e)_t / w_t,
//            w_t the largest eigenvalue of W_tt (one step size for both tangents keeps the fixed
//            points of the strict operator (17) equal to the Signorini-Coulomb solutions);
//   limit:   lambda_i <- max(lambda_i - (W lambda + J v_free + e)_i / W_ii, 0);
//   equality: Gauss-Seidel over its rows, lambda_r <- lambda_r - (W lambda + J v_free + e)_r / W_rr
//            with the rows before r already updated (a dependent block: solved exactly on its
//            independent rows, pgs_solver.cc);
//   soft:    the exact solve of eq. (4) in lambda_i with the other impulses fixed,
//            lambda_i (1 + b W_ii) = -k e - b (J v without lambda_i's own term), then clamped.
// W is kept as its per-subsystem terms W_j = J_j A_j^{-1} J_j^T, each dense over the rows of the
// constraints touching subsystem j and assembled from tree-LDL^T solves on the columns of J_j^T:
// a row of W is the sum of at most two of them, and a sweep costs the coupled blocks only, not
// (rows of the island)^2.
// A sweep updates each constraint with the newest impulses of those before it (Gauss-Seidel),
// so an island is sequential; islands run in parallel and are independent, so the result does
// not depend on the thread count. An island stops after options.max_iterations sweeps, once no
// constraint's impulse changed by more than options.tolerance (N s, the 2-norm of its change) in
// a sweep, or at the deadline. Finally v_hat = A^{-1} (b + J^T lambda) per subsystem.
//
// The primal and dual residuals of eq. (42) belong to the ADMM splitting and are not defined for
// PGS: SolverStatistics reports 0 for both; contact_residual (Sec. VII) is the comparable measure.
//
// Memory: everything linear in the model is reserved by the constructor; the W_j grow with the
// largest sum over subsystems of (rows touching it)^2 seen so far and are then reused.
#pragma once

#include <vector>

#include "engine/solver/constraint_ops.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/joint_space_jacobian.h"

namespace alsim {

class PgsSolver final : public IslandSolver {
 public:
  explicit PgsSolver(const Model& m);
  SolverType type() const override { return SolverType::kPgs; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  // Lists, per subsystem, the constraints touching it and their rows in W_j (sequential).
  void LinkConstraints(const Model& m, const Data& d);
  // W_j, row-major over the rows of the constraints touching subsystem j.
  void BuildDelassus(const Model& m, const Data& d, int subsystem);
  // One Gauss-Seidel sweep over the island; returns the largest impulse change.
  double Sweep(Data& d, int island);
  // v_hat = A^{-1} (b + J^T lambda) on the island's subsystems.
  void FinalVelocity(const Model& m, Data& d, int island);

  JointSpaceJacobian jacobian_;
  // Constraint i touches subsystem link_subsystem_[b + t] at rows link_row_[b + t] of its W_j,
  // for t < link_num_[i] (1 or 2; up to its block count for a tendon's rows), b its block_adr
  // (a constraint touches at most as many subsystems as it has blocks).
  std::vector<int> link_num_;
  std::vector<int> link_subsystem_;
  std::vector<int> link_row_;
  // Subsystem j's constraints are touching_[touching_adr_[j] .. touching_adr_[j + 1]), with their
  // first rows touching_row_[..] in W_j; W_j has rows_[j] rows and starts at delassus_adr_[j].
  std::vector<int> touching_adr_;
  std::vector<int> touching_;
  std::vector<int> touching_row_;
  std::vector<int> rows_;
  std::vector<size_t> delassus_adr_;
  std::vector<double> delassus_;       // the W_j
  std::vector<double> free_velocity_;  // per constraint row: J v_free
  std::vector<double> column_;         // nv: A_j^{-1} J_j^T e_r on one subsystem's dofs
  std::vector<double> force_;          // nv: J^T lambda
};

}  // namespace alsim
