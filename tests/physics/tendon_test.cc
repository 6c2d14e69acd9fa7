// Fixed tendons (issue 32): L = sum c_k q_k, its Jacobian, springs and dampers, actuators on a
// tendon (motors and servos) and tendon limits, against MuJoCo 2.2.2 as the oracle (ten_length,
// ten_J, qfrc_passive, qfrc_actuator and mj_step trajectories), finite differences and a static
// equilibrium solved here; every solver; and scenes/tendon_gripper.xml grasping and lifting a box.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "engine/constraint/build_constraints.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/actuation.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/passive_forces.h"
#include "engine/dynamics/tendon.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

const SolverType kAllSolvers[] = {SolverType::kSubAdmm,       SolverType::kPgs,
                                  SolverType::kAdmmNoSub,     SolverType::kAdmmNoBody,
                                  SolverType::kCanal,         SolverType::kCanalTrDogleg,
                                  SolverType::kCanalDampedSn, SolverType::kAuto};

// Two pendulums on separate trees (a hinge and a hinge-then-slide chain) and a third tree with a
// slide: tendon "couple" joins the first hinge and the chain's hinge (a spring and a damper),
// "chain" runs along one tree (hinge and slide), and "three" spans all three trees. Geoms do not
// collide.
const char* kTendonScene = R"(<mujoco><option timestep="0.002"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body name="a" pos="0 0 1"><joint name="ha" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0" mass="1"/></body>
    <body name="b" pos="1 0 1"><joint name="hb" type="hinge" axis="0 1 0" stiffness="0.4"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0 0.1" mass="0.7"/>
      <body name="b2" pos="0.3 0 0.1"><joint name="sb" type="slide" axis="1 0 0"/>
        <geom type="sphere" size="0.05" mass="0.4"/></body></body>
    <body name="c" pos="2 0 1"><joint name="sc" type="slide" axis="0 0 1" damping="0.3"/>
      <geom type="box" size="0.05 0.05 0.05" mass="0.5"/></body>
  </worldbody>
  <tendon>
    <fixed name="couple" stiffness="3" damping="0.2" springlength="0.1">
      <joint joint="ha" coef="1"/><joint joint="hb" coef="-0.6"/></fixed>
    <fixed name="chain" stiffness="5" damping="0.1">
      <joint joint="hb" coef="0.75"/><joint joint="sb" coef="2"/></fixed>
    <fixed name="three"><joint joint="ha" coef="0.3"/><joint joint="sb" coef="-1"/>
      <joint joint="sc" coef="1.5"/></fixed>
  </tendon>
  <actuator>
    <motor name="m" tendon="three" gear="2"/>
    <position name="p" tendon="chain" kp="8" gear="1.5"/>
    <velocity name="v" tendon="couple" kv="0.5"/>
  </actuator></mujoco>)";

std::string TendonScenePath() { return testing::WriteTempScene("tendons.xml", kTendonScene); }

