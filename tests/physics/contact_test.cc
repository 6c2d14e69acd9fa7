// Frictional contact with the SubADMM solver: the closed-form operators against hand-computed
// values, analytic incline motion, resting stacks, long runs of MuJoCo's sample scenes, and
// determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "engine/core/parallel.h"

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/subadmm/subadmm_solver.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

const std::string kScenes = std::string(ALSIM_SCENES_DIR) + "/";
constexpr double kPi = 3.14159265358979323846;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::shared_ptr<const Model> LoadFile(const std::string& path) {
  const ModelImport imported = ImportModelFromFile(path);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

std::shared_ptr<const Model> LoadString(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml);
  if (!imported) throw std::runtime_error(imported.error);
  return imported.model;
}

double MaxPenetration(const Data& d) {
  double deepest = 0;
  for (const Contact& contact : d.contact) deepest = std::max(deepest, -contact.dist);
  return deepest;
}

// ---- the closed-form operators (Sec. IV-C), alsim's row order (normal, t1, t2) ----------------

TEST(StrictOperatorTest, OpenStickAndSlipCases) {
  const double mu = 0.5;
  // open: a separating normal impulse gives nothing, whatever the tangent
  EXPECT_EQ(StrictConeProjection(Vec3(-1, 0.3, -0.1), mu), Vec3::Zero());
  EXPECT_EQ(StrictConeProjection(Vec3(-0.5, 2, 0), mu), Vec3::Zero());
  EXPECT_EQ(StrictConeProjection(Vec3(0, 1, 1), mu), Vec3::Zero());
  // stick: inside the cone, unchanged (||(0.1, 0.2)|| = 0.224 <= 0.5)
  EXPECT_EQ(StrictConeProjection(Vec3(1, 0.1, 0.2), mu), Vec3(1, 0.1, 0.2));
  // slip: the normal part is kept, the tangent scaled onto the circle of radius mu x_n
  const Vec3 slip = StrictConeProjection(Vec3(1, 2, 0), mu);
  EXPECT_DOUBLE_EQ(slip[0], 1.0);
  EXPECT_DOUBLE_EQ(slip[1], 0.5);
  EXPECT_DOUBLE_EQ(slip[2], 0.0);
  // slip in an oblique direction: (3, 4) has length 5, the limit is 0.5 * 2 = 1
  const Vec3 oblique = StrictConeProjection(Vec3(2, 3, 4), mu);
  EXPECT_DOUBLE_EQ(oblique[0], 2.0);
  EXPECT_NEAR(oblique[1], 0.6, 1e-15);
  EXPECT_NEAR(oblique[2], 0.8, 1e-15);
}

TEST(StrictOperatorTest, UpdatesOfHardAndSoftRows) {
  // Hard row, eq. (36): lambda' = max(0, lambda - beta/|Z| (J v + e)).
  Constraint limit;
  limit.type = ConstraintType::kLimit;
  limit.dim = 1;
  double velocity = -0.2, bias = 0.05, lambda = 0.1, out = 0;
  UpdateImpulse(limit, &velocity, &bias, &lambda, 2.0, 1, &out);
  EXPECT_DOUBLE_EQ(out, 0.1 - 2.0 * (-0.2 + 0.05));  // 0.4
  velocity = 1.0;
  UpdateImpulse(limit, &velocity, &bias, &lambda, 2.0, 2, &out);
  EXPECT_EQ(out, 0.0);  // 0.1 - 1.05 < 0
  // Soft row, eq. (37) with u = -lambda: lambda' = -(b (beta J v - |Z| lambda) + beta k e) /
  // (b |Z| + beta); k e = 0.3, b = 0.5, beta = 2, J v = 0.4, lambda = 0.1, |Z| = 1:
  // -(0.5 (0.8 - 0.1) + 0.6) / 2.5 = -0.38.
  Constraint soft;
  soft.type = ConstraintType::kSoft;
  soft.dim = 1;
  soft.soft_bias = 0.3;
  soft.soft_damping = 0.5;
  soft.lambda_lower = -1;
  soft.lambda_upper = 1;
  velocity = 0.4;
  UpdateImpulse(soft, &velocity, &bias, &lambda, 2.0, 1, &out);
  EXPECT_NEAR(out, -0.38, 1e-15);
  // Its fixed point is eq. (4): with lambda = -k e - b J v the update returns lambda.
  lambda = -0.3 - 0.5 * 0.4;
  UpdateImpulse(soft, &velocity, &bias, &lambda, 2.0, 1, &out);
  EXPECT_NEAR(out, lambda, 1e-15);
  // ... and the force range clamps it.
  soft.lambda_lower = -0.2;
  UpdateImpulse(soft, &velocity, &bias, &lambda, 2.0, 1, &out);
  EXPECT_EQ(out, -0.2);
}

