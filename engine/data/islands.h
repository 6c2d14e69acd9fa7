// Contact islands of one step (built by engine/island/islands.h).
#pragma once

#include <vector>

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
  // Per island, in a split step (ConstraintSet::split): a row of it has a correction past its kept
  // speed, so it solves twice (engine/sim/step.cc); empty otherwise.
  std::vector<char> split;

  // union-find scratch (nsubsystem)
  std::vector<int> parent;
};

}  // namespace alsim
