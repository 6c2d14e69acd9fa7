// The Newton kit (engine/solver/newton) for every contact model it solves: the cost falls at
// every Newton iteration (the exact line search's descent, digest seed-001-sap.md T6), from the
// humanoid's random-control load, for MuJoCo's pyramidal and elliptic cones and for SAP.
#include "engine/solver/newton/newton_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

void ExpectMonotoneDescent(const std::string& xml, SolverType type) {
  const ModelImport imported = ImportModelFromString(xml, {}, "humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  StepOptions options;
  options.solver.type = type;
  ASSERT_TRUE(EnsureSolver(m, d, type));
  auto* solver = dynamic_cast<NewtonSolver*>(d.solver.get());
  ASSERT_NE(solver, nullptr);
  solver->set_record_history(true);
  int iterations = 0;
  for (int step = 0; step < 400; ++step) {
    for (int a = 0; a < m.nu; ++a) d.ctrl[a] = std::sin(0.37 * step + 1.3 * a);
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    if (d.islands.num == 0) continue;
    const std::vector<double>& cost = solver->cost_history();
    for (size_t k = 1; k < cost.size(); ++k) {
      EXPECT_LE(cost[k], cost[k - 1] + 1e-12 * std::abs(cost[k - 1])) << "step " << step;
    }
    iterations += static_cast<int>(cost.size()) - 1;
  }
  EXPECT_GT(iterations, 400);  // the check saw real work
}

std::string Humanoid(const std::string& option) {
  std::ifstream file("/usr/share/mujoco/model/humanoid/humanoid.xml");
  std::string xml((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t at = xml.find("<option");
  if (at != std::string::npos && !option.empty()) xml.insert(at + 7, " " + option);
  return xml;
}

TEST(NewtonSolverTest, CostFallsAtEveryIterationInMujocosModel) {
  ExpectMonotoneDescent(Humanoid(""), SolverType::kMujoco);
  ExpectMonotoneDescent(Humanoid("cone='elliptic'"), SolverType::kMujoco);
}

TEST(NewtonSolverTest, CostFallsAtEveryIterationInSap) {
  ExpectMonotoneDescent(Humanoid(""), SolverType::kSap);
}

// Both contact models of the kit step the humanoid to the same bits at 1, 2 and 8 threads, and
// a step allocates nothing once the instance has seen its largest islands.
TEST(NewtonSolverTest, BitIdenticalForOneTwoAndEightThreadsAndAllocationFree) {
  const ModelImport imported = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  for (const SolverType type : {SolverType::kMujoco, SolverType::kSap}) {
    SCOPED_TRACE(SolverName(type));
    StepOptions options;
    options.solver.type = type;
    std::vector<std::uint64_t> hashes;
    for (const int threads : {1, 2, 8}) {
      RunWithThreads(threads, [&] {
        Data d(m);
        for (int step = 0; step < 300; ++step) {
          for (int a = 0; a < m.nu; ++a) d.ctrl[a] = std::sin(0.05 * step + a);
          ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
        }
        hashes.push_back(StateHash(m, d));
      });
    }
    EXPECT_EQ(hashes[0], hashes[1]);
    EXPECT_EQ(hashes[0], hashes[2]);
    Data d(m);
    for (int step = 0; step < 400; ++step) ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    testing::AllocationCounter counter;
    for (int step = 0; step < 300; ++step) ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    EXPECT_EQ(counter.count(), 0);
  }
}

// Rank-1 updates of H's tree factor (MujocoNewtonParameters::rank_updates) give the step that
// factoring H afresh at every iteration gives, up to rounding: from the same states (restored
// from one snapshot, warm start included) along the humanoid's random-control load, the next
// velocities agree to 1e-9 relative while the updates do happen.
TEST(NewtonSolverTest, RankOneUpdatesGiveTheStepOfFreshFactorizations) {
  const ModelImport imported = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  StepOptions updates;
  updates.solver.type = SolverType::kMujoco;
  StepOptions fresh = updates;
  fresh.solver.mujoco.rank_updates = false;
  Data d(m), other(m);
  ASSERT_TRUE(EnsureSolver(m, d, SolverType::kMujoco));
  ASSERT_TRUE(EnsureSolver(m, other, SolverType::kMujoco));
  auto* solver = dynamic_cast<NewtonSolver*>(d.solver.get());
  auto* other_solver = dynamic_cast<NewtonSolver*>(other.solver.get());
  ASSERT_NE(solver, nullptr);
  int updated = 0;
  for (int step = 0; step < 600; ++step) {
    for (int a = 0; a < m.nu; ++a) d.ctrl[a] = std::sin(0.37 * step + 1.3 * a);
    std::string error;
    ASSERT_TRUE(RestoreStateSnapshot(m, SaveStateSnapshot(m, d), other, &error)) << error;
    ASSERT_EQ(Step(m, d, updates), StepStatus::kOk);
    ASSERT_EQ(Step(m, other, fresh), StepStatus::kOk);
    EXPECT_EQ(other_solver->statistics().rank_updates, 0);
    updated += solver->statistics().rank_updates;
    double norm = 0, difference = 0;
    for (int i = 0; i < m.nv; ++i) {
      norm = std::max(norm, std::abs(other.qvel[i]));
      difference = std::max(difference, std::abs(d.qvel[i] - other.qvel[i]));
    }
    ASSERT_LE(difference, 1e-9 * std::max(1.0, norm)) << "step " << step;
  }
  EXPECT_GT(updated, 100);
}

}  // namespace
}  // namespace alsim