// ---- a box on a 30 degree incline (scenes/box_incline.xml) -------------------------------------

// Position of the box along the incline's downhill direction (cos 30, 0, -sin 30).
double Downhill(const Data& d) {
  return d.qpos[0] * std::cos(kPi / 6) - d.qpos[2] * std::sin(kPi / 6);
}

TEST(InclineTest, FrictionAboveTanThetaSticks) {
  const auto model = LoadFile(kScenes + "box_incline.xml");
  ASSERT_GT(0.8, std::tan(kPi / 6));
  Data d(*model);
  const double start = Downhill(d);
  const Vec3 start_position(d.qpos[0], d.qpos[1], d.qpos[2]);
  while (d.time < 2.0) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  EXPECT_LT(std::abs(Downhill(d) - start), 1e-4);
  EXPECT_LT((Vec3(d.qpos[0], d.qpos[1], d.qpos[2]) - start_position).norm(), 1e-4);
  EXPECT_LT(MaxPenetration(d), 1e-3);
}

TEST(InclineTest, FrictionBelowTanThetaSlidesWithTheCoulombAcceleration) {
  std::string xml = ReadFile(kScenes + "box_incline.xml");
  const std::string key = "friction=\"0.8";
  const size_t at = xml.find(key);
  ASSERT_NE(at, std::string::npos);
  xml.replace(at, key.size(), "friction=\"0.3");
  const auto model = LoadString(xml);
  Data d(*model);
  const double g = 9.81, mu = 0.3;
  const double expected = g * (std::sin(kPi / 6) - mu * std::cos(kPi / 6));  // 2.356 m/s^2
  // Measure between 0.5 s and 1.5 s: the average acceleration, free of the first step.
  while (d.time < 0.5 - 1e-9) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  const double t0 = d.time;
  const double v0 = d.qvel[0] * std::cos(kPi / 6) - d.qvel[2] * std::sin(kPi / 6);
  while (d.time < 1.5 - 1e-9) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  const double v1 = d.qvel[0] * std::cos(kPi / 6) - d.qvel[2] * std::sin(kPi / 6);
  const double acceleration = (v1 - v0) / (d.time - t0);
  EXPECT_NEAR(acceleration / expected, 1.0, 0.01) << acceleration << " vs " << expected;
  // It slides on the surface: no velocity along the normal, no penetration.
  EXPECT_LT(std::abs(d.qvel[0] * std::sin(kPi / 6) + d.qvel[2] * std::cos(kPi / 6)), 1e-3);
  EXPECT_LT(MaxPenetration(d), 1e-3);
}

// ---- resting scenes ------------------------------------------------------------------------

TEST(RestingTest, BoxStackStandsTenSeconds) {
  const auto model = LoadFile(kScenes + "box_stack.xml");
  ASSERT_EQ(model->nsubsystem, 10);
  Data d(*model);
  const std::vector<double> start = d.qpos;
  double deepest = 0;
  while (d.time < 10.0) {
    ASSERT_EQ(Step(*model, d), StepStatus::kOk);
    deepest = std::max(deepest, MaxPenetration(d));
  }
  for (int box = 0; box < 10; ++box) {
    const Vec3 moved(d.qpos[7 * box] - start[7 * box], d.qpos[7 * box + 1] - start[7 * box + 1],
                     d.qpos[7 * box + 2] - start[7 * box + 2]);
    EXPECT_LT(moved.norm(), 1e-3) << "box " << box;
  }
  EXPECT_LT(deepest, 1e-3);
}

