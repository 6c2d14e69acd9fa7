// Parallel loops inside one island for the ADMM baselines, with SubAdmmSolver's thresholds so
// that the ablations of Table III get the same parallelism as SubADMM: below these sizes a loop
// runs on the calling thread, since a task costs a few microseconds, more than a small loop.
// The loops' iterations must write disjoint data (Jacobi-like steps), so results do not depend
// on the thread count.
#pragma once

#include "engine/core/parallel.h"

namespace alsim {

constexpr int kIslandParallelSubsystems = 4;    // subsystems per island
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