std::shared_ptr<const Model> Load(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

TEST(TendonTest, ImportsFixedTendonsAndTendonActuators) {
  const auto model = Load(kTendonScene);
  const Model& m = *model;
  ASSERT_EQ(m.ntendon, 3);
  EXPECT_THAT(m.warnings, ::testing::IsEmpty());
  EXPECT_EQ(m.tendon_wrap_num[0], 2);
  EXPECT_EQ(m.tendon_wrap_num[1], 2);
  EXPECT_EQ(m.tendon_wrap_num[2], 3);
  EXPECT_EQ(m.wrap_coef[m.tendon_wrap_adr[1]], 0.75);
  EXPECT_EQ(m.tendon_lengthspring[0], 0.1);
  ASSERT_EQ(m.nu, 3);
  for (int u = 0; u < m.nu; ++u) {
    EXPECT_EQ(m.actuator_transmission[u], ActuatorTransmission::kTendon);
    EXPECT_EQ(m.actuator_jnt[u], -1);
  }
  EXPECT_EQ(m.actuator_tendon[0], 2);
  EXPECT_FALSE(m.actuator_servo_shaped[0]);  // a motor
  EXPECT_TRUE(m.actuator_servo_shaped[1]);
  EXPECT_TRUE(m.actuator_servo_shaped[2]);
  // "three" and "couple" span trees: their actuators run between the tree passes.
  EXPECT_FALSE(m.actuators_in_trees);
}

// Lengths and Jacobian rows against MuJoCo's ten_length and ten_J, and the Jacobian against
// central differences of TendonLength over each dof (hinge and slide qpos are the dof's).
TEST(TendonTest, LengthAndJacobianMatchMujocoAndFiniteDifferences) {
  testing::OracleScene scene(TendonScenePath());
  ASSERT_TRUE(scene.ok());
  const Model& model = scene.model();
  Data& d = scene.data();
  const mjModel* m = scene.mj_model();
  mjData* md = scene.mj_data();
  std::mt19937 random(3);
  for (int trial = 0; trial < 10; ++trial) {
    scene.SetRandomState(random);
    mj_forward(m, md);
    TendonKinematics(model, d);
    for (int t = 0; t < m->ntendon; ++t) {
      EXPECT_NEAR(d.ten_length[t], md->ten_length[t], 1e-12) << "tendon " << t;
      double mj_velocity = 0;
      for (int i = 0; i < m->nv; ++i) mj_velocity += md->ten_J[t * m->nv + i] * md->qvel[i];
      EXPECT_NEAR(d.ten_velocity[t], mj_velocity, 1e-12) << "tendon " << t;
      std::vector<double> row(m->nv, 0.0);
      for (int k = model.tendon_wrap_adr[t];
           k < model.tendon_wrap_adr[t] + model.tendon_wrap_num[t]; ++k) {
        row[model.wrap_dof[k]] += model.wrap_coef[k];
      }
      for (int i = 0; i < m->nv; ++i) {
        EXPECT_NEAR(row[i], md->ten_J[t * m->nv + i], 1e-12) << "tendon " << t << " dof " << i;
        const int q = model.jnt_qpos_adr[model.dof_jnt[i]];
        const double saved = d.qpos[q], step = 1e-6;
        d.qpos[q] = saved + step;
        const double plus = TendonLength(model, d, t);
        d.qpos[q] = saved - step;
        const double minus = TendonLength(model, d, t);
        d.qpos[q] = saved;
        EXPECT_NEAR(row[i], (plus - minus) / (2 * step), 1e-8) << "tendon " << t << " dof " << i;
      }
    }
  }
}

// qfrc_passive (joint and tendon springs and dampers) and the actuators on tendons (length,
// force, joint forces) against mj_forward at random states and controls.
TEST(TendonTest, PassiveAndActuatorForcesMatchMujoco) {
  testing::OracleScene scene(TendonScenePath());
  ASSERT_TRUE(scene.ok());
  const Model& model = scene.model();
  Data& d = scene.data();
  const mjModel* m = scene.mj_model();
  mjData* md = scene.mj_data();
  std::mt19937 random(5);
  std::normal_distribution<double> normal;
  for (int trial = 0; trial < 10; ++trial) {
    scene.SetRandomState(random);
    for (int u = 0; u < m->nu; ++u) d.ctrl[u] = md->ctrl[u] = normal(random);
    mj_forward(m, md);
    Kinematics(model, d);
    PassiveForces(model, d);
    ActuatorForces(model, d);
    for (int i = 0; i < m->nv; ++i) {
      EXPECT_NEAR(d.qfrc_passive[i], md->qfrc_passive[i], 1e-10) << "dof " << i;
      EXPECT_NEAR(d.qfrc_actuator[i], md->qfrc_actuator[i], 1e-10) << "dof " << i;
    }
    for (int u = 0; u < m->nu; ++u) {
      EXPECT_NEAR(d.actuator_length[u], md->actuator_length[u], 1e-12) << "actuator " << u;
      EXPECT_NEAR(d.actuator_force[u], md->actuator_force[u], 1e-10) << "actuator " << u;
    }
  }
}

// Without constraints (servos explicit: nothing is solved) the step is MuJoCo's Euler step, with
// the dofs' damping implicit and the tendons' explicit in both: the trajectories agree to
// round-off over 1 s, through springs, dampers, a motor and both servos on tendons across trees.
TEST(TendonTest, UnconstrainedTrajectoryFollowsMujocosEulerStep) {
  testing::OracleScene scene(TendonScenePath());
  ASSERT_TRUE(scene.ok());
  scene.DisableConstraints();
  const Model& model = scene.model();
  Data& d = scene.data();
  mjModel* m = scene.mutable_mj_model();
  mjData* md = scene.mj_data();
  m->opt.integrator = mjINT_EULER;
  std::mt19937 random(9);
  std::normal_distribution<double> normal;
  for (int i = 0; i < m->nv; ++i) d.qvel[i] = md->qvel[i] = normal(random);
  for (int u = 0; u < m->nu; ++u) d.ctrl[u] = md->ctrl[u] = normal(random);
  for (int n = 0; n < 500; ++n) {
    ASSERT_EQ(Step(model, d), StepStatus::kOk);
    mj_step(m, md);
  }
  for (int i = 0; i < m->nq; ++i) EXPECT_NEAR(d.qpos[i], md->qpos[i], 1e-9) << "qpos " << i;
  for (int i = 0; i < m->nv; ++i) EXPECT_NEAR(d.qvel[i], md->qvel[i], 1e-8) << "qvel " << i;
  // The motion is not trivial: the springs moved every joint.
  for (int i = 0; i < m->nq; ++i) EXPECT_GT(std::abs(d.qpos[i] - m->qpos0[i]), 1e-3) << i;
}

// With constraints on, alsim solves the two servos on tendons as soft constraint rows (implicit,
// eq. 4) where MuJoCo applies them as forces: the same dynamics discretized differently, O(h)
// apart. Every solver follows MuJoCo's trajectory over 0.5 s within a small gap that shrinks at
// least in proportion to the step (h = 2 ms, then 0.5 ms: a first-order gap falls 4x), and the
// servo rows carry one block per joint of their tendon.
double ServoTrajectoryGap(SolverType solver, const std::string& timestep) {
  std::string xml = kTendonScene;
  xml.replace(xml.find("0.002"), 5, timestep);
  testing::OracleScene scene(testing::WriteTempScene("servos_" + timestep + ".xml", xml));
  EXPECT_TRUE(scene.ok());
  const Model& model = scene.model();
  Data& d = scene.data();
  const mjModel* m = scene.mj_model();
  mjData* md = scene.mj_data();
  StepOptions options;
  options.solver.type = solver;
  options.solver.max_iterations = 200;
  options.solver.tolerance = 1e-10;
  for (int u = 0; u < m->nu; ++u) d.ctrl[u] = md->ctrl[u] = 0.5 - 0.4 * u;
  double gap = 0;
  const int steps = static_cast<int>(std::lround(0.5 / model.timestep));
  for (int n = 0; n < steps; ++n) {
    EXPECT_EQ(Step(model, d, options), StepStatus::kOk) << SolverName(solver);
    mj_step(m, md);
    for (int i = 0; i < m->nq; ++i) gap = std::max(gap, std::abs(d.qpos[i] - md->qpos[i]));
  }
  EXPECT_EQ(d.constraints.constraints.size(), 2u) << SolverName(solver);
  for (const Constraint& c : d.constraints.constraints) {
    EXPECT_EQ(c.type, ConstraintType::kSoft);
    EXPECT_EQ(c.block_num, model.tendon_wrap_num[model.actuator_tendon[c.key.a]]);
  }
  return gap;
}

TEST(TendonTest, ImplicitTendonServosFollowMujocoWithEverySolver) {
  for (const SolverType solver : kAllSolvers) {
    const double coarse = ServoTrajectoryGap(solver, "0.002");
    const double fine = ServoTrajectoryGap(solver, "0.0005");
    EXPECT_LT(coarse, 0.02) << SolverName(solver);  // angles swing over 2 rad
    EXPECT_LT(fine, 0.3 * coarse) << SolverName(solver);
  }
}

// Two bars hinged to the world about y, one 0.5 m (1 kg), one 0.3 m (2 kg), start horizontal and
// fall; tendon "sum" = q1 + q2 is limited to [-1, 1]. The limit stops them together at
// q1 + q2 = -1 (in MuJoCo too), and they come to rest where gravity's torques on the two bars are
// equal (the one limit force acts on both with coefficient 1):
//   m1 g l1 cos(q1) = m2 g l2 cos(q2),  q1 + q2 = -1   (l = half lengths, q downward negative)
// solved below by Newton's method. alsim's hard limit holds it to the Baumgarte drift's size;
// MuJoCo's soft limit sags by its solref's compliance.
const char* kLimitScene = R"(<mujoco><option timestep="0.002"/>
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <body pos="0 0 1"><joint name="h1" type="hinge" axis="0 -1 0" damping="0.3"/>
      <geom type="capsule" size="0.02" fromto="0 0 0 0.5 0 0" mass="1"/></body>
    <body pos="0 1 1"><joint name="h2" type="hinge" axis="0 -1 0" damping="0.3"/>
      <geom type="capsule" size="0.02" fromto="0 0 0 0.3 0 0" mass="2"/></body>
  </worldbody>
  <tendon><fixed name="sum" limited="true" range="-1 1">
    <joint joint="h1" coef="1"/><joint joint="h2" coef="1"/></fixed></tendon></mujoco>)";