// Contacts of a resting stack stay where they were, so each inherits last step's impulse: none
// on the first step, all of them once the stack has settled (ConstraintSet's count).
TEST(RestingTest, BoxStackContactsKeepTheirWarmStarts) {
  const auto model = LoadFile(kScenes + "box_stack.xml");
  Data d(*model);
  ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  EXPECT_EQ(d.constraints.num_warm_started_contacts, 0) << "nothing to inherit on the first step";
  while (d.time < 1.0) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  for (int k = 0; k < 100; ++k) {
    ASSERT_EQ(Step(*model, d), StepStatus::kOk);
    ASSERT_GE(d.constraints.num_contacts, 40) << "10 boxes on 4 corners each";
    EXPECT_EQ(d.constraints.num_warm_started_contacts, d.constraints.num_contacts) << "step " << k;
  }
}

// The resting configurations whose contacts used to move from step to step (upright cylinder,
// capsule lying across a box face past both edges, boxes face to face turned against each other)
// keep every contact, and so every warm start, once they have settled.
TEST(RestingTest, CylinderCapsuleAndBoxContactsKeepTheirWarmStarts) {
  const auto model = LoadString(R"(<mujoco><option timestep="0.005"/>
    <worldbody><geom type="plane" size="5 5 0.1"/>
      <body pos="0 0 0.15"><freejoint/><geom type="cylinder" size="0.08 0.15" mass="1"/></body>
      <body pos="1 0 0.05"><freejoint/><geom type="box" size="0.15 0.1 0.05" mass="2"/></body>
      <body pos="1.02 0.01 0.15" euler="0 0 0.4"><freejoint/>
        <geom type="box" size="0.15 0.1 0.05" mass="1"/></body>
      <body pos="-1 0 0.05"><freejoint/><geom type="box" size="0.15 0.1 0.05" mass="2"/></body>
      <body pos="-0.98 0.01 0.149" euler="0 90 83"><freejoint/>
        <geom type="capsule" size="0.049 0.15" mass="0.5"/></body>
    </worldbody></mujoco>)");
  Data d(*model);
  while (d.time < 2.0) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  for (int k = 0; k < 200; ++k) {
    ASSERT_EQ(Step(*model, d), StepStatus::kOk);
    ASSERT_GE(d.constraints.num_contacts, 4 + 4 + 3 + 4 + 2) << "every shape still resting";
    EXPECT_EQ(d.constraints.num_warm_started_contacts, d.constraints.num_contacts) << "step " << k;
  }
}

