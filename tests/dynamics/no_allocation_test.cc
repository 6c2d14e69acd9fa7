// The per-step dynamics functions allocate nothing: every buffer lives in Data. Counts calls to
// the global operator new (std::vector growth and any other C++ allocation) around the stages.
#include <gtest/gtest.h>

#include <new>
#include <random>
#include <vector>

#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/jacobian.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/dynamics/passive_forces.h"
#include "engine/dynamics/velocity.h"
#include "engine/linalg/tree_ldl.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

TEST(NoAllocationTest, StagesAllocateNothing) {
  testing::OracleScene scene(testing::kMujocoSamples + "humanoid/22_humanoids.xml");
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  std::mt19937 rng(3);
  scene.SetRandomState(rng);
  Jacobian3 jacp(3, m.nv), jacr(3, m.nv);
  Jacobian6 body_jac(6, m.nv);
  std::vector<int> dofs(m.nv);
  std::vector<double> rhs(m.nv, 1.0);

  const testing::AllocationCounter allocations;
  Kinematics(m, d);
  Velocity(m, d);
  MassMatrix(m, d);
  FactorMassMatrix(m, d);
  SolveMassMatrix(d, rhs.data());
  BiasForces(m, d);
  PassiveForces(m, d);
  PointJacobian(m, d, m.nbody - 1, d.xipos[m.nbody - 1], jacp, jacr);
  BodyPathDofs(d, m.nbody - 1, dofs.data());
  BodyJacobian(m, d, m.nbody - 1, body_jac);
  EXPECT_EQ(allocations.count(), 0);

  // The counter works: a call of the global operator new counts. Its pointer escapes through a
  // volatile, so that no compiler elides the pair (clang drops a vector's unused allocation).
  void* volatile escaped = ::operator new(sizeof(double));
  ::operator delete(escaped);
  EXPECT_GT(allocations.count(), 0);
}

}  // namespace
}  // namespace alsim
