#include "engine/solver/island_sparse_pattern.h"

#include <algorithm>

namespace alsim {
namespace {

unsigned long long EntryKey(int column, int row) {
  return (static_cast<unsigned long long>(column) << 32) | static_cast<unsigned>(row);
}

}  // namespace

void IslandSparsePattern::Reserve(const Model& m) {
  local_dof_.assign(m.nv, 0);
  global_dof_.reserve(m.nv);
  island_dofs_.reserve(m.nsubsystem);
  island_dof_adr_.reserve(m.nsubsystem);
  island_nnz_adr_.reserve(m.nsubsystem);
  island_nnz_.reserve(m.nsubsystem);
  column_start_.reserve(m.nv + m.nsubsystem);
}

void IslandSparsePattern::LayOut(const Model& m, const Data& d, const Islands& islands,
                                 const JointSpaceJacobian& jacobian) {
  if (island_dofs_.size() < static_cast<size_t>(islands.num)) {
    island_dofs_.resize(islands.num);
    island_dof_adr_.resize(islands.num);
    island_nnz_adr_.resize(islands.num);
    island_nnz_.resize(islands.num);
  }
  int total_dofs = 0;
  size_t total_keys = 0;
  for (int k = 0; k < islands.num; ++k) {
    int dofs = 0;
    size_t keys = 0;
    for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
      const int j = islands.subsystems[s];
      dofs += m.subsystem_dof_num[j];
      for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j];
           ++i) {
        keys += d.mass_layout.row_nnz[i];
      }
    }
    for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
      const size_t capacity = jacobian.capacity[islands.constraints[s]];
      keys += capacity * (capacity + 1) / 2;
    }
    island_dofs_[k] = dofs;
    island_dof_adr_[k] = total_dofs;
    island_nnz_adr_[k] = total_keys;
    total_dofs += dofs;
    total_keys += keys;
  }
  total_dofs_ = total_dofs;
  total_entries_ = total_keys;
  if (global_dof_.size() < static_cast<size_t>(total_dofs)) global_dof_.resize(total_dofs);
  const size_t column_starts = static_cast<size_t>(total_dofs) + islands.num;
  if (column_start_.size() < column_starts) column_start_.resize(column_starts);
  if (keys_.size() < total_keys) {
    keys_.resize(total_keys);
    row_index_.resize(total_keys);
    mass_values_.resize(total_keys);
  }
}

int IslandSparsePattern::Position(int k, int column, int row) const {
  const int* columns = column_start(k);
  const int* rows = row_index(k);
  const int* begin = rows + columns[column];
  const int* end = rows + columns[column + 1];
  return static_cast<int>(std::lower_bound(begin, end, row) - rows);
}

// The pattern as sorted unique (column, row) keys with row <= column, then A's values on it.
void IslandSparsePattern::Build(const Model& m, const Data& d, const Islands& islands,
                                const JointSpaceJacobian& jacobian, int k) {
  const TreeSparseLayout& layout = d.mass_layout;
  int local = 0;
  int* global = global_dof_.data() + island_dof_adr_[k];
  for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
    const int j = islands.subsystems[s];
    for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j]; ++i) {
      global[local] = i;
      local_dof_[i] = local++;
    }
  }
  const int n = island_dofs_[k];
  const size_t nnz_adr = island_nnz_adr_[k];
  unsigned long long* keys = keys_.data() + nnz_adr;
  int count = 0;
  for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
    const int j = islands.subsystems[s];
    for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j]; ++i) {
      for (int p = i; p >= 0; p = layout.parent[p]) {
        keys[count++] = EntryKey(local_dof_[i], local_dof_[p]);
      }
    }
  }
  for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
    const int c = islands.constraints[s];
    const int first = jacobian.entry_adr[c], last = first + jacobian.entry_num[c];
    for (int b = first; b < last; ++b) {
      for (int a = first; a <= b; ++a) {
        keys[count++] = EntryKey(local_dof_[jacobian.dof[b]], local_dof_[jacobian.dof[a]]);
      }
    }
  }
  std::sort(keys, keys + count);
  const int nnz = static_cast<int>(std::unique(keys, keys + count) - keys);
  island_nnz_[k] = nnz;

  int* columns = column_start_.data() + island_dof_adr_[k] + k;
  int* rows = row_index_.data() + nnz_adr;
  std::fill(columns, columns + n + 1, 0);
  for (int e = 0; e < nnz; ++e) {
    ++columns[(keys[e] >> 32) + 1];
    rows[e] = static_cast<int>(keys[e] & 0xffffffffULL);
  }
  for (int c = 0; c < n; ++c) columns[c + 1] += columns[c];

  double* mass = mass_values_.data() + nnz_adr;
  std::fill(mass, mass + nnz, 0.0);
  for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
    const int j = islands.subsystems[s];
    for (int i = m.subsystem_dof_adr[j]; i < m.subsystem_dof_adr[j] + m.subsystem_dof_num[j]; ++i) {
      const double* row = d.qA.data() + layout.row_adr[i];
      int e = 0;
      for (int p = i; p >= 0; p = layout.parent[p], ++e) {
        mass[Position(k, local_dof_[i], local_dof_[p])] += row[e];
      }
    }
  }
}

}  // namespace alsim
