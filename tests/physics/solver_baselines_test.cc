// The baseline solvers (PGS, ADMM "No Sub", ADMM "No Body") next to SubADMM: analytic stick and
// slip of a box, the same v_hat from every solver on scenes with a unique solution, the Sec. VII
// residual at convergence, determinism across thread counts, and no allocation once warm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include "engine/core/parallel.h"

#include "engine/linalg/tree_sparse_layout.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/admm/admm_penalty.h"
#include "engine/solver/admm_baselines/admm_nobody_solver.h"
#include "engine/solver/admm_baselines/admm_nosub_solver.h"
#include "engine/solver/island_schedule.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/solver.h"
#include "tests/solver/canal_scenes.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using canal_scenes::BoxOnIncline;
using canal_scenes::kGravity;
using canal_scenes::kPi;
using canal_scenes::kStep;
using canal_scenes::Load;

constexpr SolverType kAllSolvers[] = {SolverType::kSubAdmm, SolverType::kPgs,
                                      SolverType::kAdmmNoSub, SolverType::kAdmmNoBody};

// Converged solves: tight tolerance, generous iteration cap.
StepOptions Tight(SolverType type, int max_iterations = 2000) {
  StepOptions options;
  options.solver.type = type;
  options.solver.tolerance = 1e-12;
  options.solver.max_iterations = max_iterations;
  return options;
}

struct BoxStep {
  Vec3 velocity;          // COM velocity after the step, world
  Vec3 angular_velocity;  // body frame
  double normal_impulse = 0;
  double friction_impulse = 0;  // |sum of the tangential impulses|, world
  int contacts = 0;
  SolverStatistics stats;
};

BoxStep StepBoxFromRest(double degrees, double mu, SolverType type) {
  const auto model = Load(BoxOnIncline(degrees, mu));
  Data d(*model);
  EXPECT_EQ(Step(*model, d, Tight(type)), StepStatus::kOk) << SolverName(type);
  BoxStep result;
  result.velocity = Vec3(d.qvel[0], d.qvel[1], d.qvel[2]);
  result.angular_velocity = Vec3(d.qvel[3], d.qvel[4], d.qvel[5]);
  Vec3 friction = Vec3::Zero();
  for (const Constraint& c : d.constraints.constraints) {
    const double* lambda = d.constraints.lambda.data() + c.row_adr;
    const Mat3& frame = d.contact[c.contact].frame;
    result.normal_impulse += lambda[0];
    friction += frame.col(1) * lambda[1] + frame.col(2) * lambda[2];
  }
  result.friction_impulse = friction.norm();
  result.contacts = d.constraints.num_contacts;
  result.stats = d.solver_statistics;
  return result;
}

// ---- analytic stick and slip (digest section 11, tests 11 and 12) ---------------------------

TEST(SolverBaselinesTest, BoxOnAPlaneStaysAtRest) {
  for (const SolverType type : kAllSolvers) {
    const BoxStep step = StepBoxFromRest(0, 0.8, type);
    EXPECT_EQ(step.contacts, 4) << SolverName(type);
    EXPECT_LT(step.velocity.norm(), 1e-6) << SolverName(type);
    EXPECT_LT(step.angular_velocity.norm(), 1e-6) << SolverName(type);
    EXPECT_NEAR(step.normal_impulse, kGravity * kStep, 1e-9) << SolverName(type);
    EXPECT_LT(step.friction_impulse, 1e-9) << SolverName(type);
  }
}

TEST(SolverBaselinesTest, BoxSticksOnAThirtyDegreeInclineWithFrictionPointEight) {
  // mu = 0.8 > tan 30 = 0.577: friction holds the box; the impulses balance m g h.
  for (const SolverType type : kAllSolvers) {
    const BoxStep step = StepBoxFromRest(30, 0.8, type);
    EXPECT_EQ(step.contacts, 4) << SolverName(type);
    EXPECT_LT(step.velocity.norm(), 1e-6) << SolverName(type);
    EXPECT_LT(step.angular_velocity.norm(), 1e-6) << SolverName(type);
    EXPECT_NEAR(step.normal_impulse, kGravity * std::cos(kPi / 6) * kStep, 1e-9)
        << SolverName(type);
    EXPECT_NEAR(step.friction_impulse, kGravity * std::sin(kPi / 6) * kStep, 1e-9)
        << SolverName(type);
  }
}