Eigen::Vector2d LimitEquilibrium() {
  const double a = 1.0 * 0.25, b = 2.0 * 0.15;  // m l_com
  double q1 = -0.5;
  for (int n = 0; n < 50; ++n) {  // f(q1) = a cos q1 - b cos(-1 - q1) = 0
    const double f = a * std::cos(q1) - b * std::cos(-1 - q1);
    const double df = -a * std::sin(q1) - b * std::sin(-1 - q1);
    q1 -= f / df;
  }
  return Eigen::Vector2d(q1, -1 - q1);
}

TEST(TendonTest, LimitedTendonStopsTwoFallingBarsLikeMujocoWithEverySolver) {
  const Eigen::Vector2d expected = LimitEquilibrium();
  ASSERT_NEAR(expected.sum(), -1, 1e-12);
  ASSERT_GT(std::abs(expected[0] - expected[1]), 0.1);  // the bars share the limit unequally
  for (const SolverType solver : kAllSolvers) {
    testing::OracleScene scene(testing::WriteTempScene("limit.xml", kLimitScene));
    ASSERT_TRUE(scene.ok());
    const Model& model = scene.model();
    Data& d = scene.data();
    const mjModel* m = scene.mj_model();
    mjData* md = scene.mj_data();
    StepOptions options;
    options.solver.type = solver;
    double lowest = 0;
    for (int n = 0; n < 2500; ++n) {
      ASSERT_EQ(Step(model, d, options), StepStatus::kOk) << SolverName(solver);
      mj_step(m, md);
      lowest = std::min(lowest, d.qpos[0] + d.qpos[1]);
    }
    // Stopped at the limit: overshoot bounded by one step's fall, then held.
    EXPECT_GT(lowest, -1.02) << SolverName(solver);
    EXPECT_NEAR(d.qpos[0] + d.qpos[1], -1, 1e-3) << SolverName(solver);
    EXPECT_NEAR(d.qpos[0], expected[0], 2e-3) << SolverName(solver);
    EXPECT_NEAR(d.qpos[1], expected[1], 2e-3) << SolverName(solver);
    EXPECT_NEAR(std::abs(d.qvel[0]) + std::abs(d.qvel[1]), 0, 1e-3) << SolverName(solver);
    ASSERT_EQ(d.constraints.constraints.size(), 1u) << SolverName(solver);
    const Constraint& c = d.constraints.constraints[0];
    EXPECT_EQ(c.type, ConstraintType::kLimit);
    EXPECT_EQ(c.key.b, 0);  // the lower side
    EXPECT_EQ(c.block_num, 2);
    EXPECT_EQ(d.islands.num, 1);  // the row joins the two trees
    // MuJoCo: the same stop, up to its soft limit's sag.
    EXPECT_NEAR(md->qpos[0] + md->qpos[1], -1, 0.02);
    EXPECT_NEAR(d.qpos[0], md->qpos[0], 0.02) << SolverName(solver);
    EXPECT_NEAR(d.qpos[1], md->qpos[1], 0.02) << SolverName(solver);
  }
}

