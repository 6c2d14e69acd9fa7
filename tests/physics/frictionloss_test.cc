// Dry joint friction (MJCF frictionloss) as a hard bounded row (ConstraintType::kFriction) in every
// solver: the rows BuildConstraints makes, a slider and a wheel against the analytic answers (stuck
// below the friction, accelerating at (tau - f) / I above it, coasting to a stop), and MuJoCo 2.2.2
// as the oracle on a pendulum under a slow torque, on scenes/frictionloss_arm.xml and on a legged
// body dropped onto the floor.
//
// MuJoCo's friction rows are soft: with its default solreffriction/solimpfriction a joint held by
// friction creeps (on the arm scene at about 0.05 rad/s). alsim's row is hard, so the oracle runs
// with the rows made as stiff as MuJoCo allows (HardenFrictionRows): time constant 2 h, where its
// reference acceleration -b J v with b = 1 / (dmax h) asks for the dof to stop within the step as
// alsim's does, and impedance 0.9999, its largest, which leaves a regularization of 1e-4 times the
// row's inverse inertia (a creep of about 1e-4 h times the load's acceleration).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/constraint/build_constraints.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

constexpr double kPi = 3.14159265358979323846;
const SolverType kAllSolvers[] = {SolverType::kSubAdmm,       SolverType::kPgs,
                                  SolverType::kAdmmNoSub,     SolverType::kAdmmNoBody,
                                  SolverType::kCanal,         SolverType::kCanalTrDogleg,
                                  SolverType::kCanalDampedSn, SolverType::kAuto};

std::shared_ptr<const Model> Load(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The scene `xml` with MuJoCo's disable flag for frictionloss set (an option element first inside
// <mujoco>).
std::string WithoutFrictionLoss(const std::string& xml) {
  const size_t tag = xml.find("<mujoco");
  const size_t end = tag == std::string::npos ? tag : xml.find('>', tag);
  if (end == std::string::npos) throw std::runtime_error("no <mujoco> element");
  return xml.substr(0, end + 1) + R"(<option><flag frictionloss="disable"/></option>)" +
         xml.substr(end + 1);
}

// The Table II baselines without their fallback to CANAL, so that their own solves are checked.
StepOptions OptionsOf(SolverType type) {
  StepOptions options;
  options.solver.type = type;
  options.solver.canal.baselines.canal_fallback = false;
  return options;
}

// The same solved to round-off (tolerance 1e-12, up to 1000 iterations), for the analytic checks:
// at the default tolerance an ADMM solver stops with the slipping row's impulse up to 1e-6 from
// its bound, which the velocity keeps from step to step.
StepOptions ConvergedOptionsOf(SolverType type) {
  StepOptions options = OptionsOf(type);
  options.solver.tolerance = 1e-12;
  options.solver.max_iterations = 1000;
  return options;
}

// MuJoCo's friction rows as hard as it allows (see the file comment).
void HardenFrictionRows(mjModel* m) {
  for (int i = 0; i < m->nv; ++i) {
    m->dof_solref[mjNREF * i] = 2 * m->opt.timestep;
    m->dof_solref[mjNREF * i + 1] = 1;
    m->dof_solimp[mjNIMP * i] = mjMAXIMP;
    m->dof_solimp[mjNIMP * i + 1] = mjMAXIMP;
  }
}

// A slider (2 kg along x, frictionloss 1.5 N) and a wheel (hinge about z, I = 0.05 + armature 0.01
// kg m^2, frictionloss 0.3 N m), each driven by a motor; gravity acts on neither dof. Two trees,
// so two islands of one friction row each.
constexpr double kStep = 0.002;
constexpr double kSliderMass = 2.0, kSliderFriction = 1.5;
constexpr double kWheelInertia = 0.06, kWheelFriction = 0.3;
const char* kSliderAndWheel = R"(<mujoco><option timestep="0.002"/><worldbody>
  <body name="slider"><joint name="slide" type="slide" axis="1 0 0" frictionloss="1.5"/>
    <inertial pos="0 0 0" mass="2" diaginertia="0.1 0.1 0.1"/></body>
  <body name="wheel" pos="0 1 0">
    <joint name="hinge" type="hinge" axis="0 0 1" frictionloss="0.3" armature="0.01"/>
    <inertial pos="0 0 0" mass="1" diaginertia="0.03 0.03 0.05"/></body>
</worldbody><actuator><motor joint="slide"/><motor joint="hinge"/></actuator></mujoco>)";