TEST(SolverBaselinesTest, BoxSlidesOnAThirtyDegreeInclineWithFrictionPointThree) {
  // mu = 0.3 < tan 30: after one step from rest the speed down the incline is
  // h g (sin 30 - mu cos 30) = 0.0098177 m/s, the normal impulse m g cos 30 h and the friction
  // impulse mu times it.
  const double mu = 0.3;
  const double expected_speed = kStep * kGravity * (std::sin(kPi / 6) - mu * std::cos(kPi / 6));
  EXPECT_NEAR(expected_speed, 0.0098179, 1e-7);  // the digest's 0.0098177 is truncated
  const Vec3 downhill(std::cos(kPi / 6), 0, -std::sin(kPi / 6));
  for (const SolverType type : kAllSolvers) {
    const BoxStep step = StepBoxFromRest(30, mu, type);
    EXPECT_EQ(step.contacts, 4) << SolverName(type);
    EXPECT_NEAR(step.velocity.dot(downhill), expected_speed, 1e-6) << SolverName(type);
    EXPECT_LT((step.velocity - downhill * step.velocity.dot(downhill)).norm(), 1e-6)
        << SolverName(type);
    EXPECT_NEAR(step.normal_impulse, kGravity * std::cos(kPi / 6) * kStep, 1e-8)
        << SolverName(type);
    EXPECT_NEAR(step.friction_impulse, mu * step.normal_impulse, 1e-8) << SolverName(type);
    std::printf("[ slip     ] %-12s speed %.10f m/s (expected %.10f), %d iterations\n",
                SolverName(type), step.velocity.dot(downhill), expected_speed,
                step.stats.max_iterations);
  }
}

// A 5 kg tripod (a plate on three sphere feet) standing on a light one (0.1 kg plate) on the
// floor at (x, y): the digest's hard mass ratio (heavy over light, 11.14 and 6.6), with three
// point contacts per interface instead of four coplanar ones, whose sliding velocities are not
// unique.
std::string TripodStackBodies(double x, double y) {
  char text[1400];
  std::snprintf(text, sizeof(text), R"(
    <body pos="%.17g %.17g 0.15"><freejoint/>
      <geom type="box" size="0.3 0.3 0.05" mass="0.1"/>
      <geom type="sphere" size="0.05" pos="0.2 0 -0.1" mass="0.01"/>
      <geom type="sphere" size="0.05" pos="-0.1 0.17 -0.1" mass="0.01"/>
      <geom type="sphere" size="0.05" pos="-0.1 -0.17 -0.1" mass="0.01"/>
    </body>
    <body pos="%.17g %.17g 0.29"><freejoint/>
      <geom type="box" size="0.15 0.15 0.03" mass="5"/>
      <geom type="sphere" size="0.03" pos="0.1 0 -0.06" mass="0.01"/>
      <geom type="sphere" size="0.03" pos="-0.05 0.09 -0.06" mass="0.01"/>
      <geom type="sphere" size="0.03" pos="-0.05 -0.09 -0.06" mass="0.01"/>
    </body>)",
                x, y, x + 0.02, y - 0.03);
  return text;
}

const std::string kTripodStack = R"(<mujoco><option timestep="0.0041666666666666667"/>
  <default><geom friction="0.5 0.005 0.0001" condim="3"/></default>
  <worldbody><geom type="plane" size="5 5 0.1"/>)" +
                                 TripodStackBodies(0, 0) + "</worldbody></mujoco>";

// A three-link arm hanging from the world (one subsystem of 3 hinges): the first joint rests
// against its upper limit (a hard joint-space row), PD servos hold the other two (soft rows), the
// third link's tip presses on the first link (a contact between two bodies of one subsystem, so
// their paths share dofs) and a free ball lies on the first link (a contact between subsystems).
const char kArm[] = R"(<mujoco><compiler angle="degree"/><option timestep="0.0041666666666666667"/>
  <default><geom friction="0.6 0.005 0.0001" condim="3"/></default>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="hinge" axis="0 1 0" range="-30 0.2" limited="true"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
      <body name="fore" pos="0.5 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04" mass="0.5"/>
        <body name="hand" pos="0 0 -0.4">
          <joint name="wrist" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 -0.3 0 0.3" size="0.02" mass="0.2"/>
          <geom type="sphere" pos="-0.3 0 0.3" size="0.06" mass="0.1"/>
        </body>
      </body>
    </body>
    <body name="ball" pos="0.3 0 1.15"><freejoint/><geom type="sphere" size="0.1" mass="0.3"/></body>
  </worldbody>
  <actuator>
    <general joint="elbow" gainprm="40" biasprm="0 -40 -2" biastype="affine"/>
    <general joint="wrist" gainprm="20" biasprm="0 -20 -1" biastype="affine"/>
  </actuator></mujoco>)";

