// The PneuNet gripper of Macklin et al. 2019 under --solver nsn (issue 48; digest seed-002-nsn.md
// 9.2 item 5 and Table 2's PneuNet row; scenes/nsn_pneunet.xml, scenes/generate_nsn_pneunet.py):
// soft fingers whose outer layers (the "arch") an activation grows by 1 + a while the inner
// "paper" layer stays unactivated, so that a finger curls toward its unactivated side.
//   (a) one finger pinned at its base, no gravity: inflating it curls it inward, more at a larger
//       activation, and a = 0 leaves it straight; its curvature against Timoshenko's bimetal strip.
//   (b) a reduced gripper (the scene's geometry with coarser fingers): inflated fingers lift the
//       ball with the palm; uninflated ones leave it on the floor.
//   (c) the scene file loads as generated (sizes, names, masses).
// (a) runs at Newton tolerance 1e-8 with up to 10 Newton x 1000 linear iterations (the tets' rows
// stall just above it: Converged()), (b) at the engine's default tolerances with up to 12 x 200
// (GripperOptions()); the paper's fixed counts (4 x 80) only in the disabled benchmark at the end,
// which prints Table 2's columns for BENCHMARKS.md on the scene itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/nsn/nsn_solver.h"
#include "engine/solver/solver.h"
#include "tests/support/kuhn_grid.h"
#include "tests/support/nsn_deformables.h"
#include "tests/support/solver_figures.h"

