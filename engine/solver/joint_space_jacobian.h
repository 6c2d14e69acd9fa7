// The constraint Jacobian in joint space, J_i = sum_j J_ij (the blocks of eqs. 30-31 summed back
// into one row per constraint row), as sparse rows over the dofs each constraint reaches. The
// baseline solvers need it explicitly: PGS to assemble the Delassus operator, "No Sub" (eq. 28)
// for A + beta J^T J, "No Body" for the dense subsystem matrices A_j + beta sum_i J_ij^T J_ij.
//
// A body-space block on body b contributes, for row r, map.row(r) . cdof[k] on every dof k of the
// path from b to the root (a unit velocity of dof k moves b with the spatial velocity cdof[k]);
// a joint-space block contributes its coefficient c on its dof. Entries of two blocks on one dof
// (a contact between two bodies of one subsystem meets their common ancestors) are summed.
#pragma once

#include <vector>

#include "engine/data/data.h"
#include "engine/math/types.h"
#include "engine/model/model.h"

namespace alsim {

struct JointSpaceJacobian {
  // Constraint i's entries are [entry_adr[i], entry_adr[i] + entry_num[i]), in increasing dof
  // order, each dof at most once. Subsystems own contiguous dof ranges, so the entries of one
  // subsystem (J_ij) are a contiguous run too.
  std::vector<int> entry_adr;  // per constraint
  std::vector<int> entry_num;  // per constraint
  std::vector<int> dof;        // per entry: the global dof
  std::vector<Vec3> value;     // per entry: J_i(r, dof) for the rows r < min(dim, 3); unused 0
  // per entry: J_i(3 + r, dof), the torsional and rolling rows of a condim 4/6 contact (their
  // second storage, so that the 3-row entries keep their layout; sized only for a model with
  // condim 4/6 geoms, Model::high_condim_geom); unused rows 0
  std::vector<Vec3> angular_value;
  std::vector<int> capacity;  // per constraint: its room in dof/value (its blocks' paths)

  // Reserves room for `max_constraints` constraints of model m (avoids growth in later steps).
  void Reserve(const Model& m, size_t max_constraints);
  // Gives every constraint of d.constraints its storage (sequential; grows only when more room is
  // needed than ever before). Call before Fill.
  void Layout(const Model& m, const Data& d);
  // Computes constraint `constraint`'s entries. Constraints use disjoint storage, so calls for
  // different constraints may run in parallel.
  void Fill(const Model& m, const Data& d, int constraint);

  // J_i(r, dof) of entry e, any row r < dim.
  double At(int e, int r) const { return r < 3 ? value[e][r] : angular_value[e][r - 3]; }

  // Range [begin, end) of constraint i's entries whose dofs lie in [dof_begin, dof_end).
  void EntriesInDofs(int constraint, int dof_begin, int dof_end, int* begin, int* end) const;
};

}  // namespace alsim