struct SolverRun {
  std::vector<double> v_hat;
  SolverStatistics stats;
};

// One converged step of `type` from (qpos, qvel) in a fresh Data (no warm start).
SolverRun StepOnce(const Model& model, const std::vector<double>& qpos,
                   const std::vector<double>& qvel, SolverType type) {
  Data d(model);
  d.qpos = qpos;
  d.qvel = qvel;
  EXPECT_EQ(Step(model, d, Tight(type, 20000)), StepStatus::kOk) << SolverName(type);
  return {d.v_hat, d.solver_statistics};
}

double MaxDifference(const std::vector<double>& a, const std::vector<double>& b) {
  double largest = 0;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::abs(a[i] - b[i]));
  return largest;
}

// Every solver, converged, gives SubADMM's v_hat within 1e-8 and a Sec. VII residual below 1e-8.
void ExpectSameSolution(const Model& model, const std::vector<double>& qvel, int min_constraints) {
  const Data initial(model);
  const SolverRun reference = StepOnce(model, initial.qpos, qvel, SolverType::kSubAdmm);
  EXPECT_GE(reference.stats.constraints, min_constraints);
  double speed = 0;
  for (const double v : reference.v_hat) speed = std::max(speed, std::abs(v));
  EXPECT_GT(speed, 0.05);  // the scene moves: friction and servos do work
  for (const SolverType type : kAllSolvers) {
    const SolverRun run = StepOnce(model, initial.qpos, qvel, type);
    const double difference = MaxDifference(run.v_hat, reference.v_hat);
    EXPECT_LT(difference, 1e-8) << SolverName(type);
    EXPECT_LT(run.stats.contact_residual, 1e-8) << SolverName(type);
    EXPECT_EQ(run.stats.constraints, reference.stats.constraints) << SolverName(type);
    std::printf("[ same     ] %-12s |v_hat - subadmm| %.2e, residual %.2e, %d iterations\n",
                SolverName(type), difference, run.stats.contact_residual, run.stats.max_iterations);
  }
}

TEST(SolverBaselinesTest, AllSolversAgreeOnATripodStack) {
  const auto model = Load(kTripodStack);
  // Both tripods slide and spin: the lower one over the floor, the upper one over the lower one.
  std::vector<double> qvel(model->nv, 0.0);
  const double lower[6] = {0.3, 0.1, -0.05, 0.0, 0.0, 0.5};
  const double upper[6] = {-0.2, 0.3, 0.0, 0.1, -0.1, 1.0};
  std::copy(lower, lower + 6, qvel.begin());
  std::copy(upper, upper + 6, qvel.begin() + 6);
  ExpectSameSolution(*model, qvel, 6);
}

TEST(SolverBaselinesTest, AllSolversAgreeOnAnArmWithLimitServosAndSelfContact) {
  const auto model = Load(kArm);
  std::vector<double> qvel(model->nv, 0.0);
  qvel[1] = 0.5;   // elbow
  qvel[2] = -0.3;  // wrist
  const double ball[6] = {0.2, 0.1, -0.3, 0.5, 0.0, 0.0};
  std::copy(ball, ball + 6, qvel.begin() + 3);
  ExpectSameSolution(*model, qvel, 5);
}

// ---- penalty scaling and over-relaxation ----------------------------------------------------