// Resting pairs of curved shapes: stacked cylinders (end faces), a flat ellipsoid lying on a wider
// one, an ellipsoid on a cylinder's face and cylinders lying on their sides. At rest such a pair
// hovers within nanometres of touching, so from step to step it is either apart (its distance from
// the certificate of smooth_pair_distance.h) or touching (GJK and MPR): the two must agree, or the
// stacks would jitter or sink. They stay where they settled, at their stacked heights.
TEST(RestingTest, StackedCylindersAndEllipsoidsStayPut) {
  const auto model = LoadString(R"(<mujoco><option timestep="0.005"/>
    <worldbody><geom type="plane" size="5 5 0.1"/>
      <body pos="0 0 0.05"><freejoint/><geom type="cylinder" size="0.1 0.05" mass="1"/></body>
      <body pos="0.02 0 0.15"><freejoint/><geom type="cylinder" size="0.1 0.05" mass="1"/></body>
      <body pos="0.03 0.01 0.25"><freejoint/><geom type="cylinder" size="0.1 0.05" mass="1"/></body>
      <body pos="1 0 0.05"><freejoint/><geom type="ellipsoid" size="0.2 0.2 0.05" mass="1"/></body>
      <body pos="1.03 0.02 0.131" euler="0 0 30"><freejoint/>
        <geom type="ellipsoid" size="0.1 0.08 0.03" mass="0.5"/></body>
      <body pos="-1 0 0.05"><freejoint/><geom type="cylinder" size="0.1 0.05" mass="1"/></body>
      <body pos="-1 0.02 0.17"><freejoint/><geom type="ellipsoid" size="0.15 0.1 0.07" mass="1"/></body>
      <body pos="0 1 0.1" euler="90 0 0"><freejoint/><geom type="cylinder" size="0.1 0.05" mass="1"/></body>
      <body pos="0 1.2 0.1" euler="90 0 0"><freejoint/><geom type="cylinder" size="0.1 0.05" mass="1"/></body>
    </worldbody></mujoco>)");
  Data d(*model);
  while (d.time < 1.0) ASSERT_EQ(Step(*model, d), StepStatus::kOk);
  const std::vector<double> settled = d.qpos;
  double deepest = 0;
  while (d.time < 3.0) {
    ASSERT_EQ(Step(*model, d), StepStatus::kOk);
    deepest = std::max(deepest, MaxPenetration(d));
  }
  for (int body = 0; body < model->nsubsystem; ++body) {
    const Vec3 moved(d.qpos[7 * body] - settled[7 * body],
                     d.qpos[7 * body + 1] - settled[7 * body + 1],
                     d.qpos[7 * body + 2] - settled[7 * body + 2]);
    // The two ellipsoids (bodies 3 and 4) rock on each other and the floor by a few millimetres,
    // which friction alone damps slowly; they must not sink or slide away.
    const bool rocking = body == 3 || body == 4;
    EXPECT_LT(moved.norm(), rocking ? 1e-2 : 1e-3) << "body " << body;
    EXPECT_LT(std::abs(moved.z()), 1e-3) << "body " << body;
  }
  // Heights of the stacks that have closed forms: pucks of height 0.1, an ellipsoid of half-height
  // 0.07 on a puck, and cylinders lying on their sides (radius 0.1).
  const double expected_height[] = {0.05, 0.15, 0.25, -1, -1, 0.05, 0.17, 0.1, 0.1};
  for (int body = 0; body < model->nsubsystem; ++body) {
    if (expected_height[body] < 0) continue;
    EXPECT_NEAR(d.qpos[7 * body + 2], expected_height[body], 1e-3) << "body " << body;
  }
  EXPECT_LT(deepest, 1e-3);
}

// Every authored scene comes to rest without sinking: over its last half second no contact is
// deeper than 1 mm.
class SceneRestsTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SceneRestsTest, RestingPenetrationBelowOneMillimetre) {
  const auto model = LoadFile(kScenes + GetParam());
  Data d(*model);
  double deepest = 0;
  while (d.time < 3.0) {
    ASSERT_EQ(Step(*model, d), StepStatus::kOk) << "t = " << d.time;
    if (d.time > 2.5) deepest = std::max(deepest, MaxPenetration(d));
  }
  EXPECT_GT(d.solver_statistics.contacts, 0);
  EXPECT_LT(deepest, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Scenes, SceneRestsTest,
                         ::testing::Values("box_stack.xml", "box_incline.xml", "ball_pile.xml",
                                           "quadruped_drop_8.xml", "quadruped_drop_27.xml"));

// A chain of 70 capsule links lying on the floor (a free root, then hinges about the vertical):
// a tree of more than 64 bodies, whose solver marks which bodies carry contacts in an array rather
// than a bit mask (BodyMarks in subadmm_solver.cc). Every link must stay on the floor: a link
// whose contact forces were skipped would sink through it.
TEST(RestingTest, ChainOfSeventyLinksStaysOnTheFloor) {
  constexpr int kLinks = 70;
  constexpr double kRadius = 0.04;
  std::string xml = R"(<mujoco><option timestep="0.005"/><worldbody>
      <geom type="plane" size="20 20 0.1"/><body pos="0 0 0.04"><freejoint/>)";
  const std::string link = R"(<geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.04"/>)";
  xml += link;
  for (int k = 1; k < kLinks; ++k) {
    xml += R"(<body pos="0.1 0 0"><joint type="hinge" axis="0 0 1"/>)" + link;
  }
  for (int k = 1; k < kLinks; ++k) xml += "</body>";
  xml += "</body></worldbody></mujoco>";
  const auto model = LoadString(xml);
  ASSERT_EQ(model->nsubsystem, 1);
  ASSERT_EQ(model->subsystem_body_num[0], kLinks);
  Data d(*model);
  for (int n = 0; n < 200; ++n) ASSERT_EQ(Step(*model, d), StepStatus::kOk) << "step " << n;
  EXPECT_GE(d.constraints.num_contacts, kLinks) << "every link rests on the floor";
  for (int b = 1; b <= kLinks; ++b) {
    EXPECT_NEAR(d.xpos[b][2], kRadius, 1e-3) << "link " << b;
  }
  EXPECT_LT(MaxPenetration(d), 1e-3);
}