TEST(FrictionLossTest, OneBoxedRowPerDofAfterTheServosWarmStartedByDof) {
  const auto model = Load(kSliderAndWheel);
  Data d(*model);
  d.ctrl = {2.5, -0.1};
  ASSERT_EQ(Step(*model, d, StepOptions{}), StepStatus::kOk);
  const ConstraintSet& set = d.constraints;
  ASSERT_EQ(set.constraints.size(), 2u);
  const double friction[2] = {kSliderFriction, kWheelFriction};
  for (int dof = 0; dof < 2; ++dof) {
    const Constraint& c = set.constraints[dof];
    EXPECT_EQ(c.type, ConstraintType::kFriction);
    EXPECT_EQ(c.key.a, dof);
    EXPECT_EQ(c.dim, 1);
    EXPECT_EQ(c.lambda_lower, -friction[dof] * kStep);
    EXPECT_EQ(c.lambda_upper, friction[dof] * kStep);
    EXPECT_EQ(set.bias[c.row_adr], 0.0);
    ASSERT_EQ(c.block_num, 1);
    EXPECT_EQ(set.blocks[c.block_adr].dof, dof);
    EXPECT_EQ(set.blocks[c.block_adr].dof_coefficient, 1.0);
  }
  // The slider slips (its impulse at the bound opposing the motion), the wheel sticks (its
  // impulse cancels the motor's).
  EXPECT_NEAR(set.lambda[0], -kSliderFriction * kStep, 1e-12);
  EXPECT_NEAR(set.lambda[1], 0.1 * kStep, 1e-9);
  // The next step starts from these impulses (found by key).
  const double saved[2] = {set.lambda[0], set.lambda[1]};
  BuildConstraints(*model, d, StepOptions{}.constraints, kStep);
  EXPECT_EQ(d.constraints.lambda[0], saved[0]);
  EXPECT_EQ(d.constraints.lambda[1], saved[1]);

  // A limit and a servo come first (ConstraintSet's order, which is the keys' order).
  const auto mixed = Load(R"(<mujoco><worldbody><body>
      <joint name="j" type="hinge" frictionloss="0.2" limited="true" range="-0.1 0.1"/>
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body></worldbody>
      <actuator><position joint="j" kp="10"/></actuator></mujoco>)");
  Data dm(*mixed);
  dm.qpos[0] = 0.095;
  ASSERT_EQ(Step(*mixed, dm, StepOptions{}), StepStatus::kOk);
  ASSERT_EQ(dm.constraints.constraints.size(), 3u);
  EXPECT_EQ(dm.constraints.constraints[0].type, ConstraintType::kLimit);
  EXPECT_EQ(dm.constraints.constraints[1].type, ConstraintType::kSoft);
  EXPECT_EQ(dm.constraints.constraints[2].type, ConstraintType::kFriction);
  for (size_t i = 1; i < dm.constraints.constraints.size(); ++i) {
    EXPECT_TRUE(ConstraintKeyLess(dm.constraints.constraints[i - 1].key,
                                  dm.constraints.constraints[i].key));
  }

  // MuJoCo's disable flag removes the rows.
  const auto disabled = Load(WithoutFrictionLoss(kSliderAndWheel));
  Data dd(*disabled);
  dd.ctrl = {2.5, -0.1};
  ASSERT_EQ(Step(*disabled, dd, StepOptions{}), StepStatus::kOk);
  EXPECT_TRUE(dd.constraints.constraints.empty());
  EXPECT_NEAR(dd.qvel[1], -0.1 * kStep / kWheelInertia, 1e-12);
}

// The friction rows' impulses are part of the warm start a state snapshot carries (key kind 4):
// a restored copy steps on bit-identically.
TEST(FrictionLossTest, SnapshotCarriesTheFrictionRowsWarmStart) {
  const auto model = Load(kSliderAndWheel);
  Data d(*model);
  d.ctrl = {1.0, 0.5};
  for (int n = 0; n < 10; ++n) ASSERT_EQ(Step(*model, d, StepOptions{}), StepStatus::kOk);
  ASSERT_EQ(d.warm_start.key.size(), 2u);
  EXPECT_NE(d.warm_start.impulse[0][0], 0.0);
  Data copy(*model);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(*model, SaveStateSnapshot(*model, d), copy, &error)) << error;
  for (int n = 0; n < 10; ++n) {
    ASSERT_EQ(Step(*model, d, StepOptions{}), StepStatus::kOk);
    ASSERT_EQ(Step(*model, copy, StepOptions{}), StepStatus::kOk);
  }
  EXPECT_EQ(copy.qpos, d.qpos);
  EXPECT_EQ(copy.qvel, d.qvel);
}