// Over-relaxation, the per-constraint penalties and Anderson acceleration change the path, not
// the answer: converged SubADMM gives the same v_hat with the paper's settings (alpha = 1, one
// beta, no acceleration) and with alsim's.
// A 10 g lever on one hinge whose axis (0.3, 1, 0.2) is oblique to the world's, dropped 1 mm
// onto the floor by its tip (friction 1): the tip can move along one direction u only, so the
// contact's W_ii = w u u^T is rank one along a direction oblique to its frame. PGS stepped the
// contact's three rows from one velocity (D = diag(W_nn, w_t, w_t), w_t the tangents' mean
// diagonal), whose iteration matrix I - D^-1 W_ii has the eigenvalue -2: the impulse jumped
// between two states until the sweep cap and the lever swung through the floor; so did condim 4
// and 6 contacts, whose step was the same with more rows. With the normal row first and the
// friction rows' step scaled to a majorizer of W_ff (pgs_solver.cc) it rests where SubADMM puts
// it.
TEST(SolverBaselinesTest, PgsHoldsALightLeverOnAnObliqueHinge) {
  for (const int condim : {3, 4, 6}) {
    const std::string condim_text = std::to_string(condim);
    const auto model = Load(R"(<mujoco><option timestep="0.002"/><worldbody>
        <geom type="plane" size="5 5 0.1"/>
        <body pos="0 0 0.311"><joint axis="0.3 1 0.2"/>
          <geom type="capsule" fromto="0 0 0 0.3 0 -0.3" size="0.01" mass="0.01" condim=")" +
                            condim_text + R"(" friction="1 0.005 0.0001"/></body>
      </worldbody></mujoco>)");
    const Model& m = *model;
    double rest_angle[2] = {0, 0};
    for (const SolverType type : {SolverType::kSubAdmm, SolverType::kPgs}) {
      SCOPED_TRACE(std::string(SolverName(type)) + ", condim " + condim_text);
      Data d(m);
      StepOptions options;
      options.solver.type = type;
      double fastest = 0;  // over the last 250 steps (0.5 s)
      for (int step = 0; step < 500; ++step) {
        ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
        if (step >= 250) fastest = std::max(fastest, std::abs(d.qvel[0]));
      }
      EXPECT_EQ(d.constraints.num_contacts, 1);
      EXPECT_LT(fastest, 1e-5) << "at rest";
      rest_angle[type == SolverType::kPgs] = d.qpos[0];
      std::printf("[ lever ] condim %d %-8s hinge %.6f rad, fastest %.1e rad/s in the last 0.5 s\n",
                  condim, SolverName(type), d.qpos[0], fastest);
    }
    // The rest angle is where the 1 mm fall stopped: within the solvers' tolerances.
    EXPECT_NEAR(rest_angle[1], rest_angle[0], 1e-4) << "condim " << condim;
  }
}

TEST(SolverBaselinesTest, RelaxationPenaltyScalingAndAccelerationKeepTheSolution) {
  const auto model = Load(kArm);
  std::vector<double> qvel(model->nv, 0.0);
  qvel[1] = 0.5;
  qvel[2] = -0.3;
  const double ball[6] = {0.2, 0.1, -0.3, 0.5, 0.0, 0.0};
  std::copy(ball, ball + 6, qvel.begin() + 3);
  std::vector<double> reference;
  for (const double relaxation : {1.0, 1.6}) {
    for (const PenaltyScaling scaling :
         {PenaltyScaling::kPseudoDensity, PenaltyScaling::kDelassus}) {
      for (const int anderson : {0, 5}) {
        Data d(*model);
        d.qvel = qvel;
        StepOptions options = Tight(SolverType::kSubAdmm, 20000);
        options.solver.admm.relaxation = relaxation;
        options.solver.admm.penalty_scaling = scaling;
        options.solver.subadmm.anderson_memory = anderson;
        ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
        EXPECT_GE(d.solver_statistics.constraints, 5);
        EXPECT_LT(d.solver_statistics.contact_residual, 1e-8) << relaxation;
        if (reference.empty()) reference = d.v_hat;
        EXPECT_LT(MaxDifference(d.v_hat, reference), 1e-8)
            << "relaxation " << relaxation << ", " << PenaltyScalingName(scaling) << ", anderson "
            << anderson;
      }
    }
  }
}

// An island that is one articulated tree alone has its own Anderson schedule (an extrapolation
// after every iteration from iteration 3, subadmm_solver.cc). On MuJoCo's humanoid lying on the
// floor (one tree, one island), converged SubADMM gives the same v_hat with and without the
// acceleration, in fewer iterations with it.
TEST(SolverBaselinesTest, AndersonOnALoneTreeKeepsTheSolution) {
  const ModelImport imported =
      ImportModelFromFile(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  ASSERT_EQ(m.nsubsystem, 1);
  Data settled(m);
  for (int k = 0; k < 700; ++k) ASSERT_EQ(Step(m, settled), StepStatus::kOk);
  const std::string snapshot = SaveStateSnapshot(m, settled);
  std::vector<double> v_hat[2];
  int iterations[2] = {};
  for (const int memory : {0, 5}) {
    Data d(m);
    std::string error;
    ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, d, &error)) << error;
    StepOptions options = Tight(SolverType::kSubAdmm, 20000);
    options.solver.subadmm.anderson_memory = memory;
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    ASSERT_EQ(d.islands.num, 1);
    EXPECT_GE(d.solver_statistics.contacts, 4);
    EXPECT_LT(d.solver_statistics.contact_residual, 1e-8) << "anderson " << memory;
    v_hat[memory > 0] = d.v_hat;
    iterations[memory > 0] = d.solver_statistics.max_iterations;
  }
  EXPECT_LT(MaxDifference(v_hat[1], v_hat[0]), 1e-8);
  EXPECT_LT(iterations[1], iterations[0]);
  std::printf("[ lone tree ] iterations to 1e-12: plain %d, Anderson %d\n", iterations[0],
              iterations[1]);
}