// A tendon started 0.5 rad past its limit (both bars at -0.75 rad, q1 + q2 = -1.5 against -1)
// returns to its range as a joint past its limit does (ConstraintOptions' capped correction):
// within 0.5 s, moving its length by at most max_correction_angular_speed h per step, and without
// being thrown (its velocity afterwards stays that of the settling bars).
TEST(TendonTest, TendonStartedPastItsLimitReturnsWithBoundedSpeed) {
  const auto model = Load(kLimitScene);
  Data d(*model);
  d.qpos[0] = d.qpos[1] = -0.75;
  const StepOptions options;
  const double cap = options.constraints.max_correction_angular_speed * model->timestep;
  double previous = -1.5, largest_move = 0, fastest = 0;
  for (int n = 0; n < 250; ++n) {
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    const double length = d.qpos[0] + d.qpos[1];
    largest_move = std::max(largest_move, std::abs(length - previous));
    previous = length;
    fastest = std::max(fastest, std::abs(d.qvel[0] + d.qvel[1]));
  }
  EXPECT_LE(largest_move, cap * (1 + 1e-3));  // up to the solver's tolerance
  EXPECT_GT(largest_move, 0.5 * cap);         // the cap, not erp alone, paced the recovery
  EXPECT_NEAR(d.qpos[0] + d.qpos[1], -1, 1e-3);
  EXPECT_LT(fastest, options.constraints.kept_correction_angular_speed + 0.1);
}