// Below its friction a dof driven by a constant force stays where it is (v = 0 every step); above
// it, it accelerates at (tau - f sign(tau)) / I, exactly the symplectic Euler steps
// v_n = n h a, q_n = h^2 a n (n + 1) / 2.
TEST(FrictionLossTest, StaysStillBelowItsFrictionAndAcceleratesAtTheNetForceAbove) {
  const auto model = Load(kSliderAndWheel);
  const int steps = 500;  // 1 s
  for (const SolverType type : kAllSolvers) {
    for (const double sign : {1.0, -1.0}) {
      // Below: 2/3 and 1/3 of the friction.
      Data d(*model);
      d.ctrl = {sign * 1.0, sign * 0.1};
      double largest_speed = 0;
      for (int n = 0; n < steps; ++n) {
        ASSERT_EQ(Step(*model, d, ConvergedOptionsOf(type)), StepStatus::kOk) << SolverName(type);
        largest_speed = std::max({largest_speed, std::abs(d.qvel[0]), std::abs(d.qvel[1])});
      }
      EXPECT_LT(largest_speed, 1e-9) << SolverName(type);
      EXPECT_LT(std::abs(d.qpos[0]), 1e-9) << SolverName(type);
      EXPECT_LT(std::abs(d.qpos[1]), 1e-9) << SolverName(type);
      // The Sec. VII residual of the final impulses, with the box projection as T.
      EXPECT_LT(d.solver_statistics.contact_residual, 1e-12) << SolverName(type);

      // Above: 5/3 of the friction.
      Data a(*model);
      const double force = sign * 2.5, torque = sign * 0.5;
      a.ctrl = {force, torque};
      for (int n = 0; n < steps; ++n) {
        ASSERT_EQ(Step(*model, a, ConvergedOptionsOf(type)), StepStatus::kOk) << SolverName(type);
      }
      EXPECT_LT(a.solver_statistics.contact_residual, 1e-12) << SolverName(type);
      const double slider_acceleration = (force - sign * kSliderFriction) / kSliderMass;
      const double wheel_acceleration = (torque - sign * kWheelFriction) / kWheelInertia;
      const double n = steps;
      EXPECT_NEAR(a.qvel[0], n * kStep * slider_acceleration, 1e-9) << SolverName(type);
      EXPECT_NEAR(a.qvel[1], n * kStep * wheel_acceleration, 1e-9) << SolverName(type);
      EXPECT_NEAR(a.qpos[0], kStep * kStep * slider_acceleration * n * (n + 1) / 2, 1e-9)
          << SolverName(type);
      EXPECT_NEAR(a.qpos[1], kStep * kStep * wheel_acceleration * n * (n + 1) / 2, 1e-9)
          << SolverName(type);
    }
  }
}

// Unforced, a moving dof decelerates at f / I and stops for good (friction never reverses it):
// v_n = v_0 - n h a until the step that would cross zero, which ends at rest.
TEST(FrictionLossTest, CoastsToAStopAndStays) {
  const auto model = Load(kSliderAndWheel);
  const double v0[2] = {1.0, -2.0};
  const double deceleration[2] = {kSliderFriction / kSliderMass, kWheelFriction / kWheelInertia};
  double expected_q[2] = {0, 0};
  int stop_step[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const double speed = std::abs(v0[i]);
    for (int n = 1; speed - n * kStep * deceleration[i] > 0; ++n) {
      expected_q[i] += std::copysign(kStep * (speed - n * kStep * deceleration[i]), v0[i]);
      stop_step[i] = n + 1;
    }
  }
  ASSERT_GT(stop_step[0], 100);  // 1.33 s
  ASSERT_GT(stop_step[1], 100);  // 0.4 s
  for (const SolverType type : kAllSolvers) {
    Data d(*model);
    d.qvel[0] = v0[0];
    d.qvel[1] = v0[1];
    for (int n = 1; n <= 1000; ++n) {
      ASSERT_EQ(Step(*model, d, ConvergedOptionsOf(type)), StepStatus::kOk) << SolverName(type);
      for (int i = 0; i < 2; ++i) {
        const double expected =
            n < stop_step[i] ? v0[i] - std::copysign(n * kStep * deceleration[i], v0[i]) : 0.0;
        ASSERT_NEAR(d.qvel[i], expected, 1e-7) << SolverName(type) << " dof " << i << " step " << n;
      }
    }
    EXPECT_NEAR(d.qpos[0], expected_q[0], 1e-7) << SolverName(type);
    EXPECT_NEAR(d.qpos[1], expected_q[1], 1e-7) << SolverName(type);
  }
}