// The constraint-space response (SolverOptions::response_after_iterations) runs the same
// iteration as the tree solve of eq. (34): eight quadrupeds standing on their servos (each tree
// 12 servo rows and its feet's contacts), one step at Table III's fixed 100 iterations with
// Anderson acceleration off, from the same state, switched after 8 iterations and never. The
// two differ only by rounding; a wrong response matrix or free velocity would move the impulses
// at the first iteration after the switch and everything after it.
TEST(SolverBaselinesTest, ResponseStepKeepsTheIterates) {
  const ModelImport imported =
      ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/quadruped_drop_8.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data settled(m);
  for (int k = 0; k < 200; ++k) ASSERT_EQ(Step(m, settled), StepStatus::kOk);
  const std::string snapshot = SaveStateSnapshot(m, settled);
  std::vector<double> v_hat[2], lambda[2];
  for (const int after : {0, 8}) {
    Data d(m);
    std::string error;
    ASSERT_TRUE(RestoreStateSnapshot(m, snapshot, d, &error)) << error;
    StepOptions options;
    options.solver.max_iterations = 100;
    options.solver.tolerance = 0;
    options.solver.subadmm.anderson_memory = 0;
    options.solver.subadmm.response_after_iterations = after;
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
    ASSERT_EQ(d.islands.num, 8);
    EXPECT_EQ(d.solver_statistics.max_iterations, 100);
    EXPECT_GE(d.solver_statistics.contacts, 16);  // every robot on its feet
    v_hat[after > 0] = d.v_hat;
    lambda[after > 0] = d.constraints.lambda;
  }
  ASSERT_EQ(lambda[0].size(), lambda[1].size());
  EXPECT_LT(MaxDifference(v_hat[1], v_hat[0]), 1e-9);
  EXPECT_LT(MaxDifference(lambda[1], lambda[0]), 1e-9);
  EXPECT_NE(v_hat[1], v_hat[0]) << "the response path did not run: the results are bit-identical";
}

