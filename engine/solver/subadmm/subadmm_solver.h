// SubADMM: the subsystem-based ADMM of Sec. VI of the SubADMM paper (Algorithm 2).
//
// Per island, with slack blocks z_ij split by body (eqs. 30-31) and u_ij = -lambda_i (eq. 39):
//   v-step (34), per subsystem:  (A_j + beta sum_i J_ij^T J_ij) v_j = b_j + sum_i J_ij^T (beta z_ij
//                                + lambda_i), the matrix built by a CRBA over the per-body
//                                "virtual inertias" sum_i J_i,b^T J_i,b (eqs. 40-41) and factored
//                                by the tree LDL^T with the mass matrix's sparsity;
//   lambda/z-step (35-38), per constraint: closed forms, the strict operator for contacts;
//   residuals (42) and adaptive beta (43), refactoring every subsystem when beta changes.
// Three options go beyond the paper (SolverOptions, each switchable back): per-constraint
// penalties from the Delassus diagonal (admm_penalty.h), over-relaxation of the constraint step
// (RelaxedConstraintUpdate in impulse_update.h) and Anderson acceleration of pairs of iterations
// (anderson.h). Three shortcuts keep the arithmetic of an iteration small: the J^T gather is
// fused with the tree solve (VelocityStep), single-body subsystems use a 6 x 6 response matrix
// (PrepareSingleBody), and in long solves trees switch to their constraint-space response
// (BuildResponse, SolverOptions::response_after_iterations).
// The per-subsystem and per-constraint steps are Jacobi-like, so they run in parallel and the
// result does not depend on the thread count. What an iteration writes (z, lambda, residuals) is
// kept island by island, each island on cache lines of its own (LayOutIterates), so that islands
// solved at the same time on two threads do not pass lines back and forth.
#pragma once

#include <vector>

#include "engine/core/cache_line.h"
#include "engine/solver/admm/admm_iteration.h"
#include "engine/solver/admm/admm_penalty.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/island_solver.h"

namespace alsim {

class SubAdmmSolver final : public IslandSolver {
 public:
  explicit SubAdmmSolver(const Model& m);
  SolverType type() const override { return SolverType::kSubAdmm; }