// ---- MuJoCo 2.2.2 as the oracle -----------------------------------------------------------------

// The qpos of every step of `steps` in MuJoCo (friction rows hardened) and in alsim, with ctrl(t,
// u) from `control` set before each step.
using Trajectory = std::vector<std::vector<double>>;

template <class Control>
Trajectory MujocoTrajectory(const std::string& path, int steps, const Control& control) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  if (m == nullptr) throw std::runtime_error(error);
  HardenFrictionRows(m);
  mjData* d = mj_makeData(m);
  Trajectory trajectory;
  for (int n = 0; n < steps; ++n) {
    for (int u = 0; u < m->nu; ++u) d->ctrl[u] = control(d->time, u);
    mj_step(m, d);
    trajectory.emplace_back(d->qpos, d->qpos + m->nq);
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return trajectory;
}

template <class Control>
Trajectory AlsimTrajectory(const Model& model, const StepOptions& options, int steps,
                           const Control& control) {
  Data d(model);
  Trajectory trajectory;
  for (int n = 0; n < steps; ++n) {
    for (int u = 0; u < model.nu; ++u) d.ctrl[u] = control(d.time, u);
    if (Step(model, d, options) != StepStatus::kOk) {
      ADD_FAILURE() << SolverName(options.solver.type) << " step " << n;
      break;
    }
    trajectory.push_back(d.qpos);
  }
  return trajectory;
}

// The largest difference of any qpos entry at any step.
double LargestDifference(const Trajectory& a, const Trajectory& b) {
  double largest = 0;
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  for (size_t n = 0; n < a.size(); ++n) {
    for (size_t i = 0; i < a[n].size(); ++i)
      largest = std::max(largest, std::abs(a[n][i] - b[n][i]));
  }
  return largest;
}

// A 1 kg rod on a hinge about y (a pendulum, 0.4 m, starting horizontal) with frictionloss 1.9 N m
// under gravity (up to 1.96 N m) and a slow sinusoidal motor torque of 2.5 N m amplitude at 0.25
// Hz: it falls, then sticks while gravity and the motor together stay below the friction and slips
// otherwise, back and forth, many times in 6 s.
const char* kPendulum = R"(<mujoco><option timestep="0.002"/><worldbody>
  <body name="rod" pos="0 0 1"><joint name="hinge" type="hinge" axis="0 1 0" frictionloss="1.9"/>
    <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
  </body></worldbody><actuator><motor joint="hinge"/></actuator></mujoco>)";

TEST(FrictionLossTest, PendulumUnderASlowTorqueFollowsMujoco) {
  const std::string path = testing::WriteTempScene("frictionloss_pendulum.xml", kPendulum);
  const int steps = 3000;  // 6 s
  const auto torque = [](double t, int) { return 2.5 * std::sin(2 * kPi * 0.25 * t); };
  const Trajectory oracle = MujocoTrajectory(path, steps, torque);
  // The oracle sticks for a good share of the run (steps where the angle does not change) and
  // slips far in between.
  int stuck = 0;
  double swing = 0;
  for (int n = 1; n < steps; ++n) {
    stuck += std::abs(oracle[n][0] - oracle[n - 1][0]) < 1e-6;
    swing = std::max(swing, std::abs(oracle[n][0]));
  }
  EXPECT_GT(stuck, steps / 5);
  EXPECT_LT(stuck, steps * 4 / 5);
  EXPECT_GT(swing, 0.5);
  std::printf("[ pendulum ] MuJoCo: %d of %d steps stuck, largest angle %.3f rad\n", stuck, steps,
              swing);
  const auto model = Load(kPendulum);
  for (const SolverType type : kAllSolvers) {
    const double difference =
        LargestDifference(AlsimTrajectory(*model, OptionsOf(type), steps, torque), oracle);
    // Tolerance: MuJoCo's rows keep a regularization of 1e-4 times the inverse inertia (a creep of
    // 1e-4 h times the load's acceleration while stuck, below 1e-5 rad/s here) and the ADMM
    // solvers stop at a velocity error of 1e-6 rad/s, each worth 1e-5 rad or less over 6 s; a
    // stick-slip switch one step apart would cost h^2 a = 2e-4 rad (a up to 48 rad/s^2).
    EXPECT_LT(difference, 5e-4) << SolverName(type);
    std::printf("[ pendulum ] %-15s largest |q - q_mujoco| %.2e rad\n", SolverName(type),
                difference);
  }
  // Without its friction rows alsim's rod swings elsewhere: the comparison can tell.
  const auto frictionless = Load(WithoutFrictionLoss(kPendulum));
  EXPECT_GT(LargestDifference(AlsimTrajectory(*frictionless, StepOptions{}, steps, torque), oracle),
            0.3);
}