// SolverOptions::delassus_refresh_steps: constraints among trees keep the Delassus trace they
// inherit with the warm start until it is that many steps old. Eight quadrupeds standing on their
// feet and servos for 200 steps: the kept traces are within 15% of traces computed afresh at
// the current configuration (8% at most when written); with a refresh every step every trace is
// fresh (age 0); and the solves need as many iterations either way (within 3%). A trace taken
// from another constraint, or never renewed, is off by far more.
TEST(SolverBaselinesTest, KeptDelassusTracesStayCloseToFreshOnes) {
  const ModelImport imported =
      ImportModelFromFile(std::string(ALSIM_SCENES_DIR) + "/quadruped_drop_8.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  double iterations[2] = {0, 0};
  for (const int refresh : {1, 16}) {
    Data d(m);
    StepOptions options;
    options.solver.subadmm.delassus_refresh_steps = refresh;
    for (int k = 0; k < 200; ++k) {
      ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
      iterations[refresh > 1] += d.solver_statistics.mean_iterations;
    }
    std::vector<double> kept;
    int oldest = 0;
    for (const Constraint& c : d.constraints.constraints) {
      kept.push_back(c.delassus_trace);
      oldest = std::max(oldest, c.delassus_age);
    }
    if (refresh == 1) {
      EXPECT_EQ(oldest, 0);
      continue;
    }
    EXPECT_GT(oldest, 0) << "no trace was kept";
    EXPECT_LT(oldest, refresh);
    for (Constraint& c : d.constraints.constraints) c.delassus_trace = -1;
    AdmmPenalty penalty(m);
    penalty.CountBlocks(m, d);
    std::vector<double> scale(d.constraints.constraints.size());
    for (int island = 0; island < d.islands.num; ++island) {
      penalty.Scales(m, d, d.islands, island, 1.0, PenaltyScaling::kDelassus, 1, scale.data());
    }
    double largest = 0;
    for (size_t i = 0; i < kept.size(); ++i) {
      const double fresh = d.constraints.constraints[i].delassus_trace;
      ASSERT_GT(fresh, 0) << i;
      EXPECT_NEAR(kept[i], fresh, 0.15 * fresh) << "constraint " << i;
      largest = std::max(largest, std::abs(kept[i] / fresh - 1));
    }
    std::printf("[ kept traces ] %zu constraints, oldest %d steps, largest deviation %.1f%%\n",
                kept.size(), oldest, 100 * largest);
  }
  EXPECT_NEAR(iterations[1], iterations[0], 0.03 * iterations[0]);
}

// kDelassus gives constraint i the penalty 1 / w_i at beta = beta0, w_i the mean diagonal of
// J_i A^{-1} J_i^T, here against a dense inverse of A and the joint-space Jacobian; the tripods
// have one- and two-body contacts (the latter across subsystems, where A^{-1} has no cross term),
// the arm joint-space limit and servo rows. Bodies with one block (the arm's hand and ball) and
// with several (the tripods, the arm's upper link) take the two ways of computing the trace.
TEST(SolverBaselinesTest, DelassusPenaltiesAreInverseEffectiveMasses) {
  for (const std::string& xml : {kTripodStack, std::string(kArm)}) {
    const auto model = Load(xml);
    const Model& m = *model;
    Data d(m);
    for (int k = 0; k < m.nv; ++k) d.qvel[k] = 0.2 * std::sin(1.0 + k);
    ASSERT_EQ(Step(m, d), StepStatus::kOk);
    const ConstraintSet& set = d.constraints;
    const int num_constraints = static_cast<int>(set.constraints.size());
    ASSERT_GE(num_constraints, 3);
    AdmmPenalty penalty(m);
    penalty.CountBlocks(m, d);
    // The step's solver stored its traces in the constraints; computed afresh here.
    for (Constraint& c : d.constraints.constraints) c.delassus_trace = -1;
    JointSpaceJacobian jacobian;
    jacobian.Reserve(m, num_constraints);
    jacobian.Layout(m, d);
    for (int i = 0; i < num_constraints; ++i) jacobian.Fill(m, d, i);
    const Eigen::MatrixXd inverse = TreeSparseToDense(d.mass_layout, d.qA.data()).inverse();
    std::vector<double> scale(num_constraints, 0.0), paper(num_constraints, 0.0);
    int checked = 0, two_body = 0;
    for (int island = 0; island < d.islands.num; ++island) {
      const double beta0 = penalty.InitialBeta(m, d, d.islands, island);
      penalty.Scales(m, d, d.islands, island, beta0, PenaltyScaling::kDelassus, 1, scale.data());
      penalty.Scales(m, d, d.islands, island, beta0, PenaltyScaling::kPseudoDensity, 1,
                     paper.data());
      for (int s = d.islands.constraint_adr[island]; s < d.islands.constraint_adr[island + 1];
           ++s) {
        const int i = d.islands.constraints[s];
        const Constraint& c = set.constraints[i];
        if (c.block_num == 2) {
          if (set.blocks[c.block_adr].subsystem == set.blocks[c.block_adr + 1].subsystem) continue;
          ++two_body;
        }
        Eigen::MatrixXd row_jacobian = Eigen::MatrixXd::Zero(c.dim, m.nv);
        for (int e = jacobian.entry_adr[i]; e < jacobian.entry_adr[i] + jacobian.entry_num[i]; ++e)
          for (int r = 0; r < c.dim; ++r) row_jacobian(r, jacobian.dof[e]) = jacobian.value[e][r];
        const double mean_diagonal =
            (row_jacobian * inverse * row_jacobian.transpose()).trace() / c.dim;
        EXPECT_NEAR(scale[i] * beta0 * mean_diagonal, 1.0, 1e-9) << "constraint " << i;
        if (set.blocks[c.block_adr].body >= 0) {
          EXPECT_EQ(paper[i], 1.0);  // the paper's single beta
        }
        ++checked;
      }
    }
    EXPECT_GE(checked, 3);
    if (xml == kTripodStack) {
      EXPECT_GE(two_body, 1);
    }
  }
}

// ---- iteration cap, deadline, determinism, allocations ----------------------------------------

TEST(SolverBaselinesTest, IterationCapAndDeadlineStopTheIterations) {
  const auto model = Load(kTripodStack);
  for (const SolverType type : kAllSolvers) {
    Data d(*model);
    StepOptions options = Tight(type, 3);
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    EXPECT_EQ(d.solver_statistics.max_iterations, 3) << SolverName(type);
    // A budget that is over before the first iteration ends: one iteration per island.
    Data late(*model);
    options = Tight(type);
    options.solver.time_budget_us = 1e-3;
    ASSERT_EQ(Step(*model, late, options), StepStatus::kOk);
    EXPECT_EQ(late.solver_statistics.max_iterations, 1) << SolverName(type);
  }
}

// Three tripod stacks side by side (three islands of two subsystems) and the arm with its ball.
std::string SeveralIslands() {
  std::string xml = kArm;
  const std::string anchor = "<worldbody>";
  xml.insert(xml.find(anchor) + anchor.size(),
             R"(<geom type="plane" size="9 9 0.1"/>)" + TripodStackBodies(-3, -2) +
                 TripodStackBodies(-3, 0) + TripodStackBodies(-3, 2));
  return xml;
}

// A budget shared by the islands (island_schedule.h): on one thread each island, when it starts,
// gets its rows' share of the time left (rows plus one over those of the islands not yet
// started), so the last island gets the rest of the budget rather than nothing; on as many
// threads as islands, the share is that many times larger (here at least 1: the whole budget);
// and no budget gives no deadline.
TEST(SolverBaselinesTest, IslandsShareABudgetByTheirRows) {
  const auto model = Load(SeveralIslands());
  Data d(*model);
  ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  const Islands& islands = d.islands;
  ASSERT_GE(islands.num, 3);
  std::vector<long> weight(islands.num, 1);
  long total = 0;
  for (int k = 0; k < islands.num; ++k) {
    for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
      weight[k] += d.constraints.constraints[islands.constraints[s]].dim;
    }
    total += weight[k];
  }
  RunWithThreads(1, [&] {
    IslandDeadlines deadlines(d, 1000.0);
    double now = 0;
    long left = total;
    for (int k = 0; k < islands.num; ++k) {
      const double expected = now + (1000.0 - now) * weight[k] / left;
      EXPECT_DOUBLE_EQ(deadlines.Start(k, now), expected) << "island " << k;
      left -= weight[k];
      now = expected;  // the island used its whole share
    }
    EXPECT_DOUBLE_EQ(now, 1000.0);  // the last island's share is the rest
  });
  RunWithThreads(islands.num, [&] {
    IslandDeadlines deadlines(d, 1000.0);
    for (int k = 0; k < islands.num; ++k) EXPECT_DOUBLE_EQ(deadlines.Start(k, 0.0), 1000.0);
  });
  IslandDeadlines none(d, 0);
  EXPECT_EQ(none.Start(0, 5.0), 0);
  EXPECT_EQ(none.Start(1), 0);
}

