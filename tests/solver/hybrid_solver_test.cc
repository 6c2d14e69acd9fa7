// The hybrid solver "auto" (engine/solver/hybrid/hybrid_solver.h): identical to SubADMM where
// SubADMM finishes, CANAL's answer where an island is handed over, independent islands, and the
// same bits for any thread count.
#include "engine/solver/hybrid/hybrid_solver.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/core/parallel.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "tests/solver/canal_scenes.h"

namespace alsim {
namespace {

using canal_scenes::Load;

double Figure(const SolverStatistics& stats, const char* name) {
  for (int f = 0; f < stats.num_figures; ++f) {
    if (std::string(stats.figures[f].name) == name) return stats.figures[f].value;
  }
  ADD_FAILURE() << "no figure " << name;
  return -1;
}

StepOptions Options(SolverType type, int switch_after, int max_iterations, double tolerance) {
  StepOptions options;
  options.solver.type = type;
  options.solver.hybrid.switch_after_iterations = switch_after;
  options.solver.max_iterations = max_iterations;
  options.solver.tolerance = tolerance;
  return options;
}

// Where SubADMM converges before the switch, auto is SubADMM bit for bit.
TEST(HybridSolverTest, IsSubAdmmWhereSubAdmmFinishes) {
  const auto model = Load(canal_scenes::kThreePointStack);
  Data hybrid(*model), subadmm(*model);
  for (int k = 0; k < 120; ++k) {
    ASSERT_EQ(Step(*model, hybrid, Options(SolverType::kAuto, 100, 100, 1e-6)), StepStatus::kOk);
    ASSERT_EQ(Step(*model, subadmm, Options(SolverType::kSubAdmm, 100, 100, 1e-6)),
              StepStatus::kOk);
    if (hybrid.solver_statistics.islands > 0) {
      EXPECT_EQ(Figure(hybrid.solver_statistics, "canal_islands"), 0) << "step " << k;
    }
  }
  EXPECT_EQ(StateHash(*model, hybrid), StateHash(*model, subadmm));
}

// Switched after one SubADMM iteration, an island SubADMM has not finished goes to CANAL and ends
// where CANAL alone ends (the stacks' solutions are unique); one SubADMM finished keeps SubADMM's
// answer bit for bit.
TEST(HybridSolverTest, HandsUnfinishedIslandsToCanal) {
  const auto model = Load(canal_scenes::SeveralIslands());
  Data settle(*model);
  for (int k = 0; k < 60; ++k) {
    ASSERT_EQ(Step(*model, settle, Options(SolverType::kSubAdmm, 100, 100, 1e-10)),
              StepStatus::kOk);
  }
  Data hybrid(*model), canal(*model), subadmm(*model);
  for (Data* d : {&hybrid, &canal, &subadmm}) {
    d->qpos = settle.qpos;
    d->qvel = settle.qvel;
    // A push down on every free body, so that the stacks are not solved at once (sticking
    // contacts: a unique solution).
    for (int j = 0; j < model->njnt; ++j) {
      if (model->jnt_type[j] == JointType::kFree) d->qvel[model->jnt_dof_adr[j] + 2] -= 0.05;
    }
  }
  ASSERT_EQ(Step(*model, hybrid, Options(SolverType::kAuto, 1, 30, 1e-12)), StepStatus::kOk);
  ASSERT_EQ(Step(*model, canal, Options(SolverType::kCanal, 1, 30, 1e-12)), StepStatus::kOk);
  ASSERT_EQ(Step(*model, subadmm, Options(SolverType::kSubAdmm, 1, 1, 1e-12)), StepStatus::kOk);
  const SolverStatistics& stats = hybrid.solver_statistics;
  const Islands& islands = hybrid.islands;
  ASSERT_GE(islands.num, 2);
  const auto& handed = static_cast<const HybridSolver&>(*hybrid.solver).handed_to_canal();
  const auto& first = static_cast<const SubAdmmSolver&>(*subadmm.solver).island_results();
  int handed_count = 0;
  for (int k = 0; k < islands.num; ++k) {
    EXPECT_EQ(handed[k] != 0, !first[k].converged && !first[k].stalled) << "island " << k;
    handed_count += handed[k];
    const Data& reference = handed[k] ? canal : subadmm;
    for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
      const int j = islands.subsystems[s];
      for (int i = model->subsystem_dof_adr[j];
           i < model->subsystem_dof_adr[j] + model->subsystem_dof_num[j]; ++i) {
        if (handed[k]) {
          EXPECT_NEAR(hybrid.v_hat[i], reference.v_hat[i], 1e-9) << "island " << k;
        } else {
          EXPECT_EQ(hybrid.v_hat[i], reference.v_hat[i]) << "island " << k;
        }
      }
    }
  }
  EXPECT_GE(handed_count, 2);  // both stacks
  EXPECT_EQ(Figure(stats, "canal_islands"), handed_count);
}

TEST(HybridSolverTest, BitIdenticalForOneAndTwoThreads) {
  const auto model = Load(canal_scenes::SeveralIslands());
  std::uint64_t hashes[2];
  for (const int threads : {1, 2}) {
    RunWithThreads(threads, [&] {
      Data d(*model);
      for (int k = 0; k < 80; ++k) {
        ASSERT_EQ(Step(*model, d, Options(SolverType::kAuto, 3, 40, 1e-9)), StepStatus::kOk);
      }
      hashes[threads - 1] = StateHash(*model, d);
    });
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

}  // namespace
}  // namespace alsim