const auto kNoControl = [](double, int) { return 0.0; };

// The Newton baselines of Table II (canal-trdogleg, canal-dampedsn) are ablations whose plain
// semismooth Newton on the merit ||r||^2 stalls at kinks: with the box rows' two kinks 2 f h / beta
// apart in J v (1e-6 rad/s at beta = 1e4) TRDogleg reaches its 50-step cap on most steps of the arm
// (it matches MuJoCo with a cap of 500), and DampedSN's backtracking fails on a few steps (inner
// residual 5e-3 on the arm), each leaving that step's impulses off. The scene checks run them with
// the cap raised (TRDogleg) or not at all (DampedSN); their rows are checked on one-row problems
// above. PGS does not converge at the legged body's impact even without frictionloss (Sec. VII
// residual about 1 after 1000 sweeps), so it is not held to that check.
StepOptions SceneOptionsOf(SolverType type) {
  StepOptions options = OptionsOf(type);
  if (type == SolverType::kCanalTrDogleg) options.solver.canal.max_newton_steps = 500;
  return options;
}

// scenes/frictionloss_arm.xml released from its horizontal pose: the shoulder and the elbow slip,
// the wrist and the hand hold, and the arm comes to rest within 2 s. The solvers end at MuJoCo's
// rest pose; without friction the arm would still be swinging.
TEST(FrictionLossTest, ArmSceneComesToRestAtMujocosPose) {
  const std::string path = std::string(ALSIM_SCENES_DIR) + "/frictionloss_arm.xml";
  const ModelImport imported = ImportModelFromFile(path);
  ASSERT_TRUE(imported) << imported.error;
  const Model& model = *imported.model;
  ASSERT_EQ(model.nv, 4);
  EXPECT_EQ(model.dof_frictionloss, (std::vector<double>{10, 4, 3, 1}));
  const int steps = 960;  // 4 s at 240 Hz
  const std::vector<double> oracle = MujocoTrajectory(path, steps, kNoControl).back();
  EXPECT_GT(oracle[0], 0.5);  // the shoulder and the elbow fell
  EXPECT_GT(oracle[1], 0.5);
  EXPECT_LT(std::abs(oracle[2]), 1e-3);  // the wrist and the hand held
  EXPECT_LT(std::abs(oracle[3]), 1e-3);
  for (const SolverType type :
       {SolverType::kSubAdmm, SolverType::kPgs, SolverType::kAdmmNoSub, SolverType::kAdmmNoBody,
        SolverType::kCanal, SolverType::kCanalTrDogleg, SolverType::kAuto}) {
    const Trajectory run = AlsimTrajectory(model, SceneOptionsOf(type), steps, kNoControl);
    ASSERT_EQ(run.size(), static_cast<size_t>(steps));
    double difference = 0, motion = 0;
    for (int i = 0; i < model.nq; ++i) {
      difference = std::max(difference, std::abs(run.back()[i] - oracle[i]));
      motion =
          std::max(motion, std::abs(run.back()[i] - run[steps - 240][i]));  // over the last 1 s
    }
    // Tolerance: the rest pose is where the slipping stopped, so the small differences of the
    // trajectory (MuJoCo's 1e-4 regularization, the solvers' 1e-6 rad/s) pass into it; measured
    // 1e-4 rad. Without friction the arm is 0.3 rad or more away.
    EXPECT_LT(difference, 1e-3) << SolverName(type);
    EXPECT_LT(motion, 1e-6) << SolverName(type) << ": at rest";
    std::printf("[ arm ] %-15s final pose %.4f %.4f %.4f %.4f, largest |q - q_mujoco| %.2e rad\n",
                SolverName(type), run.back()[0], run.back()[1], run.back()[2], run.back()[3],
                difference);
  }
  const auto frictionless = Load(WithoutFrictionLoss(ReadFile(path)));
  const Trajectory swinging = AlsimTrajectory(*frictionless, StepOptions{}, steps, kNoControl);
  EXPECT_GT(std::abs(swinging.back()[0] - oracle[0]) + std::abs(swinging.back()[1] - oracle[1]),
            0.3);
}

