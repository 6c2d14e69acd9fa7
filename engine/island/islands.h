// Contact islands (Sec. VI of the SubADMM paper, and Jolt's island builder): subsystems joined by
// constraints, found each step by union-find, so that independent groups are solved separately
// (own iterations, own convergence) and in parallel.
#pragma once

#include <vector>

#include "engine/data/constraint_set.h"
#include "engine/data/islands.h"
#include "engine/model/model.h"

namespace alsim {

// Groups m's subsystems by the constraints of `set` (each constraint joins the subsystems of its
// blocks), sets Constraint::island, and fills `islands`. A subsystem without constraints belongs
// to no island. Allocates only when the number of constraints grows.
void BuildIslands(const Model& m, ConstraintSet& set, Islands& islands);

}  // namespace alsim