// ---- MuJoCo's 22 humanoids ---------------------------------------------------------------------

TEST(LongRunTest, TwentyTwoHumanoidsRunTwoThousandSteps) {
  const auto model = LoadFile(testing::kMujocoSamples + "humanoid/22_humanoids.xml");
  Data d(*model);
  double deepest = 0;
  for (int n = 0; n < 2000; ++n) {
    ASSERT_EQ(Step(*model, d), StepStatus::kOk) << "step " << n;
    deepest = std::max(deepest, MaxPenetration(d));
  }
  // No body below the floor (z = 0): every body's center of mass stays above it.
  for (int b = 1; b < model->nbody; ++b) EXPECT_GT(d.xipos[b][2], 0.0) << model->body_name[b];
  EXPECT_LT(deepest, 5e-3);
  EXPECT_GT(d.solver_statistics.contacts, 22);  // they all lie on the floor
}

// humanoid100 has islands whose contacts admit no exact solution (a box sliding and turning on four
// corners): SubADMM's iterate stops moving short of the tolerance. With eq. (43) checked every 20
// iterations, beta used to climb to its cap on such islands, Anderson's extrapolations then blew
// the iterate up, and a change of beta kept the blown-up state: a residual of 1e-2 at step 347, a
// NaN state (kDiverged) at step 361. SubADMM now stops a stalled island. Two more settings still
// went to NaN after that (at steps 357 and 361), each after an extrapolation that jumped
// thousands of plain steps from a small island's iterate; Anderson now refuses such jumps.
struct SparseBetaCheckCase {
  int beta_update_interval;
  double relaxation;
};

class SparseBetaCheckTest : public ::testing::TestWithParam<SparseBetaCheckCase> {};

TEST_P(SparseBetaCheckTest, HumanoidHundredStaysFinite) {
  const auto model = LoadFile(testing::kMujocoSamples + "humanoid100/humanoid100.xml");
  Data d(*model);
  StepOptions options;
  options.solver.admm.beta_update_interval = GetParam().beta_update_interval;
  options.solver.admm.relaxation = GetParam().relaxation;
  int stalled = 0;
  double worst = 0;
  for (int n = 0; n < 450; ++n) {
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk) << "step " << n;
    const double residual = d.solver_statistics.contact_residual;
    ASSERT_TRUE(std::isfinite(residual)) << "step " << n;
    worst = std::max(worst, residual);
    const auto* solver = dynamic_cast<const SubAdmmSolver*>(d.solver.get());
    ASSERT_NE(solver, nullptr);
    for (const IslandSolveResult& island : solver->island_results()) stalled += island.stalled;
  }
  EXPECT_LT(worst, 1e-2);
  EXPECT_GT(stalled, 0);  // the stall stop is what keeps these islands calm
}