// A limit row over three trees: three slides (1, 2 and 3 kg) fall together until "three" = s1 +
// s2 + s3 reaches -0.3. The row then pushes each with the same force f (unit coefficients), so
// with a_i = f / m_i - g and sum a_i = 0:
//   f = 3 g / (1/1 + 1/2 + 1/3) = 18 g / 11,  a = (7, -2, -5) g / 11
// (the heavier slides keep sinking and lift the lightest, as a fluid coupling would). Every solver
// holds the sum at the limit and gives these accelerations.
TEST(TendonTest, LimitAcrossThreeTreesCouplesTheirAccelerationsWithEverySolver) {
  const char* xml = R"(<mujoco><option timestep="0.002"/>
    <default><geom contype="0" conaffinity="0"/></default>
    <worldbody>
      <body pos="0 0 1"><joint name="s1" type="slide" axis="0 0 1"/><geom size="0.05" mass="1"/></body>
      <body pos="1 0 1"><joint name="s2" type="slide" axis="0 0 1"/><geom size="0.05" mass="2"/></body>
      <body pos="2 0 1"><joint name="s3" type="slide" axis="0 0 1"/><geom size="0.05" mass="3"/></body>
    </worldbody>
    <tendon><fixed name="three" limited="true" range="-0.3 1"><joint joint="s1" coef="1"/>
      <joint joint="s2" coef="1"/><joint joint="s3" coef="1"/></fixed></tendon></mujoco>)";
  const double g = 9.81;
  const double expected[3] = {7 * g / 11, -2 * g / 11, -5 * g / 11};
  for (const SolverType solver : kAllSolvers) {
    const auto model = Load(xml);
    Data d(*model);
    StepOptions options;
    options.solver.type = solver;
    options.solver.tolerance = 1e-12;
    options.solver.max_iterations = 500;
    // Free fall reaches the limit at t = sqrt(2 0.1 / g) = 0.14 s.
    for (int n = 0; n < 100; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    const std::vector<double> v0 = d.qvel;
    for (int n = 0; n < 50; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    EXPECT_NEAR(d.qpos[0] + d.qpos[1] + d.qpos[2], -0.3, 1e-3) << SolverName(solver);
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR((d.qvel[i] - v0[i]) / (50 * model->timestep), expected[i], 0.01 * g)
          << SolverName(solver) << " slide " << i;
    }
    ASSERT_EQ(d.constraints.constraints.size(), 1u);
    EXPECT_EQ(d.constraints.constraints[0].block_num, 3);
    EXPECT_EQ(d.islands.num, 1);
  }
}