std::vector<double> QposAfterFiftySteps(const Model& model, SolverType type, int threads) {
  Data d(model);
  for (int k = 0; k < model.nv; ++k) d.qvel[k] = 0.1 * std::sin(1.0 + k);  // all move
  StepOptions options;
  options.solver.type = type;
  RunWithThreads(threads, [&] {
    for (int n = 0; n < 50; ++n) EXPECT_EQ(Step(model, d, options), StepStatus::kOk);
  });
  EXPECT_GE(d.islands.num, 4) << SolverName(type);
  return d.qpos;
}

// The stall stop of the ADMM solvers (admm_penalty.h), with eq. (43) checked every 10
// iterations and tolerance 1e-6: only check iterations count, and an island stops once theta_d
// is below the tolerance while theta_p fell by less than 1% since the previous check.
TEST(AdmmStallTest, StopsWhenTheSlacksRestAndThetaPStaysPut) {
  SolverOptions options;
  options.admm.beta_update_interval = 10;
  options.tolerance = 1e-6;
  StallTest stall;
  EXPECT_FALSE(stall.Stalled(5e-6, 1e-10, 10, options));    // the first check only records
  EXPECT_FALSE(stall.Stalled(5e-6, 1e-10, 15, options));    // not a check iteration
  EXPECT_FALSE(stall.Stalled(4e-6, 1e-10, 20, options));    // theta_p fell by 20%
  EXPECT_FALSE(stall.Stalled(3.99e-6, 2e-6, 30, options));  // the slacks still move
  EXPECT_TRUE(stall.Stalled(3.98e-6, 1e-10, 40, options));  // fell by 0.25% since 3.99e-6

  options.tolerance = 0;  // Table III: iterate to the cap
  StallTest never;
  for (int iteration = 10; iteration <= 100; iteration += 10) {
    EXPECT_FALSE(never.Stalled(5e-6, 0, iteration, options));
  }
}

