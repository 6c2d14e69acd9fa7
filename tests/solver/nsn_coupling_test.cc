// Two-way coupling of rigid robots and tetrahedral deformables under --solver nsn (issue 48; digest
// seed-002-nsn.md 9.2 item 1 and section 14, test 20) on the Fetch Tomato scene authored here
// (scenes/nsn_tomato.xml, scenes/generate_nsn_tomato.py: a 384-tet corotated tomato, Y 0.1 MPa,
// nu 0.45, rho 1000, mu 0.75; a parallel gripper of box fingers on position servos; a scale whose
// platform rides a sprung vertical slide):
//   the scale reads the tomato's weight (its spring's deflection, 1%) and the platform's vertex
//     contacts carry it;
//   a tomato grasped and lifted slips less than 1 mm in 2 s relative to the fingers;
//   a resting voxel cube's contacts sum to its weight (1e-6);
//   the scene's state is bit-identical for 1, 2 and 8 threads.
// Converged runs (TightNsn: Newton tolerance 1e-9); the paper's fixed counts (4 x 50) only in the
// disabled benchmark at the end, which prints Table 2's columns for BENCHMARKS.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "engine/solver/nsn/ncp.h"
#include "engine/solver/nsn/nsn_solver.h"
#include "engine/solver/solver.h"
#include "tests/support/kuhn_grid.h"
#include "tests/support/nsn_deformables.h"
#include "tests/support/solver_figures.h"