INSTANTIATE_TEST_SUITE_P(
    BetaChecks, SparseBetaCheckTest,
    ::testing::Values(SparseBetaCheckCase{20, 1.6}, SparseBetaCheckCase{40, 1.6},
                      SparseBetaCheckCase{20, 1.4}),
    [](const ::testing::TestParamInfo<SparseBetaCheckCase>& param_info) {
      return "Every" + std::to_string(param_info.param.beta_update_interval) + "Relaxation" +
             std::to_string(static_cast<int>(std::lround(10 * param_info.param.relaxation)));
    });

// ---- convergence ---------------------------------------------------------------------------

// From a cold start, the paper's SubADMM (Algorithm 2: no over-relaxation, one beta for every
// contact, no Anderson acceleration) sees its residual theta_p + theta_d fall by orders of
// magnitude over the iterations, with a fixed beta and faster with the adaptive beta of eq. (43)
// (not strictly monotonically: digest 11.16). The scene: the 10-box tower, one island of 10
// subsystems.
std::vector<double> ResidualHistory(bool adaptive_beta, double* contact_residual) {
  const auto model = LoadFile(kScenes + "box_stack.xml");
  Data d(*model);
  StepOptions options;
  for (int n = 0; n < 10; ++n) Step(*model, d, options);  // settle; creates the solver
  d.warm_start = WarmStart{};                             // then solve one step from scratch
  options.solver.admm.adaptive_beta = adaptive_beta;
  options.solver.admm.relaxation = 1;
  options.solver.admm.penalty_scaling = PenaltyScaling::kPseudoDensity;
  options.solver.subadmm.anderson_memory = 0;
  options.solver.max_iterations = 400;
  options.solver.tolerance = 0;
  auto* solver = dynamic_cast<SubAdmmSolver*>(d.solver.get());
  if (solver == nullptr) return {};
  solver->set_record_history(true);
  if (Step(*model, d, options) != StepStatus::kOk) return {};
  *contact_residual = d.solver_statistics.contact_residual;
  return solver->history();
}

TEST(SubAdmmConvergenceTest, ResidualsFallOverIterations) {
  double fixed_metric = 0, adaptive_metric = 0;
  const std::vector<double> fixed = ResidualHistory(false, &fixed_metric);
  const std::vector<double> adaptive = ResidualHistory(true, &adaptive_metric);
  ASSERT_EQ(fixed.size(), 400u);
  ASSERT_EQ(adaptive.size(), 400u);
  EXPECT_LT(fixed.back(), 1e-2 * fixed.front());
  EXPECT_LT(fixed[399], fixed[100]);
  EXPECT_LT(adaptive.back(), 1e-4 * adaptive.front());
  EXPECT_LT(adaptive_metric, fixed_metric);
  EXPECT_LT(adaptive_metric, 1e-6);
}

// ---- determinism ---------------------------------------------------------------------------

std::vector<double> FinalState(const Model& model, int threads, int steps) {
  Data d(model);
  for (int u = 0; u < model.nu; ++u) d.ctrl[u] = 0.2 * std::sin(u);
  RunWithThreads(threads, [&] {
    EXPECT_EQ(tbb::this_task_arena::max_concurrency(), threads) << "really runs on T threads";
    for (int n = 0; n < steps; ++n) Step(model, d);
  });
  std::vector<double> state = d.qpos;
  state.insert(state.end(), d.qvel.begin(), d.qvel.end());
  // The diagnostics too: the Sec. VII residual is summed over islands solved in parallel.
  state.push_back(d.solver_statistics.contact_residual);
  state.push_back(d.solver_statistics.mean_iterations);
  return state;
}

TEST(DeterminismTest, BitIdenticalForOneTwoAndEightThreads) {
  for (const char* scene : {"quadruped_drop_27.xml", "ball_pile.xml"}) {
    const auto model = LoadFile(kScenes + scene);
    const std::vector<double> one = FinalState(*model, 1, 300);
    for (const int threads : {2, 8}) {
      const std::vector<double> many = FinalState(*model, threads, 300);
      ASSERT_EQ(one.size(), many.size());
      EXPECT_EQ(0, std::memcmp(one.data(), many.data(), one.size() * sizeof(double)))
          << scene << " with " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace alsim
