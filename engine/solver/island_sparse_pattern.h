// The sparse matrix A + sum_i J_i^T J_i over the dofs of each island, for the solvers that factor
// one sparse matrix per island (No Sub's eq. 28; CANAL's Hessian eq. 24 and the Newton kit's, both
// through newton/island_hessian.h): the island's local dof numbering, the pattern of the upper
// triangle in compressed columns (rows increasing), A's values on it, and the position of any
// entry. The pattern holds A's branch-induced entries within each subsystem and every pair of dofs
// one constraint reaches, so that a penalty or D_i of zero leaves an explicit zero and the
// symbolic analysis can be kept while the pattern is unchanged.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/data/data.h"
#include "engine/data/islands.h"
#include "engine/model/model.h"
#include "engine/solver/joint_space_jacobian.h"

namespace alsim {

class IslandSparsePattern {
 public:
  // Reserves for every ordinary step of m.
  void Reserve(const Model& m);
  // Sizes the storage for the groups of `islands` (d.islands, or a solver's own grouping) whose
  // constraints `jacobian` has laid out. Sequential, before the islands.
  void LayOut(const Model& m, const Data& d, const Islands& islands,
              const JointSpaceJacobian& jacobian);
  // Numbers island k's dofs, then builds its pattern and A's values; `jacobian` must hold the
  // rows of k's constraints. Islands may run in parallel.
  void Build(const Model& m, const Data& d, const Islands& islands,
             const JointSpaceJacobian& jacobian, int k);

  int dofs(int k) const { return island_dofs_[k]; }
  // First entry of island k in per-dof arrays laid out like this one's (sum of earlier dofs).
  int dof_adr(int k) const { return island_dof_adr_[k]; }
  int total_dofs() const { return total_dofs_; }
  const int* local_dofs() const { return local_dof_.data(); }  // nv: index within its island
  const int* global_dofs(int k) const { return global_dof_.data() + island_dof_adr_[k]; }
  int nnz(int k) const { return island_nnz_[k]; }
  const int* column_start(int k) const { return column_start_.data() + island_dof_adr_[k] + k; }
  const int* row_index(int k) const { return row_index_.data() + island_nnz_adr_[k]; }
  const double* mass(int k) const { return mass_values_.data() + island_nnz_adr_[k]; }
  // First entry of island k in per-entry arrays laid out like this one's (room, not nnz).
  size_t nnz_adr(int k) const { return island_nnz_adr_[k]; }
  size_t total_entries() const { return total_entries_; }
  // Position of (row, column), row <= column, among island k's stored entries.
  int Position(int k, int column, int row) const;

 private:
  std::vector<int> local_dof_;            // nv
  std::vector<int> global_dof_;           // per island dof: its dof
  std::vector<int> island_dofs_;          // per island: n
  std::vector<int> island_dof_adr_;       // per island
  std::vector<size_t> island_nnz_adr_;    // per island
  std::vector<int> island_nnz_;           // per island: stored entries
  std::vector<int> column_start_;         // per island: n + 1 (offset island_dof_adr_ + island)
  std::vector<unsigned long long> keys_;  // per island entry: (column << 32) | row, scratch
  std::vector<int> row_index_;            // per island entry
  std::vector<double> mass_values_;       // per island entry: A
  int total_dofs_ = 0;
  size_t total_entries_ = 0;
};

}  // namespace alsim
