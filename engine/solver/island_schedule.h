// Parallel loops inside one island, shared by SubADMM and the ADMM baselines so that the
// ablations of Table III get the same parallelism: below these sizes a loop runs on the calling
// thread, since a task costs a few microseconds, more than a small loop. The loops' iterations
// must write disjoint data (Jacobi-like steps), so results do not depend on the thread count.
// Islands themselves always run in parallel.
//
// Measured with `alsim run --threads 2` (steps/s, median of 5, 300 steps): running the
// subsystems of an island serially below 16 of them, in tasks of 8 above, against tasks of one
// from 4 on: humanoid100 +6% (its largest island, a humanoid among 6 objects, no longer spawns
// tasks for single bodies), box_stack (one island of 10 boxes) +23%, ball_pile (one island of
// about 100 balls) +6% against running it serially.
#pragma once

#include "engine/core/parallel.h"

namespace alsim {

constexpr int kIslandParallelSubsystems = 16;  // subsystems per island
constexpr int kIslandSubsystemsPerTask = 8;
constexpr int kIslandParallelConstraints = 96;  // constraints per island
constexpr int kIslandConstraintsPerTask = 32;

// body(i) for i in [0, n): in parallel with `grain` indices per task once n >= threshold.
template <class Body>
void IslandParallelFor(int n, int threshold, int grain, const Body& body) {
  if (n < threshold) {
    for (int i = 0; i < n; ++i) body(i);
  } else {
    ParallelFor(0, n, grain, body);
  }
}

}  // namespace alsim