// A state saved while a tendon limit row holds (its warm-start key, kind 5) restores into a fresh
// Data, which then steps to the original's bits; the fingerprint tells tendons apart.
TEST(TendonTest, SnapshotsKeepTheTendonLimitsWarmStart) {
  const auto model = Load(kLimitScene);
  Data original(*model);
  for (int n = 0; n < 600; ++n) ASSERT_EQ(Step(*model, original), StepStatus::kOk);
  ASSERT_EQ(original.warm_start.key.size(), 1u);
  EXPECT_EQ(original.warm_start.key[0].kind, 5);
  EXPECT_GT(original.warm_start.impulse[0][0], 0);
  const std::string bytes = SaveStateSnapshot(*model, original);
  Data restored(*model);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(*model, bytes, restored, &error)) << error;
  for (int n = 0; n < 50; ++n) {
    ASSERT_EQ(Step(*model, original), StepStatus::kOk);
    ASSERT_EQ(Step(*model, restored), StepStatus::kOk);
  }
  EXPECT_EQ(restored.qpos, original.qpos);
  EXPECT_EQ(restored.qvel, original.qvel);
  std::string other = kLimitScene;
  other.replace(other.rfind("coef=\"1\""), 8, "coef=\"2\"");
  EXPECT_NE(ModelFingerprint(*Load(other)), ModelFingerprint(*model));
}

// Spatial tendons that act, tendon friction, repeated joints and actuators on spatial tendons are
// name; a spatial tendon that does nothing is ignored with a warning.
TEST(TendonTest, SpatialTendonsAndTendonFrictionAreRefusedByName) {
  const std::string bodies = R"(<worldbody>
    <body><joint name="j1" type="hinge"/><geom size="0.1"/><site name="s1"/></body>
    <body pos="1 0 0"><joint name="j2" type="hinge"/><geom size="0.1"/><site name="s2"/></body>
    </worldbody>)";
  // MuJoCo 2.2.2's length sums a repeated joint's coefficients, its Jacobian keeps the last one.
  const ModelImport twice = ImportModelFromString(
      "<mujoco>" + bodies +
      R"(<tendon><fixed name="double"><joint joint="j1" coef="1"/><joint joint="j1" coef="2"/></fixed></tendon></mujoco>)");
  EXPECT_FALSE(twice);
  EXPECT_THAT(twice.error, ::testing::HasSubstr("tendon 'double' lists joint 'j1' twice"));
  const ModelImport friction = ImportModelFromString(
      "<mujoco>" + bodies +
      R"(<tendon><fixed name="rubs" frictionloss="1"><joint joint="j1" coef="1"/></fixed></tendon></mujoco>)");
  EXPECT_FALSE(friction);
  EXPECT_THAT(friction.error, ::testing::HasSubstr("tendon 'rubs' has frictionloss"));
  const ModelImport spring = ImportModelFromString(
      "<mujoco>" + bodies +
      R"(<tendon><spatial name="rope" stiffness="5"><site site="s1"/><site site="s2"/></spatial></tendon></mujoco>)");
  EXPECT_FALSE(spring);
  EXPECT_THAT(spring.error, ::testing::HasSubstr("tendon 'rope' is spatial"));
  const ModelImport driven = ImportModelFromString(
      "<mujoco>" + bodies +
      R"(<tendon><spatial name="rope"><site site="s1"/><site site="s2"/></spatial></tendon>
      <actuator><motor name="pull" tendon="rope"/></actuator></mujoco>)");
  EXPECT_FALSE(driven);
  EXPECT_THAT(driven.error, ::testing::HasSubstr("actuator 'pull' drives tendon 'rope'"));
  const ModelImport passive = ImportModelFromString(
      "<mujoco>" + bodies +
      R"(<tendon><spatial name="rope"><site site="s1"/><site site="s2"/></spatial></tendon></mujoco>)");
  ASSERT_TRUE(passive) << passive.error;
  EXPECT_THAT(passive.model->warnings,
              ::testing::Contains(::testing::HasSubstr("1 spatial tendon(s) ignored")));
  EXPECT_EQ(passive.model->tendon_wrap_num[0], 0);
}

