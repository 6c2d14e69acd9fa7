// External forces on bodies (Data::xfrc_applied, engine/dynamics/applied_forces.h): against
// MuJoCo 2.2.2's xfrc_applied on its humanoid, and against analytic answers on a free box.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "engine/core/parallel.h"
#include "engine/dynamics/applied_forces.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::ExpectNear;
using testing::OracleScene;

constexpr double kTol = 1e-9;  // as the other MuJoCo oracle tests

std::shared_ptr<const Model> Load(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

Eigen::VectorXd Vector(const std::vector<double>& values) {
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<long>(values.size()));
}

Eigen::VectorXd Vector(const double* values, int n) {
  return Eigen::Map<const Eigen::VectorXd>(values, n);
}

// Random forces (N) and torques (N m), standard normal times `scale`, on every third body, in
// both engines' xfrc_applied (the same (force, torque) layout).
void SetRandomForces(const Model& m, std::mt19937& rng, double scale, Data& d, mjData* mjd) {
  std::normal_distribution<double> normal;
  for (int b = 1; b < m.nbody; ++b) {
    d.xfrc_applied[b].setZero();
    if (b % 3 != 1) continue;
    for (int i = 0; i < 6; ++i) d.xfrc_applied[b][i] = scale * normal(rng);
  }
  std::memset(mjd->xfrc_applied, 0, sizeof(mjtNum) * 6 * m.nbody);
  for (int b = 0; b < m.nbody; ++b) {
    for (int i = 0; i < 6; ++i) mjd->xfrc_applied[6 * b + i] = d.xfrc_applied[b][i];
  }
}