// The issue's quadruped check on a small legged body: a 6 kg trunk on four two-hinge legs (0.2 m
// thigh and shank, knees bent by 1 rad, frictionloss 4 N m on every hinge, no actuators) dropped
// 3 cm onto the floor. Its joints slip at the impact and then hold it up; the trunk comes to rest
// at MuJoCo's height. Without frictionloss it folds onto the floor.
const char* kLeggedBody = R"(<mujoco><option timestep="0.002" cone="elliptic"/>
  <default><joint type="hinge" axis="0 1 0" frictionloss="4"/>
    <geom friction="1 0.005 0.0001"/></default>
  <worldbody><geom name="floor" type="plane" size="3 3 0.1"/>
    <body name="trunk" pos="0 0 0.40"><freejoint/><geom type="box" size="0.2 0.1 0.03" mass="6"/>
      <body pos="0.2 0.13 0" euler="0 28.6479 0"><joint/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.5"/>
        <body pos="0 0 -0.2" euler="0 -57.2958 0"><joint/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.3"/></body></body>
      <body pos="0.2 -0.13 0" euler="0 28.6479 0"><joint/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.5"/>
        <body pos="0 0 -0.2" euler="0 -57.2958 0"><joint/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.3"/></body></body>
      <body pos="-0.2 0.13 0" euler="0 28.6479 0"><joint/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.5"/>
        <body pos="0 0 -0.2" euler="0 -57.2958 0"><joint/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.3"/></body></body>
      <body pos="-0.2 -0.13 0" euler="0 28.6479 0"><joint/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.5"/>
        <body pos="0 0 -0.2" euler="0 -57.2958 0"><joint/>
          <geom type="capsule" fromto="0 0 0 0 0 -0.2" size="0.02" mass="0.3"/></body></body>
    </body></worldbody></mujoco>)";

TEST(FrictionLossTest, LeggedBodyRestsAtMujocosHeight) {
  const std::string path = testing::WriteTempScene("frictionloss_legged.xml", kLeggedBody);
  const int steps = 1500;  // 3 s
  const double oracle_height = MujocoTrajectory(path, steps, kNoControl).back()[2];
  EXPECT_GT(oracle_height, 0.3);  // standing: 0.371 m before the drop's slip
  const auto model = Load(kLeggedBody);
  for (const SolverType type : {SolverType::kSubAdmm, SolverType::kAdmmNoSub,
                                SolverType::kAdmmNoBody, SolverType::kCanal, SolverType::kAuto}) {
    const Trajectory run = AlsimTrajectory(*model, SceneOptionsOf(type), steps, kNoControl);
    ASSERT_EQ(run.size(), static_cast<size_t>(steps));
    const double height = run.back()[2];
    // Tolerance: MuJoCo's soft contacts let the feet sink into the floor and absorb part
    // of the impact that alsim's hard contacts leave to the joints; 2 mm covers both (measured
    // 0.8 mm). Without frictionloss the trunk ends on the floor, 0.33 m lower.
    EXPECT_NEAR(height, oracle_height, 2e-3) << SolverName(type);
    EXPECT_LT(std::abs(height - run[steps - 250][2]), 1e-4) << SolverName(type) << ": at rest";
    std::printf("[ legged ] %-15s trunk height %.4f m (MuJoCo %.4f m)\n", SolverName(type), height,
                oracle_height);
  }
  const auto frictionless = Load(WithoutFrictionLoss(kLeggedBody));
  EXPECT_LT(AlsimTrajectory(*frictionless, StepOptions{}, steps, kNoControl).back()[2], 0.1);
}

}  // namespace
}  // namespace alsim