// humanoid100 has islands whose contacts admit no exact solution (see contact_test.cc's
// SparseBetaCheckTest); No Body stops them as SubADMM does.
TEST(SolverBaselinesTest, NoBodyStopsStalledIslandsOnHumanoidHundred) {
  const ModelImport imported =
      ImportModelFromFile(testing::kMujocoSamples + "humanoid100/humanoid100.xml");
  ASSERT_TRUE(imported) << imported.error;
  Data d(*imported.model);
  StepOptions options;
  options.solver.type = SolverType::kAdmmNoBody;
  int stalled = 0;
  for (int n = 0; n < 250; ++n) {
    ASSERT_EQ(Step(*imported.model, d, options), StepStatus::kOk) << "step " << n;
    const auto* solver = dynamic_cast<const AdmmNoBodySolver*>(d.solver.get());
    ASSERT_NE(solver, nullptr);
    for (int k = 0; k < d.islands.num; ++k) stalled += solver->island_results()[k].stalled;
  }
  EXPECT_GT(stalled, 0);
}

TEST(SolverBaselinesTest, BitIdenticalForOneAndTwoThreads) {
  const auto model = Load(SeveralIslands());
  for (const SolverType type : kAllSolvers) {
    const std::vector<double> one = QposAfterFiftySteps(*model, type, 1);
    const std::vector<double> two = QposAfterFiftySteps(*model, type, 2);
    ASSERT_EQ(one.size(), two.size());
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0)
        << SolverName(type);
  }
}

TEST(SolverBaselinesTest, NoSubAnalyzesOnlyWhenThePatternChanges) {
  const auto model = Load(kTripodStack);
  Data d(*model);
  StepOptions options;
  options.solver.type = SolverType::kAdmmNoSub;
  for (int n = 0; n < 20; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
  // The stack rests: one island, the same contacts every step, one analysis.
  EXPECT_EQ(d.islands.num, 1);
  EXPECT_EQ(static_cast<const AdmmNoSubSolver&>(*d.solver).analyses(), 1);
}

// No Sub is the paper's baseline of one global system (eq. 28): several islands are solved
// together, so each reports the same iterations, and the converged answer is SubADMM's.
TEST(SolverBaselinesTest, NoSubSolvesEveryIslandAsOneSystem) {
  const auto model = Load(SeveralIslands());
  Data settled(*model);
  for (int n = 0; n < 10; ++n) ASSERT_EQ(Step(*model, settled), StepStatus::kOk);
  for (int k = 0; k < model->nv; ++k) settled.qvel[k] += 0.1 * std::sin(1.0 + k);  // all move
  const SolverRun reference = StepOnce(*model, settled.qpos, settled.qvel, SolverType::kSubAdmm);
  const SolverRun global = StepOnce(*model, settled.qpos, settled.qvel, SolverType::kAdmmNoSub);
  ASSERT_GE(global.stats.islands, 3);
  EXPECT_EQ(global.stats.mean_iterations, global.stats.max_iterations);
  EXPECT_LT(MaxDifference(global.v_hat, reference.v_hat), 1e-8);
  EXPECT_LT(global.stats.contact_residual, 1e-8);
}

// Once warm, a step allocates nothing with PGS and No Body. Counted on the calling thread, so
// TBB is held to one thread. For No Sub only alsim's own storage is counted: CHOLMOD allocates
// with malloc (engine/linalg/cholmod_llt.h).
TEST(SolverBaselinesTest, AWarmStepAllocatesNothing) {
  const auto model = Load(SeveralIslands());
  const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, 1);
  for (const SolverType type :
       {SolverType::kPgs, SolverType::kAdmmNoSub, SolverType::kAdmmNoBody}) {
    Data d(*model);
    StepOptions options;
    options.solver.type = type;
    for (int n = 0; n < 20; ++n) Step(*model, d, options);
    const testing::AllocationCounter allocations;
    for (int n = 0; n < 30; ++n) Step(*model, d, options);
    EXPECT_EQ(allocations.count(), 0) << SolverName(type);
  }
}

}  // namespace
}  // namespace alsim