namespace alsim {
namespace {

using testing::Figure;

constexpr double kPi = 3.14159265358979323846;

std::string Scenes() { return ALSIM_SCENES_DIR; }

std::string Num(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", x);
  return text;
}

// The finger tests' options: Newton tolerance 1e-8 with 10 Newton iterations of up to 1000 PCR
// iterations (linear tolerance 1e-10). The tets' rows (Y = 1e7 Pa on 5 mm cells) stall near a
// row residual of 1e-7, above tol / h, so every step reports its island unconverged; the shape
// is converged all the same: 4 Newton x 300 linear moves the tip by 1% and 6 x 500 by 0.4%, and
// 10 x 1000 at h = 0.1 s and at h = 1 s agree to 1e-6 m.
StepOptions Converged() {
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  options.solver.nsn.newton_tolerance = 1e-8;
  options.solver.nsn.newton_iterations = 10;
  options.solver.nsn.linear_iterations = 1000;
  options.solver.nsn.linear_tolerance = 1e-10;
  return options;
}

// The gripper's: the engine's default tolerances (Newton 1e-6, linear 1e-8) with at most 8 Newton
// x 100 linear iterations, which a 30 s test affords (the islands stay unconverged: see above).
StepOptions GripperOptions() {
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  options.solver.nsn.newton_tolerance = 1e-6;
  options.solver.nsn.newton_iterations = 12;
  options.solver.nsn.linear_iterations = 200;
  options.solver.nsn.linear_tolerance = 1e-8;
  return options;
}

// Table 2's PneuNet budget: 4 Newton iterations of 80 linear ones, no tolerances.
StepOptions PapersCounts() { return testing::NsnFixedCounts(4, 80); }

int Steps(const Model& m, double seconds) {
  return static_cast<int>(std::lround(seconds / m.timestep));
}

int Index(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << name;
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// A finger: a Kuhn grid of nx x ny x nz cells, x through its thickness (x = 0 the inner, paper
// side), y across its width, z along its length (z = 0 the tip, z = nz the base), as the
// generator builds them.
struct FingerShape {
  int nx = 3, ny = 2, nz = 21;
  double dx = 0.005, dy = 0.008, dz = 0.005;  // m
  int paper_cells = 1;                        // inner x cells never activated
  bool activate_base_row = true;              // whether the base's cell row is in the arch
  testing::KuhnGrid Grid() const { return testing::MakeKuhnGrid(nx, ny, nz, dx, dy, dz); }
  // The arch's tets (MakeKuhnGrid's order: six per cell, x fastest, then y, then z).
  std::string Arch() const {
    std::string tets;
    for (int e = 0; e < 6 * nx * ny * nz; ++e) {
      const int cell = e / 6, x = cell % nx, z = cell / (nx * ny);
      if (x >= paper_cells && (activate_base_row || z < nz - 1)) tets += std::to_string(e) + " ";
    }
    return tets;
  }
  std::string Base(const testing::KuhnGrid& grid) const {
    std::string ids;
    for (int y = 0; y <= ny; ++y) {
      for (int x = 0; x <= nx; ++x) ids += std::to_string(grid.Id(x, y, nz)) + " ";
    }
    return ids;
  }
};

std::string Material(double poisson) {
  return "material='linear' young='1e7' poisson='" + Num(poisson) +
         "' density='1200' friction='0.7' thickness='0.001'";
}

// (a) One finger (the scene's: 3 x 2 x 21 cells of 5 x 8 x 5 mm, linear, Y 1e7 Pa, rho 1200), its
// base pinned, no gravity, its arch (the outer two layers, the whole length) activated at a, two
// steps of h = 0.1 s: quasi-static (implicit Euler damps the finger's first mode, about 20 Hz,
// by 1 / (1 + (omega h)^2) ~ 1/160 a step; h = 1 s gives the same shape to 1e-6 m).
struct BentFinger {
  double tip_x = 0;      // the tip layer's mean x displacement, m (< 0: inward)
  double tip_z = 0;      // the tip layer's mean z displacement, m
  double curvature = 0;  // of the mid-line over the middle half, 1/m (> 0: curling inward)
  int unconverged = 0;
};

BentFinger BendFinger(double poisson, double a, int steps) {
  const FingerShape shape;
  const testing::KuhnGrid grid = shape.Grid();
  const std::string scene =
      "<mujoco><option timestep='0.1' gravity='0 0 0'/><custom><text "
      "name='alsim:deformables' data='soft.xml'/></custom><worldbody/></mujoco>";
  const std::string companion = "<deformables><deformable name='finger' " + Material(poisson) +
                                ">" + testing::TetMeshXml(grid) + "<pin vertices='" +
                                shape.Base(grid) + "'/><activation name='inflate' tets='" +
                                shape.Arch() + "' range='0 0.2'/></deformable></deformables>";
  const ModelImport imported = ImportModelFromString(scene, {{"soft.xml", companion}}, "s.xml");
  EXPECT_TRUE(imported) << imported.error;
  BentFinger out;
  if (!imported) return out;
  const Model& m = *imported.model;
  EXPECT_EQ(m.ntet, 756);
  Data d(m);
  d.ctrl[Index(m.actuator_name, "inflate")] = a;
  for (int n = 0; n < steps; ++n) {
    EXPECT_EQ(Step(m, d, Converged()), StepStatus::kOk) << n;
    out.unconverged += static_cast<int>(Figure(d, "unconverged_islands"));
  }
  // The mid-line: each layer's mean point; its angle from z in the xz-plane.
  std::vector<Vec3> line(shape.nz + 1, Vec3::Zero()), rest(shape.nz + 1, Vec3::Zero());
  const double per_layer = (shape.nx + 1) * (shape.ny + 1);
  for (int z = 0; z <= shape.nz; ++z) {
    for (int y = 0; y <= shape.ny; ++y) {
      for (int x = 0; x <= shape.nx; ++x) {
        line[z] += d.vert_xpos[grid.Id(x, y, z)] / per_layer;
        rest[z] += m.vert_pos0[grid.Id(x, y, z)] / per_layer;
      }
    }
  }
  out.tip_x = line[0].x() - rest[0].x();
  out.tip_z = line[0].z() - rest[0].z();
  // Sections k1 = nz / 4 and k2 = 3 nz / 4: the turn of the tangent over the arc between them.
  const auto angle = [&](int k) {
    const Vec3 t = line[k + 1] - line[k - 1];  // from the tip toward the base
    return std::atan2(t.x(), t.z());
  };
  const int k1 = shape.nz / 4, k2 = shape.nz - shape.nz / 4;
  double arc = 0;
  for (int k = k1; k < k2; ++k) arc += (line[k + 1] - line[k]).norm();
  // Curling inward (toward -x at the tip): going from the tip to the base the tangent turns from
  // pointing outward (+x) back toward +z, so the angle decreases.
  out.curvature = (angle(k1) - angle(k2)) / arc;
  return out;
}

// Timoshenko (1925): a bimetal strip of thicknesses h1, h2 (m = h1 / h2) and moduli E1, E2
// (n = E1 / E2) under a free-strain mismatch eps curls with
//   1 / rho = 6 eps (1 + m)^2 / (h (3 (1 + m)^2 + (1 + m n)(m^2 + 1 / (m n)))),  h = h1 + h2.
double Timoshenko(double eps, double h1, double h2, double n) {
  const double m = h1 / h2, h = h1 + h2;
  return 6 * eps * (1 + m) * (1 + m) /
         (h * (3 * (1 + m) * (1 + m) + (1 + m * n) * (m * m + 1 / (m * n))));
}

TEST(NsnPneuNetTest, AnInflatedFingerCurlsTowardItsPaperLayer) {
  const BentFinger straight = BendFinger(0.47, 0, 2);
  EXPECT_LT(std::abs(straight.tip_x), 1e-12);  // no load at all: it stays where it was built
  EXPECT_LT(std::abs(straight.tip_z), 1e-12);
  double previous = 0;
  for (const double a : {0.02, 0.05}) {
    const BentFinger bent = BendFinger(0.47, a, 2);
    EXPECT_LT(bent.tip_x, previous - 1e-3) << a;  // inward, more at the larger activation
    EXPECT_GT(bent.curvature, 0) << a;
    const double expected = Timoshenko(a, 0.005, 0.010, 1);
    std::printf(
        "nu 0.47, a %.3f: tip x %.5f m, z %.5f m, curvature %.4f 1/m, Timoshenko %.4f 1/m, "
        "ratio %.4f, unconverged steps %d\n",
        a, bent.tip_x, bent.tip_z, bent.curvature, expected, bent.curvature / expected,
        bent.unconverged);
    previous = bent.tip_x;
  }
}

// The curvature against Timoshenko's formula with equal moduli, m = 5 / 10 mm and the mismatch a
// (1 / rho = 1.333 a / 15 mm). nu = 0: no Poisson coupling between the layers across the width.
// a = 0.005: the middle half turns by about 0.02 rad, where the linear material's spurious
// strain of rotation (1 - cos) is 4% of a. Constant-strain tets through three layers lock in
// bending, so the finger curls less than the strip; the measured ratio is 0.733. Asserted: below
// 1.05 (a displacement-based mesh is too stiff, not too soft) and above 0.5, which a growth of the
// rest shape by 1 + a in volume instead of length (a / 3 of strain, ratio 0.24) would fail.
TEST(NsnPneuNetTest, AFingersCurvatureFollowsTheBimetalStrip) {
  const double a = 0.005;
  const BentFinger bent = BendFinger(0, a, 2);
  const double expected = Timoshenko(a, 0.005, 0.010, 1);
  std::printf(
      "nu 0, a %.3f: tip x %.6f m, curvature %.5f 1/m, Timoshenko %.5f 1/m, ratio %.4f, "
      "unconverged steps %d\n",
      a, bent.tip_x, bent.curvature, expected, bent.curvature / expected, bent.unconverged);
  EXPECT_GT(bent.curvature, 0);
  EXPECT_LT(bent.curvature, expected * 1.05);
  EXPECT_GT(bent.curvature, expected * 0.5);
}

// (b) The gripper with coarser fingers (2 x 1 x 7 cells of 7.5 x 16 x 15 mm: 84 tets each, the
// scene's 15 x 16 x 105 mm finger; one paper layer and one arch layer, the base row not in the
// arch), otherwise the scene's: R_IN 0.044 m, tips 0.025 m up, ball 0.04 m 0.32 kg mu 0.7, palm
// 0.5 kg on a lift servo kp 3000 N/m, damping 100 N s/m. The full scene (2268 tets) takes about
// 0.23 s a step at the paper's 4 x 80 on one core and several at this test's 12 x 200: too slow
// for a test. Script: activations ramp to `a` over 0.25 s, hold 0.1 s, the lift target ramps to
// 0.05 m over 0.35 s, hold 0.15 s.
struct Gripper {
  std::shared_ptr<const Model> model;
  int lift = -1, ball = -1, palm = -1;
  std::vector<int> fingers;  // actuators
};

Gripper MakeGripper() {
  FingerShape shape;
  shape.nx = 2;
  shape.ny = 1;
  shape.nz = 7;
  shape.dx = 0.0075;
  shape.dy = 0.016;
  shape.dz = 0.015;
  shape.activate_base_row = false;
  const double r_in = 0.044, tip_z = 0.025, length = shape.nz * shape.dz;
  const testing::KuhnGrid grid = shape.Grid();
  std::string fingers;
  for (int i = 0; i < 3; ++i) {
    const double phi = 2 * kPi * i / 3, c = std::cos(phi), s = std::sin(phi);
    std::string vertices, tets;
    for (const Vec3& p : grid.points) {
      const double r = r_in + p.x(), t = p.y() - shape.ny * shape.dy / 2;
      vertices += Num(r * c - t * s) + " " + Num(r * s + t * c) + " " + Num(tip_z + p.z()) + " ";
    }
    for (const auto& t : grid.tets) {
      for (int k = 0; k < 4; ++k) tets += std::to_string(t[k]) + " ";
    }
    const std::string name = "finger" + std::to_string(i);
    fingers += "<deformable name='" + name + "' " + Material(0.47) + "><tetmesh vertices='" +
               vertices + "' tets='" + tets + "'/><attach body='palm' vertices='" +
               shape.Base(grid) + "'/><activation name='" + name + "' tets='" + shape.Arch() +
               "' range='0 0.2'/></deformable>";
  }
  const std::string scene =
      "<mujoco><option timestep='0.0083'/><custom><text name='alsim:deformables' "
      "data='soft.xml'/></custom><default><geom condim='3' friction='0.7 0.005 "
      "0.0001'/></default><worldbody><geom name='floor' type='plane' size='1 1 0.1'/><body "
      "name='palm' pos='0 0 " +
      Num(tip_z + length + 0.01) +
      "'><joint name='lift' type='slide' axis='0 0 1' limited='true' range='-0.02 0.15' "
      "damping='100'/><geom type='box' size='0.07 0.07 0.01' mass='0.5' contype='0' "
      "conaffinity='0'/></body><body name='ball' pos='0 0 0.04'><freejoint/><geom name='ball' "
      "type='sphere' size='0.04' mass='0.32'/></body></worldbody><actuator><position "
      "name='lift' joint='lift' kp='3000' ctrllimited='true' "
      "ctrlrange='-0.02 0.15'/></actuator></mujoco>";
  const ModelImport imported = ImportModelFromString(
      scene, {{"soft.xml", "<deformables>" + fingers + "</deformables>"}}, "s.xml");
  EXPECT_TRUE(imported) << imported.error;
  Gripper g;
  if (!imported) return g;
  g.model = imported.model;
  const Model& m = *g.model;
  g.lift = Index(m.actuator_name, "lift");
  g.ball = Index(m.body_name, "ball");
  g.palm = Index(m.body_name, "palm");
  for (int i = 0; i < 3; ++i)
    g.fingers.push_back(Index(m.actuator_name, "finger" + std::to_string(i)));
  return g;
}

// The z of a body's freejoint or slide (its first qpos along z), m.
double BallZ(const Model& m, const Data& d, int body) {
  return d.qpos[m.jnt_qpos_adr[m.body_jnt_adr[body]] + 2];
}

// From a to b over [t0, t1] along a smoothstep, a before and b after.
double Ramp(double t, double t0, double t1, double a, double b) {
  if (t <= t0) return a;
  if (t >= t1) return b;
  const double s = (t - t0) / (t1 - t0);
  return a + (b - a) * s * s * (3 - 2 * s);
}

constexpr double kInflateEnd = 0.25, kLiftStart = 0.35, kLiftEnd = 0.7, kHoldEnd = 0.85;  // s
constexpr double kLift = 0.05;                                                            // m

void GraspScript(const Model& m, const std::vector<int>& fingers, int lift, double a, Data& d) {
  (void)m;
  for (const int f : fingers) d.ctrl[f] = Ramp(d.time, 0, kInflateEnd, 0, a);
  d.ctrl[lift] = Ramp(d.time, kLiftStart, kLiftEnd, 0, kLift);
}

struct GraspResult {
  double ball_rise = 0;         // m, the ball's centre above where it started
  double palm_rise = 0;         // m
  double ball_before_lift = 0;  // m, the ball's rise when the lift starts
  int unconverged = 0;
};

GraspResult Grasp(const Gripper& g, double a, const StepOptions& options) {
  const Model& m = *g.model;
  Data d(m);
  const double ball0 = BallZ(m, d, g.ball), palm0 = d.qpos[0];
  GraspResult out;
  for (int n = 0; n < Steps(m, kHoldEnd); ++n) {
    GraspScript(m, g.fingers, g.lift, a, d);
    EXPECT_EQ(Step(m, d, options), StepStatus::kOk) << n;
    out.unconverged += static_cast<int>(Figure(d, "unconverged_islands"));
    if (n + 1 == Steps(m, kLiftStart)) out.ball_before_lift = BallZ(m, d, g.ball) - ball0;
  }
  out.ball_rise = BallZ(m, d, g.ball) - ball0;
  out.palm_rise = d.qpos[0] - palm0;
  return out;
}

// Inflated to a = 0.2 (the range's top; the coarse fingers lock more than the scene's: at the
// paper's 4 x 80 counts a = 0.1 slips and 0.15 holds) the fingers close under the ball and it
// rises with the palm: more than 2 cm for the palm's 5 cm. Limp (a = 0) the fingers slide up past
// it and it stays on the floor (2 mm).
TEST(NsnPneuNetTest, InflatedFingersLiftTheBallAndLimpOnesLeaveIt) {
  const Gripper g = MakeGripper();
  ASSERT_NE(g.model, nullptr);
  const GraspResult limp = Grasp(g, 0, GripperOptions());
  const GraspResult held = Grasp(g, 0.2, GripperOptions());
  std::printf(
      "limp: ball %.5f m, palm %.5f m (%d unconverged steps); inflated: ball %.5f m (%.5f m "
      "before the lift), palm %.5f m (%d)\n",
      limp.ball_rise, limp.palm_rise, limp.unconverged, held.ball_rise, held.ball_before_lift,
      held.palm_rise, held.unconverged);
  EXPECT_GT(limp.palm_rise, 0.045);
  EXPECT_LT(std::abs(limp.ball_rise), 0.002);
  EXPECT_GT(held.palm_rise, 0.045);
  EXPECT_GT(held.ball_rise, 0.02);
  // Held, not squeezed out: the curl alone does not lift it (at 8 x 100 iterations the
  // unconverged contacts pushed it up 1 cm before the lift and kept it creeping up after).
  EXPECT_LT(std::abs(held.ball_before_lift), 0.003);
}

// (c) The scene as generated: three fingers of 756 tets and 264 vertices, the activations
// finger0..finger2 after the lift, the palm carrying 12 vertices of each finger.
std::shared_ptr<const Model> LoadScene() {
  const ModelImport imported = ImportModelFromFile(Scenes() + "/nsn_pneunet.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

TEST(NsnPneuNetTest, TheSceneLoadsAsGenerated) {
  const auto model = LoadScene();
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  EXPECT_EQ(m.ndeform, 3);
  EXPECT_EQ(m.ntet, 3 * 756);
  EXPECT_EQ(m.nvert, 3 * 264);
  ASSERT_EQ(m.nu, 4);
  EXPECT_EQ(m.actuator_name[0], "lift");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m.actuator_name[1 + i], "finger" + std::to_string(i));
    EXPECT_EQ(m.activation_tet_num[i], 480);
  }
  const int palm = Index(m.body_name, "palm");
  int carried = 0;
  double mass = 0;
  for (int v = 0; v < m.nvert; ++v) {
    carried += m.vert_body[v] == palm;
    mass += m.vert_mass[v];
  }
  EXPECT_EQ(carried, 36);
  EXPECT_NEAR(mass, 3 * 1200 * 0.015 * 0.016 * 0.105, 1e-9);  // coordinates rounded to 1e-12 m
  EXPECT_NEAR(m.body_mass[Index(m.body_name, "ball")], 0.32, 1e-12);
  EXPECT_DOUBLE_EQ(m.timestep, 0.0083);
}

// The benchmark for BENCHMARKS.md (not a test: it asserts only that the steps succeed): the
// scene's grasp and lift (activations 0.1, lift 0.05 m) at Table 2's fixed counts (4 Newton x 80
// linear), at 1 and 2 threads, printing ms per step, contacts per step (vertex and triangle
// contacts; rigid pairs too), the final residuals, the largest penetration and the ball's rise.
// Run:
//   build/bin/nsn_pneunet_tests --gtest_also_run_disabled_tests
//       --gtest_filter='*DISABLED_GraspAndLiftAtThePapersCounts'   (one line)
constexpr double kSceneGrip = 0.2;
TEST(NsnPneuNetTest, DISABLED_GraspAndLiftAtThePapersCounts) {
  const auto model = LoadScene();
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  std::vector<int> fingers;
  for (int i = 0; i < 3; ++i)
    fingers.push_back(Index(m.actuator_name, "finger" + std::to_string(i)));
  const int lift = Index(m.actuator_name, "lift"), ball = Index(m.body_name, "ball");
  const int steps = Steps(m, kHoldEnd);
  // nsn's default friction memory, then the paper's W (friction_memory 0).
  for (const double memory : {NsnParameters{}.friction_memory, 0.0}) {
    StepOptions options = PapersCounts();
    options.solver.nsn.friction_memory = memory;
    for (const int threads : {1, 2}) {
      Data d(m);
      const double ball0 = BallZ(m, d, ball);
      double wall = 0, wall2 = 0, contacts = 0, assembly = 0, linear = 0, penetration = 0;
      int most = 0;
      RunWithThreads(threads, [&] {
        for (int n = 0; n < steps; ++n) {
          GraspScript(m, fingers, lift, kSceneGrip, d);
          const auto t0 = std::chrono::steady_clock::now();
          ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << n;
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
          penetration = std::max(penetration, Figure(d, "max_penetration"));
        }
      });
      const double mean = wall / steps;
      std::printf(
          "friction memory %g, threads %d: %d steps, %d tets, %.3f ms/step (std %.3f), assembly "
          "%.3f ms, linear %.3f ms, contacts %.1f per step (most %d), final momentum residual "
          "%.3g, row residual %.3g, max penetration %.3g m, ball rise %.4f m\n",
          memory, threads, steps, m.ntet, 1e3 * mean,
          1e3 * std::sqrt(std::max(0.0, wall2 / steps - mean * mean)), 1e3 * assembly / steps,
          1e3 * linear / steps, contacts / steps, most, Figure(d, "momentum_residual"),
          Figure(d, "row_residual"), penetration, BallZ(m, d, ball) - ball0);
    }
  }
}

// Not a test either (about 5 minutes): the scene's grasp and lift at the gripper test's budget
// (12 Newton x 200 linear, tolerances 1e-6 and 1e-8), printing the ball's rise every 0.083 s.
// Measured: the ball rises 5.63 cm with the palm's 4.9 cm (3 mm of it before the lift), max
// penetration 0.57 mm, every step unconverged (final row residual 9.6); at 4 x 80 it stays.
//   build/bin/nsn_pneunet_tests --gtest_also_run_disabled_tests
//       --gtest_filter='*DISABLED_TheScenesGraspAtTheTestsBudget'   (one line)
TEST(NsnPneuNetTest, DISABLED_TheScenesGraspAtTheTestsBudget) {
  const auto model = LoadScene();
  ASSERT_NE(model, nullptr);
  const Model& m = *model;
  std::vector<int> fingers;
  for (int i = 0; i < 3; ++i) {
    fingers.push_back(Index(m.actuator_name, "finger" + std::to_string(i)));
  }
  const int lift = Index(m.actuator_name, "lift"), ball = Index(m.body_name, "ball");
  Data d(m);
  const double ball0 = BallZ(m, d, ball);
  double penetration = 0;
  for (int n = 0; n < Steps(m, kHoldEnd); ++n) {
    GraspScript(m, fingers, lift, kSceneGrip, d);
    ASSERT_EQ(Step(m, d, GripperOptions()), StepStatus::kOk) << n;
    penetration = std::max(penetration, Figure(d, "max_penetration"));
    if ((n + 1) % 10 == 0) {
      std::printf("t %.3f s: ball rise %.4f m, lift %.4f m, %zu triangle and %zu vertex contacts\n",
                  d.time, BallZ(m, d, ball) - ball0, d.qpos[0], d.triangle_contact.size(),
                  d.vertex_contact.size());
    }
  }
  std::printf(
      "ball rise %.4f m, max penetration %.3g m, momentum residual %.3g, row residual %.3g\n",
      BallZ(m, d, ball) - ball0, penetration, Figure(d, "momentum_residual"),
      Figure(d, "row_residual"));
}

}  // namespace
}  // namespace alsim
