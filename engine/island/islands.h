// Contact islands (Sec. VI of the SubADMM paper, and Jolt's island builder): subsystems joined by
// constraints, found each step by union-find, so that independent groups are solved separately
// (own iterations, own convergence) and in parallel.
#pragma once

#include <vector>

#include "engine/constraint/constraint_set.h"
#include "engine/model/model.h"

namespace alsim {

// Islands of one step. Island k's subsystems are subsystems[subsystem_adr[k] ..
// subsystem_adr[k + 1]) in increasing order, and its constraints likewise. Islands are numbered
// by their smallest subsystem, so the numbering depends only on the constraints, not on the order
// in which they were joined.
struct Islands {
  int num = 0;
  std::vector<int> subsystem_island;  // island of each subsystem; -1 when it has no constraint
  std::vector<int> subsystem_adr;     // (num + 1)
  std::vector<int> subsystems;        // subsystems of all islands, grouped by island
  std::vector<int> constraint_adr;    // (num + 1)
  std::vector<int> constraints;       // constraint indices, grouped by island, increasing

  // union-find scratch (nsubsystem)
  std::vector<int> parent;
};

// Groups m's subsystems by the constraints of `set` (each constraint joins the subsystems of its
// blocks), sets Constraint::island, and fills `islands`. A subsystem without constraints belongs
// to no island. Allocates only when the number of constraints grows.
void BuildIslands(const Model& m, ConstraintSet& set, Islands& islands);

}  // namespace alsim