// scenes/tendon_gripper.xml: one position servo on the tendon "grip" closes both fingers on the
// box; the lift servo then raises the palm 0.15 m in 1 s and the box goes with it, held by
// friction alone. Without the grip command the fingers stay open and the box stays on the floor.
TEST(TendonTest, GripperSceneGraspsAndLiftsTheBox) {
  const ModelImport imported =
      ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/tendon_gripper.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  ASSERT_EQ(m.nu, 2);
  const int grip = m.actuator_name[0] == "grip" ? 0 : 1, lift = 1 - grip;
  ASSERT_EQ(m.actuator_transmission[grip], ActuatorTransmission::kTendon);
  const int box_z = 2;  // the box's free joint comes after the palm (lift) and two fingers
  ASSERT_EQ(m.jnt_type[3], JointType::kFree);
  const int box_qpos = m.jnt_qpos_adr[3] + box_z;
  for (const bool close : {true, false}) {
    for (const SolverType solver : {SolverType::kSubAdmm, SolverType::kPgs}) {
      Data d(m);
      StepOptions options;
      options.solver.type = solver;
      const double start = d.qpos[box_qpos];
      d.ctrl[grip] = close ? 0.05 : 0.0;
      for (int n = 0; n < 120; ++n) ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
      for (int n = 1; n <= 360; ++n) {  // raised over 1 s, then held for 0.5 s
        d.ctrl[lift] = 0.15 * std::min(1.0, n / 240.0);
        ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
      }
      const double palm = d.qpos[m.jnt_qpos_adr[0]];
      EXPECT_NEAR(palm, 0.15, 0.01) << SolverName(solver);
      if (close) {
        EXPECT_NEAR(d.qpos[box_qpos] - start, palm, 0.02) << SolverName(solver);
      } else {
        EXPECT_NEAR(d.qpos[box_qpos], start, 1e-3) << SolverName(solver);
      }
    }
  }
}

// MuJoCo 2.2.2 on the same scene and commands: its gripper lifts the box too, to where alsim's
// does (MuJoCo's soft contacts let the box sag a little more in the fingers).
TEST(TendonTest, GripperSceneLiftsTheBoxInMujocoToo) {
  testing::OracleScene scene(std::string(ALSIM_SCENES_DIR) + "/tendon_gripper.xml");
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  const mjModel* mj = scene.mj_model();
  mjData* md = scene.mj_data();
  const int box_qpos = m.jnt_qpos_adr[3] + 2;
  d.ctrl[0] = md->ctrl[0] = 0.05;
  for (int n = 1; n <= 480; ++n) {
    if (n > 120) d.ctrl[1] = md->ctrl[1] = 0.15 * std::min(1.0, (n - 120) / 240.0);
    ASSERT_EQ(Step(m, d), StepStatus::kOk);
    mj_step(mj, md);
  }
  EXPECT_GT(md->qpos[box_qpos], 0.05 + 0.12);
  EXPECT_NEAR(d.qpos[box_qpos], md->qpos[box_qpos], 0.02);
  EXPECT_NEAR(d.qpos[0], md->qpos[0], 0.005);  // the palm
  // The fingers close on the box symmetrically in both: the tendon's mean closing 0.03 m.
  EXPECT_NEAR(0.5 * (d.qpos[1] + d.qpos[2]), 0.5 * (md->qpos[1] + md->qpos[2]), 0.002);
}

// Twelve three-hinge chains (36 dofs: the trees run as parallel tasks) joined in a ring by tendons
// between neighbouring trees (springs, dampers, every third one limited, servos across trees) and
// one tendon motor inside each tree: the same bits with 1 and 4 threads, at theta 0 and 1/2 (where
// each tree task changes its own qvel while the tendons across trees are read).
std::string RingOfChains() {
  std::string xml = R"(<mujoco><option timestep="0.002"/>
    <default><geom contype="0" conaffinity="0" type="capsule" size="0.02"/>
      <joint type="hinge" axis="0 1 0" damping="0.01"/></default><worldbody>)";
  const int n = 12;
  for (int i = 0; i < n; ++i) {
    const std::string id = std::to_string(i);
    xml += "<body pos='" + std::to_string(i) + " 0 1'><joint name='a" + id +
           "'/><geom fromto='0 0 0 0.2 0 0'/><body pos='0.2 0 0'><joint name='b" + id +
           "'/><geom fromto='0 0 0 0.2 0 0'/><body pos='0.2 0 0'><joint name='c" + id +
           "'/><geom fromto='0 0 0 0.2 0 0'/></body></body></body>";
  }
  xml += "</worldbody><tendon>";
  for (int i = 0; i < n; ++i) {
    const std::string id = std::to_string(i), next = std::to_string((i + 1) % n);
    xml += "<fixed name='ring" + id + "' stiffness='2' damping='0.1'" +
           (i % 3 == 0 ? std::string(" limited='true' range='-0.4 0.4'") : std::string()) +
           "><joint joint='a" + id + "' coef='1'/><joint joint='b" + next +
           "' coef='-0.5'/></fixed>";
    xml += "<fixed name='own" + id + "'><joint joint='b" + id + "' coef='1'/><joint joint='c" + id +
           "' coef='1'/></fixed>";
  }
  xml += "</tendon><actuator>";
  for (int i = 0; i < n; ++i) {
    const std::string id = std::to_string(i);
    xml += "<position tendon='ring" + id + "' kp='3'/><motor tendon='own" + id + "'/>";
  }
  return xml + "</actuator></mujoco>";
}

