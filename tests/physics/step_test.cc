// Stepping without contacts against analytic answers and against MuJoCo's own step.
#include "engine/sim/step.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <atomic>
#include <cmath>
#include <random>
#include <stdexcept>

#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/math/spatial.h"
#include "engine/model/model_import.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

constexpr double kPi = 3.14159265358979323846;

StepOptions Theta(double theta) {
  StepOptions options;
  options.theta = theta;
  return options;
}

// Throws on a bad scene: gtest reports the message and the test fails without crashing.
std::shared_ptr<const Model> Load(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

// Kinetic energy 1/2 v^T M v plus gravitational potential -sum m g . x_com.
double MechanicalEnergy(const Model& m, Data& d) {
  Kinematics(m, d);
  MassMatrix(m, d);
  const Eigen::Map<const Eigen::VectorXd> v(d.qvel.data(), m.nv);
  double energy = 0.5 * v.dot(MassMatrixToDense(d) * v);
  for (int b = 1; b < m.nbody; ++b) energy -= m.body_mass[b] * m.gravity.dot(d.xipos[b]);
  return energy;
}

// ---- free fall ------------------------------------------------------------------------------

const char kFallingBall[] = R"(<mujoco><option timestep="0.01"/><worldbody>
    <body pos="0 0 10"><freejoint/><geom size="0.1" mass="2"/></body>
  </worldbody></mujoco>)";

TEST(StepTest, FreeFallAtTheMidpointIsExact) {
  const auto model = Load(kFallingBall);
  Data d(*model);
  const int steps = 100;
  for (int n = 0; n < steps; ++n) ASSERT_EQ(Step(*model, d, Theta(0.5)), StepStatus::kOk);
  const double t = steps * model->timestep;
  EXPECT_NEAR(d.time, t, 1e-12);
  // Constant acceleration: the midpoint rule integrates it exactly, z = z0 - g t^2 / 2.
  EXPECT_NEAR(d.qpos[2], 10.0 - 0.5 * 9.81 * t * t, 1e-9);
  EXPECT_NEAR(d.qvel[2], -9.81 * t, 1e-9);
  EXPECT_EQ(d.qpos[0], 0.0);
  EXPECT_EQ(d.qpos[1], 0.0);
  EXPECT_EQ(d.qpos[3], 1.0);  // orientation untouched
}

TEST(StepTest, FreeFallWithThetaZeroIsSymplecticEuler) {
  const auto model = Load(kFallingBall);
  Data d(*model);
  const int steps = 100;
  for (int n = 0; n < steps; ++n) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  // v_n = -g h n and z_n = z0 - h sum_{k=1..n} g h k = z0 - g h^2 n (n + 1) / 2.
  const double h = model->timestep;
  EXPECT_NEAR(d.qpos[2], 10.0 - 9.81 * h * h * steps * (steps + 1) / 2.0, 1e-9);
  EXPECT_NEAR(d.qvel[2], -9.81 * h * steps, 1e-9);
}

// ---- pendulum -------------------------------------------------------------------------------

// A compound pendulum: 1 kg at 0.8 m below a hinge, small own inertia.
const char kPendulum[] = R"(<mujoco><worldbody>
    <body><joint type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 -0.8" mass="1" diaginertia="0.001 0.001 0.001"/></body>
  </worldbody></mujoco>)";

// Period from the first and last upward zero crossings (linear interpolation).
double MeasurePeriod(const Model& model, double theta, double amplitude, double duration) {
  Data d(model);
  d.qpos[0] = amplitude;
  std::vector<double> crossings;
  double previous = d.qpos[0];
  while (d.time < duration) {
    EXPECT_EQ(Step(model, d, Theta(theta)), StepStatus::kOk);
    if (previous < 0 && d.qpos[0] >= 0) {
      const double fraction = -previous / (d.qpos[0] - previous);
      crossings.push_back(d.time - model.timestep * (1.0 - fraction));
    }
    previous = d.qpos[0];
  }
  EXPECT_GE(crossings.size(), 3u);
  return (crossings.back() - crossings.front()) / static_cast<double>(crossings.size() - 1);
}

