// The Hessian H = A + sum_i J_i^T W_i J_i of a Newton solver over one island's dofs, kept sparse
// and factored by CHOLMOD: CANAL's eq. (24) (W_i = beta D_i, canal_solver.h) and the Newton kit's
// large islands (W_i its rows' D_r and cone Hessians, newton_solver.h). W_i is the constraint's
// own dim x dim weight, so J_i^T W_i J_i touches only the pairs of dofs that constraint reaches.
//
// The pattern is IslandSparsePattern's (island_sparse_pattern.h): A's entries and every pair of
// dofs one constraint reaches, whatever its W_i (a W_i of zero leaves explicit zeros). It changes
// only with the island's constraints and their dofs, so CHOLMOD's symbolic analysis runs once per
// new pattern (cholmod_llt.h) and every Newton iteration runs the numeric factorization alone.
// Build also records, per constraint, the position in H of each pair (a, b), a <= b, of its
// Jacobian entries (JointSpaceJacobian order, b-major: pair b (b + 1) / 2 + a), so that assembly
// scatters without a search. Two ways to assemble, both in a fixed order:
//   - by blocks: each constraint writes the upper triangle of its J_i^T W_i J_i into its own
//     slots (pair_values, constraints in parallel), then AssembleBlocks sums A and the blocks in
//     the island's constraint order (CANAL);
//   - directly: SetToMass writes A, and the solver adds its terms at pair_positions into values
//     itself, in its own fixed order (the kit, row by row).
// Islands run in parallel: Build, the assembly, Factor and Solve of island k touch only k's
// storage and its constraints' slots. Storage only grows; CHOLMOD allocates (cholmod_llt.h).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/data/data.h"
#include "engine/data/islands.h"
#include "engine/linalg/cholmod_llt.h"
#include "engine/model/model.h"
#include "engine/solver/island_sparse_pattern.h"
#include "engine/solver/joint_space_jacobian.h"

namespace alsim {

class IslandHessian {
 public:
  // `factored`: whether H is factored (one CHOLMOD factor per island); without, only the pattern,
  // A's values and the pair positions are kept (CANAL's Table II baselines, which factor dr/dv
  // dense).
  explicit IslandHessian(bool factored = true) : factored_(factored) {}

  // Reserves for every ordinary step of m, with at most max_constraints constraints.
  void Reserve(const Model& m, size_t max_constraints);
  // Sizes the storage for `islands`, whose constraints `jacobian` has laid out. Sequential,
  // before the islands.
  void LayOut(const Model& m, const Data& d, const Islands& islands,
              const JointSpaceJacobian& jacobian);
  // Island k's pattern, local dofs and A's values (IslandSparsePattern::Build), its constraints'
  // pair positions and the factor's pattern (the symbolic analysis is redone only if the pattern
  // changed); `jacobian` must hold k's constraints' rows.
  void Build(const Model& m, const Data& d, const Islands& islands,
             const JointSpaceJacobian& jacobian, int k);

  // The pattern, local dof numbering and A of the last Build of each island.
  const IslandSparsePattern& pattern() const { return pattern_; }
  // Constraint c's pairs: PairCount(entries) of them, pair b (b + 1) / 2 + a for entries a <= b.
  static size_t PairCount(size_t entries) { return entries * (entries + 1) / 2; }
  const int* pair_positions(int c) const { return pair_position_.data() + pair_adr_[c]; }
  double* pair_values(int c) { return pair_value_.data() + pair_adr_[c]; }

  // H's stored entries in the pattern's order (factored only).
  double* values(int k) { return factors_[k]->values(); }
  // H = A.
  void SetToMass(int k);
  // H = A + the blocks in pair_values of island k's constraints (`constraints`, in the island's
  // order), summed in that order.
  void AssembleBlocks(int k, const int* constraints, int num_constraints);
  // The numeric factorization of H; false if it is not positive definite.
  bool Factor(int k) { return factors_[k]->Factor(); }
  // x <- H^{-1} x, x over island k's dofs in the pattern's local numbering.
  void Solve(int k, double* x) { factors_[k]->Solve(x); }
  // CHOLMOD's symbolic analyses of island k's factor so far (one per new pattern).
  long analyses(int k) const { return factors_[k]->analyses(); }

 private:
  bool factored_;
  IslandSparsePattern pattern_;
  std::vector<size_t> pair_adr_;    // per constraint: first of its entry pairs
  std::vector<size_t> pair_num_;    // per constraint: its entry pairs at the last Build
  std::vector<int> pair_position_;  // per entry pair: its entry in H
  std::vector<double> pair_value_;  // per entry pair: (J^T W J)(a, b)
  std::vector<std::unique_ptr<CholmodLlt>> factors_;  // per island
};

}  // namespace alsim
