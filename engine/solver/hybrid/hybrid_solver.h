// "auto": SubADMM, and CANAL for the islands SubADMM does not finish (issue 31, part 4).
//
// SubADMM is fast to moderate accuracy but first-order: islands that land or slide can run to its
// iteration cap. CANAL converges superlinearly once its contact modes settle but costs a sparse
// factorization per Newton step. Per island: SubADMM runs up to
// HybridParameters::switch_after_iterations; an island that has neither converged nor stalled
// (the stall stop: its contacts admit no exact solution, and CANAL cannot do better) is then
// solved by CANAL from SubADMM's impulses (u = -lambda, the AL warm start of Algorithm 1), with
// the iterations left of the cap as CANAL's outer iterations. Two parallel passes over the
// islands: SubADMM on all of them, then, only if some island needs it, CANAL's preparation (on one
// thread, as for any solver) and CANAL on those islands; so a step that SubADMM finishes costs
// nothing more than SubADMM. Islands stay independent and the result does not depend on the
// thread count. An island reports the iterations of both solvers together, and CANAL's residuals
// when CANAL finished it. An island with a contact of condim 4 or 6 (torsional/rolling rows, which
// CANAL's cone operators cannot express) is never handed over: SubADMM solves it with the whole
// iteration cap.
#pragma once

#include <vector>

#include "engine/solver/canal/canal_solver.h"
#include "engine/solver/island_solver.h"
#include "engine/solver/subadmm/subadmm_solver.h"

namespace alsim {

class HybridSolver final : public IslandSolver {
 public:
  explicit HybridSolver(const Model& m);
  SolverType type() const override { return SolverType::kAuto; }

  // Per island of the last Solve: whether CANAL finished it.
  const std::vector<char>& handed_to_canal() const { return handed_to_canal_; }

 private:
  void Prepare(const Model& m, Data& d, const SolverOptions& options) override;
  // SubADMM's part of an island; marks it for CANAL when it is unfinished.
  void SolveIsland(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                   int island) override;
  // The two passes (see the file comment), each island's residual share at the end of its task.
  void SolveIslands(const Model& m, Data& d, const SolverOptions& options,
                    double deadline_us) override;
  // "canal_islands": the islands CANAL finished; "stalled_islands" as the ADMM solvers'.
  void AddFigures(SolverStatistics* stats) const override;

  SubAdmmSolver subadmm_;
  CanalSolver canal_;
  std::vector<char> handed_to_canal_;
  std::vector<int> canal_islands_;  // this step's islands for CANAL, in island order
};

}  // namespace alsim