  using IslandResult = IslandSolveResult;
  // theta_p + theta_d after each iteration of island 0 in the last Solve, when recording is on.
  void set_record_history(bool on) { record_history_ = on; }
  const std::vector<double>& history() const { return history_; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  void AddFigures(SolverStatistics* stats) const override {
    AddAdmmFigures(island_results_, stats);
  }
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  void BuildGramMatrix(const Model& m, const Data& d, int subsystem);
  void MarkBodiesWithBlocks(const Model& m, const Data& d, int subsystem);
  void Refactor(const Model& m, const Data& d, int subsystem, double beta);
  void AddJointGram(const Model& m, const Data& d, int subsystem);
  void VelocityStep(const Model& m, Data& d, int subsystem, double beta);
  template <class BlockValue>
  void TreeVelocityStep(const Model& m, Data& d, int subsystem, const BlockValue& block_value);
  bool LayOutResponse(const Data& d, int subsystem);
  void BuildResponse(const Model& m, Data& d, int subsystem);
  void ResponseVelocityStep(int subsystem, double beta);
  double* ResponseMatrix(int subsystem);        // P, rows x rows by columns
  double* ResponseFreeVelocity(int subsystem);  // J v_free (rows)
  double* ResponseForces(int subsystem);        // the rows' y of the last velocity step (rows)
  template <int kBlocks, int kDim>
  void UpdateConstraint(const Data& d, int constraint, double alpha, double* gather,
                        double* primal_residual);
  void LayOutIterates(const Data& d);
  template <class Visit>
  void ForEachIterateValue(const Data& d, int island, const Visit& visit);
  void GatherState(const Data& d, int island, double* state);
  void ScatterState(const Data& d, int island, const double* state);
  bool IsSingleBody(const Model& m, const Data& d, int subsystem) const;
  void PrepareSingleBody(const Model& m, const Data& d, int subsystem);
  void SolveSingleBody(const Model& m, const Data& d, int subsystem, const Vec6& force,
                       double* v) const;

  std::vector<Mat6> body_gram_;           // sum of map^T map over the body's blocks, then composite
  std::vector<char> body_has_gram_;       // the body's subtree has a body-space block
  std::vector<char> body_marks_;          // per body: BodyMarks' scratch for trees over 64 bodies
  AdmmPenalty penalty_;                   // beta0, per-row penalty scales and eq. (43), shared
  std::vector<double> gram_matrix_;       // sum_i J_ij^T J_ij, mass_layout (nnz)
  std::vector<double> system_factor_;     // A + beta sum_i J_ij^T J_ij, factored (nnz)
  std::vector<Vec6> body_velocity_;       // nbody
  std::vector<Vec6> body_force_;          // nbody: scratch of the J^T gathers
  std::vector<double> inverse_diagonal_;  // 1 / D of system_factor_ (nv)
  // The constraint-space response of a tree in a long solve (BuildResponse). Each tree has a
  // fixed slot, allocated with the solver: P (rows x rows, by columns), J v_free and the rows' y
  // of the last velocity step in response_storage_ (ResponseMatrix, ResponseFreeVelocity,
  // ResponseForces), and where each row's values live in response_row_ (LayOutResponse).
  struct ResponseRow {
    int slack;       // index of its z in iterate_ (and response_velocity_)
    int impulse;     // index of its lambda in iterate_
    int constraint;  // its constraint
  };
  std::vector<int> response_slot_;  // per subsystem: its slot, -1 for a single body
  std::vector<int> response_rows_;  // per subsystem: rows of its response, when laid out
  std::vector<int> block_row_;      // per block: its first row in its tree's response
  std::vector<double> response_storage_;
  std::vector<ResponseRow> response_row_;
  std::vector<char> response_mode_;       // per subsystem: its velocity steps use the response
  std::vector<double> response_scratch_;  // nv
  std::vector<double> response_w_;        // kResponseMaxRows x nv: L^{-T} J_r^T per row
  CacheLineDoubles response_velocity_;    // J_ij v_j of responding blocks, at their z's index
  // Per subsystem, this step: one body with body-space blocks only (see PrepareSingleBody), its
  // P = S K^{-1} S^T and V_free = S K^{-1} b_j (its F: subsystem_values_).
  std::vector<char> single_body_;
  std::vector<Mat6> single_body_response_;
  std::vector<Vec6> single_body_free_velocity_;
  std::vector<double> single_body_scratch_;  // nv
  std::vector<Vec6> single_body_w_;          // nv: W = S L^{-1} (PrepareSingleBody)
  std::vector<double> velocity_scratch_;     // nv: L^{-T} of a tree velocity step, undivided
  // The iterates z_ij and lambda_i during the solve, island by island (LayOutIterates): per
  // constraint its blocks' z then its lambda, the layout of the Anderson iterate, and each island
  // from a cache line of its own, so that islands solved at the same time on two threads never
  // write to one line. lambda is copied in from ConstraintSet::lambda (the warm start) and back
  // once the island is solved.
  CacheLineDoubles iterate_;
  CacheLineDoubles slack_change_;        // z^{l+1} - z^l, at z's index in iterate_
  std::vector<int> slack_adr_;           // per block: its z in iterate_
  std::vector<int> impulse_adr_;         // per constraint: its lambda in iterate_
  std::vector<int> island_iterate_adr_;  // per island: its first value in iterate_
  std::vector<int> island_state_size_;   // per island: its values in iterate_ (Anderson's iterate)
  std::vector<double> dual_force_;       // sum_i s_i J_ij^T (z^{l+1} - z^l) (nv)
  // max_j ||J_ij v_j - z_ij||^2, by the constraint's place in Islands::constraints (each island's
  // own range).
  std::vector<double> primal_residual_;
  std::vector<double> penalty_scale_;        // s_i: constraint i has the penalty s_i beta
  std::vector<PenaltyTerms> penalty_terms_;  // per constraint, at the current beta
  // What a subsystem writes in every iteration, a cache line per subsystem (as iterate_).
  struct alignas(kCacheLineBytes) SubsystemIterationValues {
    Vec6 single_body_force = Vec6::Zero();  // a single body's F of its last velocity step
    double dual = 0;                        // its theta_d term
  };
  std::vector<SubsystemIterationValues> subsystem_values_;
  std::vector<long> island_storage_offset_;  // its w, g and history in anderson_storage_
  std::vector<double> anderson_storage_;
  bool record_history_ = false;
  std::vector<double> history_;
};

}  // namespace alsim
