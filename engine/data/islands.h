// Contact islands of one step (built by engine/island/islands.h).
#pragma once

#include <vector>

#include "engine/data/constraint_set.h"

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

// Whether island k of `islands` has a row whose correction exceeds its kept speed (set.split_row):
// a split step solves it twice (engine/sim/step.cc).
inline bool IslandSplits(const Islands& islands, const ConstraintSet& set, int k) {
  for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
    const Constraint& c = set.constraints[islands.constraints[s]];
    for (int r = c.row_adr; r < c.row_adr + c.dim; ++r) {
      if (set.split_row[r]) return true;
    }
  }
  return false;
}

}  // namespace alsim