TEST(StepTest, SmallAnglePendulumPeriod) {
  const auto model = Load(kPendulum);
  // T = 2 pi sqrt(I / (m g l)) with I = m l^2 + I_com about the hinge.
  const double inertia = 1.0 * 0.8 * 0.8 + 0.001;
  const double expected = 2 * kPi * std::sqrt(inertia / (1.0 * 9.81 * 0.8));
  for (const double theta : {0.0, 0.5}) {
    const double period = MeasurePeriod(*model, theta, 0.01, 20.0);
    EXPECT_NEAR(period / expected, 1.0, 1e-3) << "theta " << theta;
  }
}

// ---- energy of a conservative chain ---------------------------------------------------------

const char kTripleChain[] = R"(<mujoco><option><flag contact="disable"/></option><worldbody>
    <body><joint type="hinge" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.04"/>
      <body pos="0.5 0 0"><joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04"/>
        <body pos="0.4 0 0"><joint type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/></body></body></body>
  </worldbody></mujoco>)";

TEST(StepTest, MidpointKeepsTheEnergyOfAChaoticChainBounded) {
  const auto model = Load(kTripleChain);
  Data d(*model);  // released horizontal, at rest
  const double initial = MechanicalEnergy(*model, d);
  // Scale of the motion: the potential energy the chain can convert.
  Data hanging(*model);
  hanging.qpos[0] = kPi / 2;  // R_y(pi/2) turns the +x links to point down
  const double scale = initial - MechanicalEnergy(*model, hanging);
  ASSERT_GT(scale, 1.0);

  double worst = 0, late_sum = 0;
  int late_count = 0;
  while (d.time < 10.0) {
    ASSERT_EQ(Step(*model, d, Theta(0.5)), StepStatus::kOk);
    const double error = MechanicalEnergy(*model, d) - initial;
    worst = std::max(worst, std::abs(error));
    if (d.time > 9.0) {
      late_sum += error;
      ++late_count;
    }
  }
  // Bounded oscillation, no drift: the error stays a small fraction of the energy in play, and
  // over the last second it averages to about nothing.
  EXPECT_LT(worst / scale, 0.02);
  EXPECT_LT(std::abs(late_sum / late_count) / scale, 0.005);
}

// ---- torque-free rigid body -----------------------------------------------------------------

TEST(StepTest, TorqueFreeBodyKeepsItsAngularMomentum) {
  const auto model = Load(R"(<mujoco><option gravity="0 0 0"/><worldbody>
      <body><freejoint/><inertial pos="0 0 0" mass="3" diaginertia="0.1 0.2 0.25"/></body>
    </worldbody></mujoco>)");
  Data d(*model);
  // Spin about a non-principal axis (body frame), with some translation.
  const double omega0[3] = {2.0, 0.3, 1.5};
  for (int k = 0; k < 3; ++k) d.qvel[3 + k] = omega0[k];
  d.qvel[0] = 0.5;
  const Vec3 principal(0.1, 0.2, 0.25);
  auto angular_momentum = [&] {
    const Quat q(d.qpos[3], d.qpos[4], d.qpos[5], d.qpos[6]);
    const Vec3 omega(d.qvel[3], d.qvel[4], d.qvel[5]);
    return Vec3(QuatRotate(q, principal.cwiseProduct(omega)));
  };
  const Vec3 initial = angular_momentum();
  double worst = 0;
  while (d.time < 3.0) {
    ASSERT_EQ(Step(*model, d, Theta(0.5)), StepStatus::kOk);
    worst = std::max(worst, (angular_momentum() - initial).norm() / initial.norm());
  }
  EXPECT_LT(worst, 1e-3);
  EXPECT_NEAR(d.qvel[0], 0.5, 1e-12);  // linear momentum untouched
  EXPECT_NEAR(d.qpos[0], 0.5 * d.time, 1e-9);
}

// ---- bad options and divergence -------------------------------------------------------------