namespace alsim {
namespace {

constexpr double kGravity = 9.81;

using testing::Figure;

std::string Scenes() { return ALSIM_SCENES_DIR; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string Num(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", x);
  return text;
}

// scenes/nsn_tomato.xml as written, or with the tomato moved to `tomato_pos` (its companion's pos
// attribute rewritten in memory; the files are passed as assets, found by their base names).
std::shared_ptr<const Model> LoadTomatoScene(const std::string& tomato_pos = "") {
  if (tomato_pos.empty()) {
    const ModelImport imported = ImportModelFromFile(Scenes() + "/nsn_tomato.xml");
    EXPECT_TRUE(imported) << imported.error;
    return imported.model;
  }
  std::string companion = ReadFile(Scenes() + "/nsn_tomato_deformables.xml");
  const std::string key = "pos=\"";
  const size_t at = companion.find(key, companion.find("<deformable "));
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return nullptr;
  const size_t end = companion.find('"', at + key.size());
  companion.replace(at + key.size(), end - at - key.size(), tomato_pos);
  const ModelImport imported = ImportModelFromString(
      ReadFile(Scenes() + "/nsn_tomato.xml"),
      {{"nsn_tomato_deformables.xml", companion},
       {"assets/nsn_tomato.node", ReadFile(Scenes() + "/assets/nsn_tomato.node")},
       {"assets/nsn_tomato.ele", ReadFile(Scenes() + "/assets/nsn_tomato.ele")}},
      "nsn_tomato.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

StepOptions TightNsn(double tolerance = 1e-9) {
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  options.solver.nsn.newton_tolerance = tolerance;
  options.solver.nsn.newton_iterations = 200;
  return options;
}

// Table 2's Fetch Tomato budget: 4 Newton iterations of 50 linear ones, no tolerances.
StepOptions PapersCounts() { return testing::NsnFixedCounts(4, 50); }

using testing::ContactForce;
using testing::DeformableMass;
using testing::Solver;

int Index(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << name;
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// The deformables' centre of mass (all of them; the tomato scene has one), world, m.
Vec3 CentreOfMass(const Model& m, const Data& d) {
  Vec3 sum = Vec3::Zero();
  for (int v = 0; v < m.nvert; ++v) sum += m.vert_mass[v] * d.vert_xpos[v];
  return sum / DeformableMass(m);
}

double LowestVertex(const Model& m, const Data& d) {
  double lowest = INFINITY;
  for (int v = 0; v < m.nvert; ++v) lowest = std::min(lowest, d.vert_xpos[v].z());
  return lowest;
}

double FastestVertex(const Model& m, const Data& d) {
  double fastest = 0;
  for (int v = 0; v < m.nvert; ++v) fastest = std::max(fastest, d.vert_xvel[v].norm());
  return fastest;
}

// The scene's actuators and bodies by name.
struct TomatoScene {
  int slide_x = -1, lift = -1, left = -1, right = -1;  // actuators
  int left_body = -1, right_body = -1, platform_body = -1;
  int platform_geom = -1, left_geom = -1, right_geom = -1, floor_geom = -1;
  int scale_joint = -1;
  explicit TomatoScene(const Model& m) {
    slide_x = Index(m.actuator_name, "slide_x");
    lift = Index(m.actuator_name, "lift");
    left = Index(m.actuator_name, "left");
    right = Index(m.actuator_name, "right");
    left_body = Index(m.body_name, "left");
    right_body = Index(m.body_name, "right");
    platform_body = Index(m.body_name, "platform");
    platform_geom = Index(m.geom_name, "platform");
    left_geom = Index(m.geom_name, "left");
    right_geom = Index(m.geom_name, "right");
    floor_geom = Index(m.geom_name, "floor");
    scale_joint = Index(m.jnt_name, "scale");
  }
  // The scale's reading, N: k times the platform's deflection below where it rests unloaded
  // (q_unloaded = springref - m_platform g / k; the scene tares it to 0).
  double Reading(const Model& m, const Data& d) const {
    const double k = m.jnt_stiffness[scale_joint];
    const int q = m.jnt_qpos_adr[scale_joint];
    const double unloaded = m.qpos_spring[q] - m.body_mass[platform_body] * kGravity / k;
    return k * (unloaded - d.qpos[q]);
  }
  // The midpoint of the two fingers' origins, world.
  Vec3 Fingers(const Data& d) const { return 0.5 * (d.xpos[left_body] + d.xpos[right_body]); }
};

// From a to b over [t0, t1] along a smoothstep, a before and b after.
double Ramp(double t, double t0, double t1, double a, double b) {
  if (t <= t0) return a;
  if (t >= t1) return b;
  const double s = (t - t0) / (t1 - t0);
  return a + (b - a) * s * s * (3 - 2 * s);
}

// The pick-and-place script (the servos' targets, m): close both fingers to kGrip, lift to
// kCarry (the tomato's bottom about 3.5 cm above the platform's top), move over the scale, lower
// until the tomato rests on the platform, open, lift away. With place = false the gripper holds
// the tomato at kCarry from kLiftEnd on.
constexpr double kGrip = 0.043;   // m of closing; the scene's docstring: about 5.5 N per finger
constexpr double kCarry = 0.085;  // m of lift
constexpr double kScaleX = 0.25;  // m, the platform's centre
constexpr double kPlace = 0.051;  // m of lift: the tomato's bottom on the platform's top (0.05 m)
constexpr double kCloseEnd = 0.25, kLiftStart = 0.3, kLiftEnd = 0.7;  // s
constexpr double kMoveEnd = 1.4, kLowerEnd = 1.9, kOpenStart = 2.0, kOpenEnd = 2.2;
constexpr double kRetractEnd = 2.6, kSequenceEnd = 3.4;

void Script(const TomatoScene& s, double t, bool place, Data& d) {
  const double grip = Ramp(t, 0, kCloseEnd, 0, kGrip);
  double lift = Ramp(t, kLiftStart, kLiftEnd, 0, kCarry), x = 0;
  double open = grip;
  if (place) {
    x = Ramp(t, kLiftEnd, kMoveEnd, 0, kScaleX);
    lift = Ramp(t, kMoveEnd, kLowerEnd, lift, kPlace);
    open = Ramp(t, kOpenStart, kOpenEnd, grip, -0.005);
    lift = Ramp(t, kOpenEnd, kRetractEnd, lift, 0.12);
  }
  d.ctrl[s.slide_x] = x;
  d.ctrl[s.lift] = lift;
  d.ctrl[s.left] = open;
  d.ctrl[s.right] = open;
}

int Steps(const Model& m, double seconds) {
  return static_cast<int>(std::lround(seconds / m.timestep));
}

// (a) Digest 9.2 item 1 and 14 test 20: the mechanical scale reads the tomato's weight. The tomato
// starts 1 mm above the platform's centre (the gripper open and held up by its servos), falls and
// settles for 0.6 s (Newton tolerance 1e-6), then takes 3 steps at 1e-9. Then k times the
// platform's deflection equals m g (1%: the static balance is exact, so this bounds what is left
// of the settling), m the sum of the model's lumped vertex masses; the platform's vertex contacts
// carry m g + dP/dt, the tomato's momentum change over the last step (1e-7 m g: the Newton
// tolerance), and m g itself to 1e-4 (what dP/dt leaves of the settling: its vertices still move
// at up to 1e-6 m/s, m v / h = 2e-5 N is 1e-5 m g).
TEST(NsnCouplingTest, TheScaleReadsTheTomatosWeight) {
  const double half_height = 0.035 / std::sqrt(1.25), thickness = 0.001, platform_top = 0.05;
  const auto model =
      LoadTomatoScene("0.25 0 " + Num(platform_top + thickness + half_height + 0.001));
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  const TomatoScene scene(m);
  Data d(m);
  const double weight = DeformableMass(m) * kGravity;
  EXPECT_NEAR(DeformableMass(m), 0.1609, 0.0001);  // the generator's figure
  EXPECT_NEAR(scene.Reading(m, d), 0, 1e-12);      // tared
  for (int n = 0; n < Steps(m, 0.6); ++n) {
    ASSERT_EQ(Step(m, d, TightNsn(1e-6)), StepStatus::kOk) << n;
  }
  for (int n = 0; n < 2; ++n) ASSERT_EQ(Step(m, d, TightNsn()), StepStatus::kOk) << n;
  Vec3 momentum = Vec3::Zero();
  for (int v = 0; v < m.nvert; ++v) momentum -= m.vert_mass[v] * d.vert_xvel[v];
  ASSERT_EQ(Step(m, d, TightNsn()), StepStatus::kOk);
  for (int v = 0; v < m.nvert; ++v) momentum += m.vert_mass[v] * d.vert_xvel[v];
  const double rate = momentum.z() / m.timestep;  // dP_z / dt over the last step, N
  EXPECT_EQ(Figure(d, "unconverged_islands"), 0);
  EXPECT_NEAR(scene.Reading(m, d), weight, 0.01 * weight);
  EXPECT_NEAR(ContactForce(m, d, scene.platform_geom), weight + rate, 1e-7 * weight);
  EXPECT_NEAR(ContactForce(m, d, scene.platform_geom), weight, 1e-4 * weight);
  EXPECT_NEAR(ContactForce(m, d, -1), ContactForce(m, d, scene.platform_geom), 1e-12);
  EXPECT_LT(FastestVertex(m, d), 1e-5);
  EXPECT_GT(LowestVertex(m, d), platform_top - 0.01);  // on the platform
  EXPECT_GE(d.vertex_contact.size(), 3u);
  std::printf(
      "scale reading %.9f N, m g %.9f N, platform contacts %.9f N, %zu vertex contacts, fastest "
      "vertex %.3g m/s, dP/dt %.3g N\n",
      scene.Reading(m, d), weight, ContactForce(m, d, scene.platform_geom), d.vertex_contact.size(),
      FastestVertex(m, d), rate);
}

// (b) Digest 14 test 20: a tomato grasped by the two fingers (about 5.5 N each at mu 0.75 against
// its 1.58 N weight) and lifted 8.5 cm off the floor slips less than 1 mm in 2 s relative to the
// fingers while the servos hold the palm still: its centre of mass relative to the fingers'
// midpoint, and every vertex touching a finger relative to that finger, move less than 1 mm from
// 0.1 s after the lift to 2 s later. Every step at Newton tolerance 1e-6 (the solver's default:
// position rows hold to 1 um, the momentum to 1e-6 relative; 1e-9 would double the run time,
// which is already about 35 s of CPU: the hold alone is 241 steps of about 900 linear iterations);
// the steps of the hold must all converge (those where the fingers first touch need not: contact
// onset does not converge within 200 iterations, counted in the test's output).
TEST(NsnCouplingTest, AGraspedTomatoDoesNotSlip) {
  const auto model = LoadTomatoScene();
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  const TomatoScene scene(m);
  Data d(m);
  // 50 linear iterations per Newton iteration: the default 100 never reach their 1e-8 here, and
  // half as many take as few Newton iterations (18 against 19); the steps before the hold at most
  // 50 Newton iterations (the default), since the contact onset does not converge in 200 either.
  StepOptions options = TightNsn(1e-6);
  options.solver.nsn.linear_iterations = 50;
  StepOptions approach = options;
  approach.solver.nsn.newton_iterations = 50;
  const int hold = Steps(m, kLiftEnd + 0.1), end = hold + Steps(m, 2.0);
  Vec3 start = Vec3::Zero();
  std::vector<int> touching;
  std::vector<Vec3> offset;  // each touching vertex from its finger's origin (the fingers slide)
  int unconverged_before = 0, unconverged_hold = 0;
  for (int n = 0; n < end; ++n) {
    Script(scene, d.time, false, d);
    ASSERT_EQ(Step(m, d, n < hold ? approach : options), StepStatus::kOk) << n;
    const int unconverged = static_cast<int>(Figure(d, "unconverged_islands"));
    (n < hold ? unconverged_before : unconverged_hold) += unconverged;
    if (n + 1 == hold) {
      start = CentreOfMass(m, d) - scene.Fingers(d);
      for (const VertexContact& c : d.vertex_contact) {
        if (c.geom != scene.left_geom && c.geom != scene.right_geom) continue;
        touching.push_back(c.vertex);
        const int body = c.geom == scene.left_geom ? scene.left_body : scene.right_body;
        offset.push_back(d.vert_xpos[c.vertex] - d.xpos[body]);
      }
    }
  }
  EXPECT_EQ(unconverged_hold, 0);
  // Lifted: off the floor, nothing but the fingers touching it.
  EXPECT_GT(LowestVertex(m, d), 0.07);
  for (const VertexContact& c : d.vertex_contact) {
    EXPECT_TRUE(c.geom == scene.left_geom || c.geom == scene.right_geom) << c.geom;
  }
  ASSERT_GE(touching.size(), 2u);
  const double slip = (CentreOfMass(m, d) - scene.Fingers(d) - start).norm();
  EXPECT_LT(slip, 1e-3);
  double worst = 0;
  for (size_t k = 0; k < touching.size(); ++k) {
    const int v = touching[k];
    const int body = d.vert_xpos[v].y() > 0 ? scene.left_body : scene.right_body;
    worst = std::max(worst, (d.vert_xpos[v] - d.xpos[body] - offset[k]).norm());
  }
  EXPECT_LT(worst, 1e-3);
  // The squeeze: each finger's contacts push with more than the weight / (2 mu) friction needs.
  const double weight = DeformableMass(m) * kGravity;
  const double squeeze =
      std::min(ContactForce(m, d, scene.left_geom), ContactForce(m, d, scene.right_geom));
  EXPECT_GT(squeeze, weight / (2 * 0.75));
  std::printf(
      "slip: centre %.3g m, contact vertices %.3g m (%zu); squeeze %.4f N, weight %.4f N; "
      "unconverged steps before the hold %d\n",
      slip, worst, touching.size(), squeeze, weight, unconverged_before);
}

// (c) A resting voxel cube alone on the floor (3 x 3 x 3 cells of 2 cm, 162 Kuhn tets, corotated,
// Y 1e5, nu 0.3, mu 0.5, h 0.0083 s), built resting on it: its vertex contacts carry m g (1e-6).
// (nsn_deformable_test.cc checks this for a frictionless 1 x 1 x 6 column; its cubes share the
// floor with rigid bodies, at 1e-5.)
TEST(NsnCouplingTest, ARestingTetCubesContactsCarryItsWeight) {
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(3, 3, 3, 0.02, 0.02, 0.02);
  const std::string scene =
      "<mujoco><option timestep='0.0083'/><custom><text name='alsim:deformables' "
      "data='soft.xml'/></custom><worldbody><geom name='floor' type='plane' size='1 1 0.1' "
      "friction='0.5'/></worldbody></mujoco>";
  const std::string companion =
      "<deformables><deformable name='cube' young='1e5' poisson='0.3' density='1000' "
      "friction='0.5' thickness='0'>" +
      testing::TetMeshXml(grid) + "</deformable></deformables>";
  const ModelImport imported = ImportModelFromString(scene, {{"soft.xml", companion}}, "s.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  ASSERT_EQ(m.nvert, 64);
  Data d(m);
  for (int n = 0; n < 60; ++n) ASSERT_EQ(Step(m, d, TightNsn()), StepStatus::kOk) << n;
  const double weight = DeformableMass(m) * kGravity;
  EXPECT_NEAR(DeformableMass(m), 1000 * 0.06 * 0.06 * 0.06, 1e-12);
  EXPECT_NEAR(ContactForce(m, d, 0), weight, 1e-6 * weight);
  EXPECT_EQ(d.vertex_contact.size(), 16u);  // the bottom layer's 4 x 4 vertices
  EXPECT_EQ(Figure(d, "unconverged_islands"), 0);
  std::printf("cube: contacts %.12f N, m g %.12f N\n", ContactForce(m, d, 0), weight);
}

// (d) The tomato scene (closing and first contact, at the paper's fixed counts) gives the same
// state hash for 1, 2 and 8 threads.
std::uint64_t TomatoHash(const Model& m, int threads, int steps) {
  const TomatoScene scene(m);
  Data d(m);
  RunWithThreads(threads, [&] {
    for (int n = 0; n < steps; ++n) {
      Script(scene, d.time, true, d);
      EXPECT_EQ(Step(m, d, PapersCounts()), StepStatus::kOk);
    }
  });
  EXPECT_FALSE(d.vertex_contact.empty());
  return StateHash(m, d);
}

TEST(NsnCouplingTest, TheTomatoSceneIsBitIdenticalForOneTwoAndEightThreads) {
  const auto model = LoadTomatoScene();
  ASSERT_NE(model, nullptr);
  const int steps = Steps(*model, kLiftStart + 0.1);
  const std::uint64_t one = TomatoHash(*model, 1, steps);
  EXPECT_EQ(TomatoHash(*model, 2, steps), one);
  EXPECT_EQ(TomatoHash(*model, 8, steps), one);
}

// The converged pick and place (Newton tolerance 1e-6, at most 200 iterations, default linear
// budget) steps to the end with the scale reading m g (disabled: about 2 minutes; run by hand). It
// returned StepStatus::kDiverged at step 367 (t = 3.05 s), 0.45 s after the gripper let go, until
// Fischer-Burmeister's norm was taken by hypot (engine/solver/nsn/ncp.cc); the next test covers
// the cause in CI.
TEST(NsnCouplingTest, DISABLED_ConvergedPickAndPlaceStepsToTheEnd) {
  const auto model = LoadTomatoScene();
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  const TomatoScene scene(m);
  Data d(m);
  for (int n = 0; n < Steps(m, kSequenceEnd); ++n) {
    Script(scene, d.time, true, d);
    const StepStatus status = Step(m, d, TightNsn(1e-6));
    if (n >= Steps(m, kRetractEnd) - 2 || status != StepStatus::kOk) {
      std::printf(
          "step %d t %.4f: status %d newton %g (max %g) linear %g unconverged %g momentum %.3g "
          "row %.3g contacts %zu+%zu+%zu fastest vertex %.3g lowest %.5f scale q %.6g v %.3g\n",
          n, d.time, static_cast<int>(status), Figure(d, "newton_iterations"),
          Figure(d, "max_newton_iterations"), Figure(d, "linear_iterations"),
          Figure(d, "unconverged_islands"), Figure(d, "momentum_residual"),
          Figure(d, "row_residual"), d.vertex_contact.size(), d.triangle_contact.size(),
          d.contact.size(), FastestVertex(m, d), LowestVertex(m, d),
          d.qpos[m.jnt_qpos_adr[scene.scale_joint]], d.qvel[m.jnt_qpos_adr[scene.scale_joint]]);
    }
    ASSERT_EQ(status, StepStatus::kOk) << n;
  }
  const double weight = DeformableMass(m) * kGravity;
  EXPECT_NEAR(scene.Reading(m, d), weight, 0.01 * weight);
}

// Regression: the gripper alone (the scene without its custom text) under the same script at
// Newton tolerance 1e-6 turned NaN at step 367. The opened fingers rest on their lower limit
// (-0.005 m, where the script's servos also pull them) and their velocity decays by about 100 per
// step (1e-161 m/s at step 366), until the limit rows' a and r b were so small that
// a^2 + (r b)^2 underflowed to 0 in FischerBurmeisterNcp (then a / q = 0 / 0); its norm is now
// std::hypot (tests/solver/nsn_ncp_test.cc: FischerBurmeisterIsFiniteNearItsKink).
TEST(NsnCouplingTest, TheGripperAloneStepsToTheEnd) {
  std::string xml = ReadFile(Scenes() + "/nsn_tomato.xml");
  const size_t a = xml.find("<custom>"), b = xml.find("</custom>") + 9;
  ASSERT_NE(a, std::string::npos);
  xml.erase(a, b - a);
  const ModelImport imported = ImportModelFromString(xml, {}, "gripper.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  ASSERT_EQ(m.nvert, 0);
  const TomatoScene scene(m);
  Data d(m);
  for (int n = 0; n < Steps(m, kSequenceEnd); ++n) {
    Script(scene, d.time, true, d);
    ASSERT_EQ(Step(m, d, TightNsn(1e-6)), StepStatus::kOk) << "step " << n;
  }
}

// The benchmark for BENCHMARKS.md (not a test: it asserts only that the steps succeed): the whole
// pick and place, at Table 2's fixed counts (4 Newton x 50 linear) and converged (Newton
// tolerance 1e-6, at most 200 iterations), each at 1 and 2 threads, printing ms per step,
// contacts per step (vertex, triangle and rigid), the final residuals, the largest penetration
// the solver saw, and where the tomato ended (the scale's reading). Run:
//   build/bin/nsn_coupling_tests --gtest_also_run_disabled_tests
//       --gtest_filter='*DISABLED_PickAndPlaceBenchmark'   (one line)
TEST(NsnCouplingTest, DISABLED_PickAndPlaceBenchmark) {
  const auto model = LoadTomatoScene();
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  const TomatoScene scene(m);
  const int steps = Steps(m, kSequenceEnd);
  // Table 2's 4 x 50 with nsn's default friction memory, with the paper's W (memory 0), and
  // converged.
  for (const int variant : {0, 1, 2}) {
    const bool papers = variant < 2;
    StepOptions options = papers ? PapersCounts() : TightNsn(1e-6);
    if (variant == 1) options.solver.nsn.friction_memory = 0;
    for (const int threads : {1, 2}) {
      Data d(m);
      double wall = 0, wall2 = 0, contacts = 0, assembly = 0, linear = 0, penetration = 0;
      double newton = 0, linear_iterations = 0;
      int most = 0, unconverged = 0, done = 0;
      double carried = 0;  // the tomato's lowest vertex at the end of the move, m
      RunWithThreads(threads, [&] {
        for (int n = 0; n < steps; ++n) {
          Script(scene, d.time, true, d);
          const auto t0 = std::chrono::steady_clock::now();
          if (Step(m, d, options) != StepStatus::kOk) {
            std::printf("step %d (t = %.4f s) did not return kOk; the run stops there\n", n,
                        d.time);
            break;
          }
          ++done;
          const double s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          wall += s;
          wall2 += s * s;
          const int count = static_cast<int>(d.vertex_contact.size() + d.triangle_contact.size() +
                                             d.contact.size());
          contacts += count;
          most = std::max(most, count);
          assembly += Figure(d, "assembly_seconds");
          linear += Figure(d, "linear_seconds");
          newton += Figure(d, "newton_iterations");
          linear_iterations += Figure(d, "linear_iterations");
          unconverged += static_cast<int>(Figure(d, "unconverged_islands"));
          penetration = std::max(penetration, Figure(d, "max_penetration"));
          if (n + 1 == Steps(m, kMoveEnd)) carried = LowestVertex(m, d);
        }
      });
      const double per = std::max(done, 1);
      const double mean = wall / per;
      std::printf(
          "%s, threads %d: %d steps, %.2f ms/step (std %.2f), assembly %.3f ms, linear %.2f ms "
          "(solver's CPU seconds summed over systems), newton %.1f and linear %.0f iterations per "
          "step, unconverged %d, contacts %.1f per step (most %d), final momentum residual "
          "%.3g, row residual %.3g, max penetration %.3g m; tomato's bottom %.4f m after the "
          "move, end: scale %.4f N (m g %.4f N), centre x %.4f m\n",
          variant == 0   ? "4 x 50"
          : variant == 1 ? "4 x 50, paper's W"
                         : "tol 1e-6",
          threads, done, 1e3 * mean, 1e3 * std::sqrt(std::max(0.0, wall2 / per - mean * mean)),
          1e3 * assembly / per, 1e3 * linear / per, newton / per, linear_iterations / per,
          unconverged, contacts / per, most, Figure(d, "momentum_residual"),
          Figure(d, "row_residual"), penetration, carried, scene.Reading(m, d),
          DeformableMass(m) * kGravity, CentreOfMass(m, d).x());
    }
  }
}

// The experiment behind the benchmark's finding that Table 2's 4 x 50 drops the tomato: the grasp,
// lift and move (to kMoveEnd) under fixed budgets N Newton x M linear (no tolerances), printing
// how far the tomato slid down relative to the fingers (its centre of mass from their midpoint,
// from the end of the closing to the end of the move) and its bottom's height (0.0845 m: held).
// Run:
//   build/bin/nsn_coupling_tests --gtest_also_run_disabled_tests
//       --gtest_filter='*DISABLED_GraspUnderFixedBudgets'   (one line)
TEST(NsnCouplingTest, DISABLED_GraspUnderFixedBudgets) {
  const auto model = LoadTomatoScene();
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  const TomatoScene scene(m);
  // N, M, NsnParameters::friction_memory (0.5: nsn's default; 0: the paper's W).
  const double budgets[][3] = {{4, 50, 0.5}, {4, 100, 0.5}, {4, 200, 0.5},
                               {8, 50, 0.5}, {16, 50, 0.5}, {32, 50, 0.5},
                               {4, 50, 0},   {4, 200, 0},   {8, 50, 0}};
  for (const auto& budget : budgets) {
    StepOptions options = PapersCounts();
    options.solver.nsn.newton_iterations = static_cast<int>(budget[0]);
    options.solver.nsn.linear_iterations = static_cast<int>(budget[1]);
    options.solver.nsn.friction_memory = budget[2];
    Data d(m);
    Vec3 closed = Vec3::Zero();
    bool ok = true;
    for (int n = 0; n < Steps(m, kMoveEnd) && ok; ++n) {
      Script(scene, d.time, true, d);
      ok = Step(m, d, options) == StepStatus::kOk;
      if (n + 1 == Steps(m, kLiftStart)) closed = CentreOfMass(m, d) - scene.Fingers(d);
    }
    const Vec3 slid = CentreOfMass(m, d) - scene.Fingers(d) - closed;
    std::printf("%2g x %3g, friction memory %g: %s, slid %.4f m (z %.4f m), bottom %.4f m\n",
                budget[0], budget[1], budget[2], ok ? "ok" : "failed", slid.norm(), slid.z(),
                LowestVertex(m, d));
  }
}

}  // namespace
}  // namespace alsim
