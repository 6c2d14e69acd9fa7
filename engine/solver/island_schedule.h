// The parallel schedule of a solve: islands run in parallel, one task each (on the calling thread
// when there is one island: nothing to split, IslandsFor), and each
// island's task ends with its share of the Sec. VII residual (SolveIslandsInParallel); loops inside
// one island (over subsystems, over constraints) run in parallel only above a size, since a task
// costs a few microseconds, more than a small loop (IslandParallelFor; the sizes come from the
// measurements in docs/benchmarks-history.md). SubADMM and the ADMM baselines share the loops so
// that the ablations of Table III get the same parallelism. The loops' iterations must write
// disjoint data (Jacobi-like steps), so results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "engine/core/parallel.h"
#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/solver/constraint_ops.h"
#include "engine/solver/solve_statistics.h"
#include "engine/solver/solver_options.h"
#include "engine/solver/stop_test.h"

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

// A time budget shared by the islands [OURS]. Island k, when its task starts at `now`, gets the
// share min(1, T w_k / W) of the time left, w_k its constraint rows plus one (its work), W the
// weight of the islands not yet started (its own included) and T the arena's threads: on one
// thread the islands solved last get their part of the budget rather than what the first ones
// left over (a solver stops at its island's deadline, after one iteration at least), and on T
// threads up to T islands run at once. No budget (deadline 0): every island's deadline is 0.
class IslandDeadlines {
 public:
  IslandDeadlines(const Data& d, double deadline_us);
  // Island k's deadline, its task starting at now_us (SteadyMicroseconds()); once per island.
  double Start(int island, double now_us);
  double Start(int island) { return deadline_us_ > 0 ? Start(island, SteadyMicroseconds()) : 0; }

 private:
  long Weight(int island) const;

  const Data& d_;
  double deadline_us_;
  int threads_ = 1;
  std::atomic<long> remaining_{0};
};

inline IslandDeadlines::IslandDeadlines(const Data& d, double deadline_us)
    : d_(d), deadline_us_(deadline_us) {
  if (!(deadline_us > 0)) return;
  threads_ = std::max(1, tbb::this_task_arena::max_concurrency());
  long total = 0;
  for (int k = 0; k < d.islands.num; ++k) total += Weight(k);
  remaining_.store(total);
}

inline long IslandDeadlines::Weight(int island) const {
  const Islands& islands = d_.islands;
  long rows = 1;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    rows += d_.constraints.constraints[islands.constraints[s]].dim;
  }
  return rows;
}

inline double IslandDeadlines::Start(int island, double now_us) {
  if (!(deadline_us_ > 0)) return 0;
  const long weight = Weight(island);
  const long left = std::max(weight, remaining_.fetch_sub(weight));
  const double share = std::min(1.0, static_cast<double>(threads_) * weight / left);
  return now_us + std::max(0.0, deadline_us_ - now_us) * share;
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