TEST(StepTest, ThetaOutsideTheUnitIntervalIsRefusedAndChangesNothing) {
  const auto model = Load(kPendulum);
  Data d(*model);
  d.qpos[0] = 0.3;
  for (const double theta : {-0.1, 1.0, 2.0, std::nan("")}) {
    EXPECT_EQ(Step(*model, d, Theta(theta)), StepStatus::kInvalidOptions) << theta;
  }
  EXPECT_EQ(d.qpos[0], 0.3);
  EXPECT_EQ(d.time, 0.0);
}

TEST(StepTest, RelaxationOrAndersonMemoryOutOfRangeIsRefusedAndChangesNothing) {
  const auto model = Load(kPendulum);
  Data d(*model);
  d.qpos[0] = 0.3;
  for (const double relaxation : {0.0, -1.0, 2.0, std::nan("")}) {
    StepOptions options;
    options.solver.admm.relaxation = relaxation;
    EXPECT_EQ(Step(*model, d, options), StepStatus::kInvalidOptions) << relaxation;
  }
  for (const int memory : {-1, 9}) {
    StepOptions options;
    options.solver.subadmm.anderson_memory = memory;
    EXPECT_EQ(Step(*model, d, options), StepStatus::kInvalidOptions) << memory;
  }
  EXPECT_EQ(d.qpos[0], 0.3);
  EXPECT_EQ(d.time, 0.0);
}

// Step keeps the last options it found valid on each thread (step.cc): options that differ from
// them in any field are checked again, so a bad value after good ones, on the same thread, is
// still refused, and good ones after it run.
TEST(StepTest, BadOptionsAfterGoodOnesAreStillRefused) {
  const auto model = Load(kPendulum);
  Data d(*model);
  StepOptions good;
  StepOptions bad = good;
  bad.solver.admm.relaxation = 2.0;
  StepOptions other_good = good;
  other_good.solver.admm.relaxation = 1.2;
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(Step(*model, d, good), StepStatus::kOk) << round;
    EXPECT_EQ(Step(*model, d, bad), StepStatus::kInvalidOptions) << round;
    EXPECT_EQ(Step(*model, d, other_good), StepStatus::kOk) << round;
    EXPECT_EQ(Step(*model, d, bad), StepStatus::kInvalidOptions) << round;
  }
  EXPECT_NEAR(d.time, 6 * model->timestep, 1e-15);
}

// SolverOptions::interrupt: once raised, every solver stops at its next iteration (a server ends
// a cancelled call this way inside a long solve); lowered, the same step runs to its tolerance.
TEST(StepTest, AnInterruptStopsEverySolverAtItsNextIteration) {
  const auto m = Load(R"(<mujoco><worldbody><geom type="plane" size="5 5 .1"/>
    <body pos="0 0 0.0995"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="1 0 0.0995"><freejoint/><geom type="sphere" size="0.1"/></body>
    </worldbody></mujoco>)");
  for (const SolverType type :
       {SolverType::kSubAdmm, SolverType::kPgs, SolverType::kAdmmNoSub, SolverType::kAdmmNoBody}) {
    std::atomic<bool> interrupt{true};
    StepOptions options;
    options.solver.type = type;
    options.solver.max_iterations = 100000;
    options.solver.tolerance = 1e-300;  // never met
    options.solver.interrupt = &interrupt;
    Data d(*m);
    ASSERT_EQ(Step(*m, d, options), StepStatus::kOk) << SolverName(type);
    ASSERT_GT(d.solver_statistics.contacts, 0) << SolverName(type);
    EXPECT_EQ(d.solver_statistics.max_iterations, 1) << SolverName(type);
    interrupt = false;
    options.solver.max_iterations = 50;
    ASSERT_EQ(Step(*m, d, options), StepStatus::kOk) << SolverName(type);
    EXPECT_GT(d.solver_statistics.max_iterations, 1) << SolverName(type);
  }
}