// mj_forward with constraints disabled gives the smooth acceleration qacc = M^{-1} f, f = MuJoCo's
// qfrc_smooth (passive - bias + actuator + J^T xfrc_applied). alsim's Forward treats damping D
// implicitly, as MuJoCo's Euler step does: (M + h D) qacc = f. So the comparison is
//   f_alsim = f_mujoco,   (M + h D) qacc_alsim = M qacc_mujoco (M, D MuJoCo's),
// and qfrc_applied alone against qfrc_smooth minus MuJoCo's other terms.
TEST(ExternalForceTest, HumanoidAccelerationMatchesMujocosXfrcApplied) {
  OracleScene scene(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(scene.ok());
  scene.DisableConstraints();
  const Model& m = scene.model();
  Data& d = scene.data();
  const mjModel* mjm = scene.mj_model();
  mjData* mjd = scene.mj_data();
  std::mt19937 rng(31);
  std::normal_distribution<double> normal;
  for (int state = 0; state < 10; ++state) {
    SCOPED_TRACE("state " + std::to_string(state));
    scene.SetRandomState(rng);
    for (int u = 0; u < m.nu; ++u) d.ctrl[u] = mjd->ctrl[u] = 0.3 * normal(rng);
    SetRandomForces(m, rng, 50.0, d, mjd);
    Forward(m, d);
    mj_forward(mjm, mjd);

    const Eigen::VectorXd mj_applied =
        Vector(mjd->qfrc_smooth, m.nv) -
        (Vector(mjd->qfrc_passive, m.nv) - Vector(mjd->qfrc_bias, m.nv) +
         Vector(mjd->qfrc_actuator, m.nv));
    ASSERT_GT(mj_applied.norm(), 1.0) << "the forces act";
    ExpectNear(Vector(d.qfrc_applied), mj_applied, kTol, "qfrc_applied");
    const Eigen::VectorXd force = Vector(d.qfrc_actuator) + Vector(d.qfrc_passive) -
                                  Vector(d.qfrc_bias) + Vector(d.qfrc_applied);
    ExpectNear(force, Vector(mjd->qfrc_smooth, m.nv), kTol, "qfrc_smooth");

    Eigen::MatrixXd mass(m.nv, m.nv);
    mj_fullM(mjm, mass.data(), mjd->qM);  // symmetric: row- or column-major alike
    Eigen::MatrixXd step_matrix = mass;
    for (int i = 0; i < m.nv; ++i) step_matrix(i, i) += mjm->opt.timestep * mjm->dof_damping[i];
    ExpectNear(step_matrix * Vector(d.qacc), mass * Vector(mjd->qacc, m.nv), kTol,
               "(M + h D) qacc");
    if (::testing::Test::HasFailure()) break;
  }
}

// Constant forces through MuJoCo's Euler step (damping implicit, constraints disabled) and
// alsim's Step: the same trajectory.
TEST(ExternalForceTest, HumanoidStepsAsMujocosEulerStepWithXfrcApplied) {
  OracleScene scene(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(scene.ok());
  scene.DisableConstraints();
  const Model& m = scene.model();
  Data& d = scene.data();
  mjModel* mjm = scene.mutable_mj_model();
  mjData* mjd = scene.mj_data();
  mjm->opt.integrator = mjINT_EULER;
  mjm->opt.timestep = m.timestep;
  std::mt19937 rng(8);
  SetRandomForces(m, rng, 20.0, d, mjd);
  for (int n = 0; n < 100; ++n) {
    ASSERT_EQ(Step(m, d), StepStatus::kOk);
    mj_step(mjm, mjd);
  }
  ASSERT_EQ(mjd->warning[mjWARN_BADQACC].number, 0);
  ExpectNear(Vector(d.qpos), Vector(mjd->qpos, m.nq), kTol, "qpos");
  ExpectNear(Vector(d.qvel), Vector(mjd->qvel, m.nv), kTol, "qvel");
}

// A box whose center of mass is off its frame origin (an offset, rotated inertial frame) and whose
// frame is tilted, so that a force applied at the wrong point would turn it.
constexpr char kFreeBox[] = R"(<mujoco><option timestep="0.005"/><worldbody>
    <body name="box" pos="0.3 -0.2 2" euler="20 -35 50"><freejoint/>
      <inertial pos="0.1 -0.05 0.2" euler="10 20 30" mass="3" diaginertia="0.05 0.08 0.11"/>
      <geom type="box" size="0.2 0.15 0.1" contype="0" conaffinity="0"/>
    </body></worldbody></mujoco>)";

// With a force equal and opposite to its weight at its center of mass, the box stays where it is
// for both theta = 0 and 1/2.
TEST(ExternalForceTest, AFreeBoxHeldUpByItsWeightStaysAtRest) {
  const auto model = Load(kFreeBox);
  const Model& m = *model;
  const int box = 1;
  for (const double theta : {0.0, 0.5}) {
    SCOPED_TRACE("theta " + std::to_string(theta));
    Data d(m);
    d.xfrc_applied[box].head<3>() = -m.body_mass[box] * m.gravity;
    const std::vector<double> qpos0 = d.qpos;
    StepOptions options;
    options.theta = theta;
    for (int n = 0; n < 2000; ++n) ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    EXPECT_LE(Vector(d.qvel).lpNorm<Eigen::Infinity>(), 1e-12);
    EXPECT_LE((Vector(d.qpos) - Vector(qpos0)).lpNorm<Eigen::Infinity>(), 1e-12);
  }
}

// A force at the center of mass accelerates it by f / m + g and turns nothing: symplectic Euler
// gives v_n = n h a and x_n = x_0 + h^2 a n (n + 1) / 2 exactly.
TEST(ExternalForceTest, AForceAtTheCenterOfMassProducesNoRotation) {
  const auto model = Load(kFreeBox);
  const Model& m = *model;
  const int box = 1;
  Data d(m);
  const Vec3 force(4.0, -7.0, 12.0);
  d.xfrc_applied[box].head<3>() = force;
  Forward(m, d);
  const Vec3 com0 = d.xipos[box];
  const Vec3 acceleration = force / m.body_mass[box] + m.gravity;
  const int steps = 300;
  for (int n = 0; n < steps; ++n) ASSERT_EQ(Step(m, d), StepStatus::kOk);
  Forward(m, d);
  const Vec3 angular(d.qvel[3], d.qvel[4], d.qvel[5]);
  EXPECT_LE(angular.norm(), 1e-12);
  const double h = m.timestep;
  const Vec3 expected = com0 + h * h * acceleration * (steps * (steps + 1) / 2.0);
  EXPECT_LE((d.xipos[box] - expected).norm(), 1e-9 * expected.norm());
  // The same force off the center of mass does turn it: the test can tell.
  Data off(m);
  off.xfrc_applied[box].head<3>() = force;
  off.xfrc_applied[box].tail<3>() = Vec3(0.1, 0.0, 0.0).cross(force);
  for (int n = 0; n < 10; ++n) ASSERT_EQ(Step(m, off), StepStatus::kOk);
  EXPECT_GT(Vec3(off.qvel[3], off.qvel[4], off.qvel[5]).norm(), 1e-3);
}

// Forces on 22 humanoids that fall onto the floor and each other: the same bits at 1, 2 and 4
// threads, and setting all forces to -0.0 gives the bits of no forces at all.
TEST(ExternalForceTest, BitIdenticalForAnyThreadCount) {
  const ModelImport imported =
      ImportModelFromFile(testing::kMujocoSamples + "humanoid/22_humanoids.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  auto run = [&](int threads, bool forces, double zero) {
    Data d(m);
    std::mt19937 rng(3);
    std::normal_distribution<double> normal;
    for (int b = 1; b < m.nbody; ++b) {
      for (int i = 0; i < 6; ++i) d.xfrc_applied[b][i] = forces ? 10.0 * normal(rng) : zero;
    }
    RunWithThreads(threads, [&] {
      for (int n = 0; n < 120; ++n) EXPECT_EQ(Step(m, d), StepStatus::kOk);
    });
    return StateHash(m, d);
  };
  const std::uint64_t one = run(1, true, 0.0);
  EXPECT_EQ(run(2, true, 0.0), one);
  EXPECT_EQ(run(4, true, 0.0), one);
  const std::uint64_t none = run(2, false, 0.0);
  EXPECT_NE(none, one) << "the forces make a difference";
  EXPECT_EQ(run(2, false, -0.0), none);
}

// Forces on the humanoid while it lands: storage sized by the Model holds every step.
TEST(ExternalForceTest, AStepWithForcesAllocatesNothing) {
  const ModelImport imported =
      ImportModelFromFile(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  for (int b = 1; b < m.nbody; ++b) d.xfrc_applied[b] << 5.0, -3.0, 2.0, 0.1, 0.2, -0.1;
  while (d.solver_statistics.contacts == 0 && d.time < 2) Step(m, d);
  const testing::AllocationCounter allocations;
  for (int n = 0; n < 200; ++n) Step(m, d);
  EXPECT_EQ(allocations.count(), 0);
}

}  // namespace
}  // namespace alsim