TEST(TendonTest, TendonsAcrossTreesGiveTheSameBitsForAnyThreadCount) {
  const auto model = Load(RingOfChains());
  ASSERT_GE(model->nv, 32);
  ASSERT_EQ(model->nsubsystem, 12);
  EXPECT_FALSE(model->actuators_in_trees);
  for (const double theta : {0.0, 0.5}) {
    std::vector<double> reference_qpos, reference_qvel;
    for (const int threads : {1, 4}) {
      Data d(*model);
      StepOptions options;
      options.theta = theta;
      for (int u = 0; u < model->nu; ++u) d.ctrl[u] = 0.3 * std::sin(u);
      int most_limits = 0;
      RunWithThreads(threads, [&] {
        for (int n = 0; n < 300; ++n) {
          ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
          int limits = 0;
          for (const Constraint& c : d.constraints.constraints)
            limits += c.type == ConstraintType::kLimit;
          most_limits = std::max(most_limits, limits);
        }
      });
      EXPECT_GT(most_limits, 0) << "theta " << theta;
      if (threads == 1) {
        reference_qpos = d.qpos;
        reference_qvel = d.qvel;
      } else {
        EXPECT_EQ(d.qpos, reference_qpos) << "theta " << theta;
        EXPECT_EQ(d.qvel, reference_qvel) << "theta " << theta;
      }
    }
  }
}

// A step allocates nothing with tendon rows either: Data and the solvers reserve a block per joint
// of every tendon. SubADMM from its second step on (the first creates the solver), through the
// gripper's closing on the box (contacts and the servo row) and the three-tree limit row appearing
// mid-run; the other solvers, whose sparse factorizations are analysed again when the pattern
// changes, once warm (as SolverBaselinesTest.AWarmStepAllocatesNothing).
TEST(TendonTest, StepsWithTendonRowsAllocateNothing) {
  const ModelImport gripper =
      ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/tendon_gripper.xml");
  ASSERT_TRUE(gripper) << gripper.error;
  const auto three = Load(R"(<mujoco><worldbody>
      <body pos="0 0 1"><joint name="s1" type="slide" axis="0 0 1"/><geom size="0.05"/></body>
      <body pos="1 0 1"><joint name="s2" type="slide" axis="0 0 1"/><geom size="0.05"/></body>
      <body pos="2 0 1"><joint name="s3" type="slide" axis="0 0 1"/><geom size="0.05"/></body>
    </worldbody>
    <tendon><fixed limited="true" range="-0.3 1"><joint joint="s1" coef="1"/>
      <joint joint="s2" coef="1"/><joint joint="s3" coef="2"/></fixed></tendon></mujoco>)");
  for (const SolverType solver : kAllSolvers) {
    const int warm = solver == SolverType::kSubAdmm ? 1 : 150;
    for (const Model* m : {gripper.model.get(), three.get()}) {
      Data d(*m);
      StepOptions options;
      options.solver.type = solver;
      if (m->nu > 0) d.ctrl[0] = 0.05;
      for (int n = 0; n < warm; ++n) ASSERT_EQ(Step(*m, d, options), StepStatus::kOk);
      const testing::AllocationCounter allocations;
      int most_rows = 0;
      for (int n = warm; n < 200; ++n) {
        ASSERT_EQ(Step(*m, d, options), StepStatus::kOk);
        most_rows = std::max(most_rows, d.constraints.num_rows);
      }
      EXPECT_EQ(allocations.count(), 0) << SolverName(solver) << " nu " << m->nu;
      EXPECT_GT(most_rows, 0) << SolverName(solver);
    }
  }
}

}  // namespace
}  // namespace alsim