TEST(StepTest, NonFiniteStateIsReportedAsDivergence) {
  const auto model = Load(kPendulum);
  Data d(*model);
  d.qvel[0] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Step(*model, d), StepStatus::kDiverged);
}

// ---- allocation-free ------------------------------------------------------------------------

TEST(StepTest, AStepAllocatesNothing) {
  const ModelImport imported =
      ImportModelFromFile(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& model = *imported.model;
  Data d(model);
  for (int u = 0; u < model.nu; ++u) d.ctrl[u] = 0.3;
  // The humanoid falls and lands (contacts, joint limits, islands): storage sized by the Model
  // must hold every step. Uncounted: the fall up to the first contact solve, which creates the
  // solver and starts TBB's worker threads (one-time, not per step).
  while (d.solver_statistics.contacts == 0 && d.time < 2) Step(model, d);
  const testing::AllocationCounter allocations;
  int max_contacts = 0;
  for (int n = 0; n < 300; ++n) {
    Step(model, d);
    max_contacts = std::max(max_contacts, d.solver_statistics.contacts);
  }
  EXPECT_EQ(allocations.count(), 0);
  EXPECT_GT(max_contacts, 3);  // it did land
}

// ---- against MuJoCo's step ------------------------------------------------------------------

// theta = 0 is MuJoCo's Euler integrator (semi-implicit, damping implicit): with constraints
// disabled in MuJoCo, both must follow the same trajectory.
void ExpectSameTrajectoryAsMujoco(const std::string& scene_file, int steps, double tolerance) {
  const std::string path = testing::kMujocoSamples + scene_file;
  testing::OracleScene scene(path);
  ASSERT_TRUE(scene.ok());
  scene.DisableConstraints();
  const Model& model = scene.model();
  Data& d = scene.data();
  mjModel* m = scene.mutable_mj_model();
  mjData* md = scene.mj_data();
  m->opt.integrator = mjINT_EULER;
  m->opt.timestep = model.timestep;

  std::mt19937 random(7);
  std::normal_distribution<double> normal;
  // Moderate controls: with joint limits disabled, full-scale random torques spin the limbs up
  // until MuJoCo itself reports an unstable simulation.
  for (int i = 0; i < m->nv; ++i) d.qvel[i] = md->qvel[i] = 0.2 * normal(random);
  for (int u = 0; u < m->nu; ++u) d.ctrl[u] = md->ctrl[u] = 0.2 * normal(random);

  for (int n = 0; n < steps; ++n) {
    ASSERT_EQ(Step(model, d), StepStatus::kOk);
    mj_step(m, md);
  }
  ASSERT_EQ(md->warning[mjWARN_BADQACC].number, 0) << "the oracle itself went unstable";
  const Eigen::Map<const Eigen::VectorXd> qpos(d.qpos.data(), m->nq), qvel(d.qvel.data(), m->nv);
  const Eigen::Map<const Eigen::VectorXd> mj_qpos(md->qpos, m->nq), mj_qvel(md->qvel, m->nv);
  EXPECT_LE((qpos - mj_qpos).norm(), tolerance * std::max(1.0, mj_qpos.norm())) << path;
  EXPECT_LE((qvel - mj_qvel).norm(), tolerance * std::max(1.0, mj_qvel.norm())) << path;
}

TEST(StepTest, FollowsMujocosEulerStepOnHumanoid) {
  ExpectSameTrajectoryAsMujoco("humanoid/humanoid.xml", 100, 1e-9);
}

TEST(StepTest, FollowsMujocosEulerStepOnSliderCrank) {
  ExpectSameTrajectoryAsMujoco("slider_crank/slider_crank.xml", 500, 1e-9);
}

TEST(StepTest, FollowsMujocosEulerStepOn22Humanoids) {
  ExpectSameTrajectoryAsMujoco("humanoid/22_humanoids.xml", 50, 1e-9);
}

TEST(StepTest, FollowsMujocosEulerStepOnHumanoid100) {
  ExpectSameTrajectoryAsMujoco("humanoid100/humanoid100.xml", 50, 1e-9);
}

}  // namespace
}  // namespace alsim
