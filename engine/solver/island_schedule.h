// The parallel schedule of a solve: islands run in parallel, one task each (on the calling thread
// when there is one island: nothing to split, IslandsFor), and each
// island's task ends with its share of the Sec. VII residual (SolveIslandsInParallel); loops inside
// one island (over subsystems, over constraints) run in parallel only above a size, since a task
// costs a few microseconds, more than a small loop (IslandParallelFor; the sizes come from the
// measurements in docs/benchmarks-history.md). SubADMM and the ADMM baselines share the loops so
// that the ablations of Table III get the same parallelism. The loops' iterations must write
// disjoint data (Jacobi-like steps), so results do not depend on the thread count.
#pragma once

#include <vector>

#include "engine/core/parallel.h"
#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/solve_statistics.h"
#include "engine/solver/solver_options.h"

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

// body(k) for every island k in [0, n): one task each, or on the calling thread when n is 1,
// where a task would only add its spawn and join (and wake an idle worker) to the step. Either way
// each k runs the same code on the same data, so the results do not depend on the choice.
template <class Body>
void IslandsFor(int n, const Body& body) {
  if (n < 2) {
    for (int k = 0; k < n; ++k) body(k);
  } else {
    ParallelFor(0, n, 1, body);
  }
}

// Runs solve_island(k) for every island of d in parallel (IslandsFor), each followed in its own
// task (while the island's data is still in that core's cache) by its share of the Sec. VII
// residual when options.compute_residual. `subsystem_blocks` must be built for d.constraints.
template <class SolveIsland>
void SolveIslandsInParallel(const Model& m, const Data& d, const SolverOptions& options,
                            const SubsystemBlocks& subsystem_blocks, ResidualWorkspace& work,
                            std::vector<IslandSolveResult>& results,
                            const SolveIsland& solve_island) {
  IslandsFor(d.islands.num, [&](int k) {
    solve_island(k);
    if (options.compute_residual) {
      results[k].residual_squares = IslandResidualSquares(m, d, subsystem_blocks, k, work);
    }
  });
}

}  // namespace alsim
