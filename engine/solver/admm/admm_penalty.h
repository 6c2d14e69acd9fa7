// The penalty beta of the ADMM solvers (SubADMM and the baselines "No Sub", "No Body"): one rule
// for all three, so that the ablations of Table III differ from SubADMM only in their
// splitting:
// - beta0 (Algorithm 2, line 3; Sec. VI-D): the geometric mean over the island's bodies that
//   carry constraint blocks of m_k / n_k, n_k the number of blocks on body k (beta as a
//   "pseudo-density" of mass per contact point); an island with joint-space rows only uses the
//   dofs' A_mm / n_m instead;
// - per-constraint penalties beta_i = s_i beta [OURS], by SolverOptions::penalty_scaling:
//   kPseudoDensity: s_i = 1 for body-space rows (the paper's single beta), and for a joint-space
//     row on dof m with coefficient c its own pseudo-density, s_i = A_mm / (c^2 n_m) / beta0, so
//     that rows in N m s on rad/s get a penalty in kg m^2;
//   kDelassus: s_i = 1 / (w_i beta0), w_i = trace(J_i A^{-1} J_i^T) / dim_i summed over the
//     constraint's blocks (cross terms between two blocks left out), so every constraint starts
//     at its own effective mass whatever its units; one sparse L^T solve per row along the
//     body's dof chain with A's tree factor (cost depth^2), or for a body with several blocks
//     one 6-column solve per chain whose 6 x 6 inverse inertia its blocks share;
// - adaptation, eq. (43): beta <- beta sqrt(theta_p / theta_d) when one residual exceeds gamma
//   times the other, kept within [beta0 / 1e3, beta0 1e3] (a safety net, not in the paper).
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/solver/solver_options.h"

namespace alsim {

class AdmmPenalty {
 public:
  explicit AdmmPenalty(const Model& m);

  // Counts the blocks of d.constraints on every body and the joint-space blocks on every dof
  // (sequential; once per Solve, before the islands run).
  void CountBlocks(const Model& m, const Data& d);

  // beta0 of island `island` of `islands` (d.islands, or a solver's own grouping; see the file
  // comment). Needs CountBlocks.
  double InitialBeta(const Model& m, const Data& d, const Islands& islands, int island) const;

  // s_i of every constraint i of island `island` of `islands`, written to scale[i]. Needs
  // CountBlocks and, for kDelassus, d.qA_factor. kDelassus reuses a constraint's inherited
  // Constraint::delassus_trace while its age is below `refresh_steps` and otherwise computes it
  // and stores it there (age 0). Islands may call this in parallel (they own disjoint dofs and
  // constraints).
  void Scales(const Model& m, Data& d, const Islands& islands, int island, double beta0,
              PenaltyScaling scaling, int refresh_steps, double* scale);

 private:
  std::vector<int> body_block_count_;  // nbody
  std::vector<int> dof_block_count_;   // nv
  std::vector<double> chain_scratch_;  // 3 nv: L^{-T} J_r^T of up to 3 rows along one dof chain
  std::vector<Vec6> chain_w_;          // nv: L^{-T} S^T along one dof chain (ChainResponse)
  // ChainResponse of the chain ending at each dof, valid while its generation is generation_
  // (CountBlocks starts a new one for each solve).
  std::vector<Mat6> chain_response_;                      // nv
  std::vector<std::uint64_t> chain_response_generation_;  // nv
  std::uint64_t generation_ = 0;

  // Sum over the block's rows r of J_r A^{-1} J_r^T (kDelassus).
  double BlockDelassusTrace(const Model& m, const Data& d, const ConstraintBlock& block, int dim);
  template <int kRows>
  double ChainDelassusTrace(const Data& d, const ConstraintBlock& block, int last, int dim);
  const Mat6& ChainResponse(const Data& d, int last);
};

// Whether eq. (43) (and the stall test below) looks at the residuals after `iteration`
// iterations: every options.admm.beta_update_interval iterations.
inline bool IsBetaCheckIteration(int iteration, const SolverOptions& options) {
  return options.admm.beta_update_interval <= 1 ||
         iteration % options.admm.beta_update_interval == 0;
}

// Eq. (43) after `iteration` iterations: the rebalanced beta, or `beta` itself when the residuals
// are within options.admm.beta_gamma of each other, adaptation is off, or it is not a check
// iteration (every options.admm.beta_update_interval iterations).
double AdaptedBeta(double beta, double beta0, double primal, double dual, int iteration,
                   const SolverOptions& options);

}  // namespace alsim
