#include "engine/solver/joint_space_jacobian.h"

#include <algorithm>
#include <utility>

namespace alsim {
namespace {

// Most entries block k can write: the dofs on its body's path to the root, or its one dof.
int BlockCapacity(const Model& m, const Data& d, const ConstraintBlock& block) {
  if (block.body < 0) return 1;
  int count = 0;
  for (int dof = d.body_last_dof[block.body]; dof >= 0; dof = m.dof_parent[dof]) ++count;
  return count;
}

}  // namespace

void JointSpaceJacobian::Reserve(const Model& m, size_t max_constraints) {
  entry_adr.reserve(max_constraints);
  entry_num.reserve(max_constraints);
  capacity.reserve(max_constraints);
  // Two blocks per constraint, each a path no longer than its tree (16 entries covers the usual
  // floating bodies and legs; deeper chains grow the storage once).
  int deepest = 0;
  for (int j = 0; j < m.nsubsystem; ++j) deepest = std::max(deepest, m.subsystem_dof_num[j]);
  const size_t per_constraint = std::min<size_t>(2 * static_cast<size_t>(deepest), 16);
  dof.reserve(per_constraint * max_constraints);
  value.reserve(per_constraint * max_constraints);
  if (m.high_condim_geom >= 0) angular_value.reserve(per_constraint * max_constraints);
}

void JointSpaceJacobian::Layout(const Model& m, const Data& d) {
  const ConstraintSet& set = d.constraints;
  const size_t n = set.constraints.size();
  if (entry_adr.size() < n) {
    entry_adr.resize(n);
    entry_num.resize(n);
    capacity.resize(n);
  }
  int total = 0;
  for (size_t i = 0; i < n; ++i) {
    const Constraint& c = set.constraints[i];
    entry_adr[i] = total;
    entry_num[i] = 0;
    capacity[i] = 0;
    for (int k = 0; k < c.block_num; ++k) {
      capacity[i] += BlockCapacity(m, d, set.blocks[c.block_adr + k]);
    }
    total += capacity[i];
  }
  if (dof.size() < static_cast<size_t>(total)) {
    dof.resize(total);
    value.resize(total, Vec3::Zero());
    if (m.high_condim_geom >= 0) angular_value.resize(total, Vec3::Zero());  // condim 4/6 only
  }
}

void JointSpaceJacobian::Fill(const Model& m, const Data& d, int constraint) {
  const ConstraintSet& set = d.constraints;
  const Constraint& c = set.constraints[constraint];
  int* dofs = dof.data() + entry_adr[constraint];
  Vec3* values = value.data() + entry_adr[constraint];
  // Empty (null data) unless the model has condim 4/6 contacts: no offset on a null pointer.
  Vec3* angular_values =
      angular_value.empty() ? nullptr : angular_value.data() + entry_adr[constraint];
  int count = 0;
  for (int k = 0; k < c.block_num; ++k) {
    const ConstraintBlock& block = set.blocks[c.block_adr + k];
    if (block.body < 0) {
      dofs[count] = block.dof;
      values[count] = Vec3(block.dof_coefficient, 0, 0);
      ++count;
      continue;
    }
    const int run = count;  // this block's entries, from the body towards the root
    for (int i = d.body_last_dof[block.body]; i >= 0; i = m.dof_parent[i]) {
      Vec3 row = Vec3::Zero();
      for (int r = 0; r < std::min(c.dim, 3); ++r) row[r] = block.map.row(r).dot(d.cdof[i]);
      if (c.dim > 3) {  // a condim 4/6 contact's derived angular rows (constraint_set.h)
        Vec3 angular = Vec3::Zero();
        for (int r = 3; r < c.dim; ++r) angular[r - 3] = BlockRowDot(block, r, d.cdof[i]);
        angular_values[count] = angular;
      }
      dofs[count] = i;
      values[count] = row;
      ++count;
    }
    // Parents precede children, so the run is in decreasing dof order: reversed, it is sorted
    // and the sort below has only the runs of several blocks to interleave.
    std::reverse(dofs + run, dofs + count);
    std::reverse(values + run, values + count);
    if (c.dim > 3) std::reverse(angular_values + run, angular_values + count);
  }
  // Insertion sort by dof (a few short sorted runs), then merge the entries of a shared dof.
  for (int a = 1; a < count; ++a) {
    for (int b = a; b > 0 && dofs[b - 1] > dofs[b]; --b) {
      std::swap(dofs[b - 1], dofs[b]);
      std::swap(values[b - 1], values[b]);
      if (c.dim > 3) std::swap(angular_values[b - 1], angular_values[b]);
    }
  }
  int merged = 0;
  for (int a = 0; a < count; ++a) {
    if (merged > 0 && dofs[merged - 1] == dofs[a]) {
      values[merged - 1] += values[a];
      if (c.dim > 3) angular_values[merged - 1] += angular_values[a];
    } else {
      dofs[merged] = dofs[a];
      values[merged] = values[a];
      if (c.dim > 3) angular_values[merged] = angular_values[a];
      ++merged;
    }
  }
  entry_num[constraint] = merged;
}

void JointSpaceJacobian::EntriesInDofs(int constraint, int dof_begin, int dof_end, int* begin,
                                       int* end) const {
  const int first = entry_adr[constraint], last = first + entry_num[constraint];
  int b = first;
  while (b < last && dof[b] < dof_begin) ++b;
  int e = b;
  while (e < last && dof[e] < dof_end) ++e;
  *begin = b;
  *end = e;
}

}  // namespace alsim
