// Drumwright's first-order solver in the engine (--solver drumwright,
// engine/solver/drumwright/drumwright_solver.h) against closed forms: test A of the digest's
// section 12 through a contact (one step is implicit Euler on the spring law), static rests of
// contact, Hertz, equality and limit springs (D), a servo's step, the scene keys and their errors,
// the refusals, and bit-identical results for 1, 2 and 8 threads. The dense step's own tests
// (first_order_step_test.cc) cover the rest of A-L.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include "bench/drumwright_foundation.h"
#include "bench/drumwright_pendulum.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/drumwright/drumwright_solver.h"
#include "engine/solver/solver.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

constexpr double kGravity = 9.81;

std::shared_ptr<const Model> Import(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml, {}, "drumwright.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

std::string ImportError(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml, {}, "drumwright.xml");
  EXPECT_FALSE(imported);
  return imported.error;
}

StepOptions Drumwright() {
  StepOptions options;
  options.solver.type = SolverType::kDrumwright;
  return options;
}

std::string Num(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", x);
  return text;
}

// A sphere of radius 0.1 on a vertical slide over the ground (touching at qpos 0), its contact
// spring from the sphere's alsim:contact text `spring`.
std::shared_ptr<const Model> Particle(double mass, double friction, double h,
                                      const std::string& spring) {
  return Import("<mujoco><option timestep='" + Num(h) +
                "'/><custom><text name='alsim:contact:ball' data='" + spring +
                "'/></custom><worldbody><geom type='plane' size='5 5 0.1' friction='" +
                Num(friction) + "'/><body pos='0 0 0.1'><joint type='slide' axis='0 0 1'/>" +
                "<geom name='ball' type='sphere' size='0.1' mass='" + Num(mass) + "' friction='" +
                Num(friction) + "'/></body></worldbody></mujoco>");
}

// A: a particle at phi0 < 0 whose spring law pushes: v1 = (v0 + h (f - k phi0) / m) / (1 +
// (h b + h^2 k) / m), f = -m g, for k to 1e15 and h 1e-4..1e-2, with and without friction.
TEST(DrumwrightTest, AOneStepOfAContactIsImplicitEulerOnItsSpring) {
  const double m = 0.7, phi0 = -1e-3, v0 = -0.3;
  for (const double h : {1e-4, 1e-3, 1e-2}) {
    for (const double k : {1e4, 1e6, 1e9, 1e12, 1e15}) {
      for (const double b : {0.0, 5.0}) {
        for (const double mu : {0.0, 1.0}) {
          const auto model = Particle(m, mu, h, "stiffness " + Num(k) + " damping " + Num(b));
          Data d(*model);
          d.qpos[0] = phi0;
          d.qvel[0] = v0;
          ASSERT_EQ(Step(*model, d, Drumwright()), StepStatus::kOk);
          const double f = -m * kGravity;
          const double expected = (v0 + h * (f - k * phi0) / m) / (1 + (h * b + h * h * k) / m);
          const double scale = std::abs(v0) + h * (std::abs(f) + k * std::abs(phi0)) / m;
          EXPECT_NEAR(d.qvel[0], expected, 1e-12 * scale)
              << "h " << h << " k " << k << " b " << b << " mu " << mu;
          // The impulse is h times the spring law at the end of the step.
          const double phi1 = phi0 + h * expected;
          EXPECT_NEAR(d.constraints.lambda[0] / h, -k * phi1 - b * expected,
                      1e-9 * (k * std::abs(phi0) + m * kGravity));
        }
      }
    }
  }
}

// A on a Hertz contact: the row linearized at d0, K = (3/2) E* sqrt(r d0) on phi = -(2/3) d0,
// steps as implicit Euler on that spring.
TEST(DrumwrightTest, AHertzContactStepsOnItsLinearizedRow) {
  const double m = 0.7, h = 1e-3, modulus = 1e9, b = 3, r = 0.1;
  const auto model = Particle(m, 0.5, h, "hertz 1e9 damping 3");
  for (const double d0 : {1e-7, 1e-5, 1e-3}) {
    Data d(*model);
    d.qpos[0] = -d0;
    d.qvel[0] = -0.2;
    ASSERT_EQ(Step(*model, d, Drumwright()), StepStatus::kOk);
    const double k = 1.5 * modulus * std::sqrt(r * d0), phi0 = -2.0 / 3.0 * d0;
    const double f = -m * kGravity;
    const double expected = (-0.2 + h * (f - k * phi0) / m) / (1 + (h * b + h * h * k) / m);
    EXPECT_NEAR(d.qvel[0], expected, 1e-11 * (0.2 + h * (std::abs(f) + k * d0) / m)) << d0;
  }
}

// A contact at phi0 > 0 is no row (the paper has no speculative rows): free fall.
TEST(DrumwrightTest, AGapIsNoRow) {
  const auto model = Particle(1, 1, 1e-3, "stiffness 1e6");
  Data d(*model);
  d.qpos[0] = 1e-4;
  d.qvel[0] = -1;  // closes the gap within the step
  ASSERT_EQ(Step(*model, d, Drumwright()), StepStatus::kOk);
  EXPECT_DOUBLE_EQ(d.qvel[0], -1 - kGravity * 1e-3);
}

// Steps `model` until its velocities are below 1e-12 (or `steps` steps).
void Settle(const Model& model, Data& d, int steps) {
  for (int n = 0; n < steps; ++n) {
    ASSERT_EQ(Step(model, d, Drumwright()), StepStatus::kOk) << "step " << n;
    double speed = 0;
    for (int k = 0; k < model.nv; ++k) speed = std::max(speed, std::abs(d.qvel[k]));
    if (speed < 1e-12) return;
  }
}

// D: a box resting on n corner contacts sinks m g / (n K), each carrying m g / n.
TEST(DrumwrightTest, DABoxRestsAtItsWeightOverTheSprings) {
  const double m = 8, k = 1e5;
  const auto model = Import(
      "<mujoco><option timestep='0.001'/><custom><text name='alsim:contact:box' "
      "data='stiffness 1e5 damping 2000'/></custom><worldbody><geom type='plane' "
      "size='5 5 0.1'/><body pos='0 0 0.1002'><freejoint/><geom name='box' type='box' "
      "size='0.1 0.1 0.1' mass='8'/></body></worldbody></mujoco>");
  Data d(*model);
  Settle(*model, d, 20000);
  int n = 0;
  double total = 0;
  for (const Constraint& c : d.constraints.constraints) {
    if (c.type != ConstraintType::kContact || d.constraints.bias[c.row_adr] > 0) continue;
    ++n;
    total += d.constraints.lambda[c.row_adr] / model->timestep;
  }
  ASSERT_GE(n, 4);
  EXPECT_NEAR(total, m * kGravity, 1e-9 * m * kGravity);
  for (const Constraint& c : d.constraints.constraints) {
    if (c.type != ConstraintType::kContact || d.constraints.bias[c.row_adr] > 0) continue;
    EXPECT_NEAR(-d.contact[c.contact].dist, m * kGravity / (n * k), 1e-6 * m * kGravity / (n * k));
  }
}

// D with Hertz's law: a sphere on the ground rests at d = (m g / (E* sqrt(r)))^(2/3).
TEST(DrumwrightTest, DAHertzSphereRestsAtItsHertzDepth) {
  for (const double modulus : {1e8, 1e11}) {
    const auto model = Particle(1.5, 1, 1e-3, "hertz " + Num(modulus) + " damping 300");
    Data d(*model);
    Settle(*model, d, 20000);
    const double depth = std::pow(1.5 * kGravity / (modulus * std::sqrt(0.1)), 2.0 / 3.0);
    EXPECT_NEAR(-d.qpos[0], depth, 1e-5 * depth) << modulus;
  }
}

// D on an equality: a ball hung by a connect sags m g / K; the scene's key sets K.
TEST(DrumwrightTest, DAConnectSpringSagsByTheWeightOverItsStiffness) {
  const auto model = Import(
      "<mujoco><option timestep='0.001'/><custom><text name='alsim:equality:hang' "
      "data='stiffness 1e6 damping 1e3'/></custom><worldbody><body name='ball'><freejoint/>"
      "<geom type='sphere' size='0.05' mass='2'/></body></worldbody><equality><connect "
      "name='hang' body1='ball' anchor='0 0 0'/></equality></mujoco>");
  Data d(*model);
  Settle(*model, d, 20000);
  EXPECT_NEAR(d.qpos[2], -2 * kGravity / 1e6, 1e-6 * 2 * kGravity / 1e6);
  EXPECT_NEAR(d.qpos[0], 0, 1e-15);
}

// D on a limit: a horizontal arm pressed onto its hinge's upper limit by gravity rests where
// K q = m g L cos q.
TEST(DrumwrightTest, DAHingeRestsPastItsLimitByTheTorqueOverItsStiffness) {
  const double m = 0.5, length = 0.4, k = 200;
  const auto model = Import(
      "<mujoco><compiler angle='radian'/><option timestep='0.001'/><custom><text "
      "name='alsim:joint:hinge' data='stiffness 200 damping 2'/></custom><worldbody><body>"
      "<joint name='hinge' type='hinge' axis='0 1 0' limited='true' range='-1.5 0'/><geom "
      "type='sphere' pos='0.4 0 0' size='0.02' mass='0.5'/></body></worldbody></mujoco>");
  Data d(*model);
  Settle(*model, d, 20000);
  double q = m * kGravity * length / k;
  for (int i = 0; i < 20; ++i) {
    q -= (k * q - m * kGravity * length * std::cos(q)) / (k + m * kGravity * length * std::sin(q));
  }
  EXPECT_NEAR(d.qpos[0], q, 1e-6 * q);
}

// A position servo without force limits is the spring law: one step of a slide's mass m with
// kp, kv gives m (v1 - v_free) = h kp (ctrl - q0) - (h^2 kp + h kv) v1.
TEST(DrumwrightTest, AServoStepsAsItsSpringLaw) {
  const double m = 1.3, kp = 400, kv = 7, h = 0.002;
  const auto model = Import(
      "<mujoco><option timestep='0.002' gravity='0 0 0'/><worldbody><body><joint name='s' "
      "type='slide' axis='1 0 0'/><geom type='sphere' size='0.05' mass='1.3'/></body>"
      "</worldbody><actuator><position joint='s' kp='400'/><velocity joint='s' kv='7'/>"
      "</actuator></mujoco>");
  Data d(*model);
  d.qpos[0] = 0.05;
  d.qvel[0] = 0.4;
  d.ctrl[0] = -0.1;
  ASSERT_EQ(Step(*model, d, Drumwright()), StepStatus::kOk);
  const double expected = (m * 0.4 + h * kp * (-0.1 - 0.05)) / (m + h * h * kp + h * kv);
  EXPECT_NEAR(d.qvel[0], expected, 1e-13);
}

// G, Fig. 4 as a scene (scenes/rod_pendulum.xml: two slides, a hinge, a connect of three spring
// rows, one of them zero in the plane) steps as the dense model of bench/drumwright_pendulum.h,
// with (x, z - 0.5, -angle) the dense (x, y, theta): the engine's A, G and rows are the paper's.
TEST(DrumwrightTest, GTheRodPendulumSceneStepsAsTheDenseModel) {
  std::ifstream in(ALSIM_SCENES_DIR "/rod_pendulum.xml");
  std::stringstream text;
  text << in.rdbuf();
  for (const double k : {1e6, 1e15}) {
    std::string xml = text.str();
    const size_t at = xml.find("stiffness 1e15");
    ASSERT_NE(at, std::string::npos);
    xml.replace(at, 14, "stiffness " + Num(k));
    const auto model = Import(xml);
    Data d(*model);
    d.qpos = {0.5, 0.5, -bench::kPi / 2};
    const double seconds = 1, h = model->timestep;
    for (int n = 0; n < 1000; ++n) ASSERT_EQ(Step(*model, d, Drumwright()), StepStatus::kOk);
    const bench::RodPendulumRun dense = bench::RunRodPendulum(k, h, seconds);
    ASSERT_TRUE(dense.ok);
    // The same equations, rounded differently (the engine's G comes from its kinematics): at
    // K 1e15 M + h^2 K G^T G has a condition near h^2 K / m = 1e9, so the rounding of each step
    // grows by that much.
    const double tolerance = k > 1e12 ? 1e-5 : 1e-9;
    EXPECT_NEAR(d.qpos[0], dense.q.x(), tolerance) << k;
    EXPECT_NEAR(d.qpos[1] - 0.5, dense.q.y(), tolerance) << k;
    EXPECT_NEAR(-d.qpos[2], dense.q.z(), tolerance) << k;
    EXPECT_NEAR(-d.qvel[2], dense.v.z(), 10 * tolerance) << k;
  }
}

// Scene keys: two geoms' springs in series, a pair's text over them, Hertz over the radius.
TEST(DrumwrightTest, ContactSpringsCombineInSeriesAndAPairsTextWins) {
  const auto model = Import(
      "<mujoco><custom><text name='alsim:contact:a' data='stiffness 3e5 damping 6'/><text "
      "name='alsim:contact:b' data='stiffness 6e5 damping 3'/><text name='alsim:contact:c' "
      "data='hertz 1e9'/><text name='alsim:contact:a:c' data='damping 9'/></custom><worldbody>"
      "<geom name='floor' type='plane' size='1 1 1'/><body><freejoint/><geom name='a' "
      "type='sphere' size='0.04'/></body><body><freejoint/><geom name='b' type='box' "
      "size='0.1 0.1 0.1'/></body><body><freejoint/><geom name='c' type='capsule' "
      "size='0.01 0.1'/></body></worldbody></mujoco>");
  const DrumwrightParameters p;
  const auto id = [&](const char* name) {
    for (int g = 0; g < model->ngeom; ++g) {
      if (model->geom_name[g] == name) return g;
    }
    return -1;
  };
  const DrumwrightContactSpring ab = ContactSpring(*model, p, id("a"), id("b"));
  EXPECT_DOUBLE_EQ(ab.stiffness, 2e5);
  EXPECT_DOUBLE_EQ(ab.damping, 2);
  EXPECT_FALSE(ab.hertz);
  const DrumwrightContactSpring floor_a = ContactSpring(*model, p, id("floor"), id("a"));
  EXPECT_DOUBLE_EQ(floor_a.stiffness, 3e5);
  EXPECT_DOUBLE_EQ(floor_a.damping, 6);
  const DrumwrightContactSpring floor = ContactSpring(*model, p, id("floor"), id("floor"));
  EXPECT_DOUBLE_EQ(floor.stiffness, p.contact_stiffness);
  EXPECT_DOUBLE_EQ(floor.damping, p.contact_damping);
  // Hertz on the capsule (r 0.01) against the sphere (r 0.04): r = 0.008; the pair's damping.
  const DrumwrightContactSpring ac = ContactSpring(*model, p, id("c"), id("a"));
  EXPECT_TRUE(ac.hertz);
  EXPECT_NEAR(ac.stiffness, 1e9 * std::sqrt(0.008), 1e-6);
  EXPECT_DOUBLE_EQ(ac.damping, 9);
  // Against the box (flat): the capsule's radius alone; two flat geoms: the parameters' radius.
  const DrumwrightContactSpring bc = ContactSpring(*model, p, id("b"), id("c"));
  EXPECT_NEAR(bc.stiffness, 1e9 * std::sqrt(0.01), 1e-6);
}

TEST(DrumwrightTest, BadSpringTextsAreImportErrorsNamingTheElement) {
  const std::string head = "<mujoco><custom><text name='";
  const std::string tail =
      "'/></custom><worldbody><body><joint name='j' type='hinge'/><geom name='g' "
      "type='sphere' size='0.1'/></body></worldbody></mujoco>";
  EXPECT_NE(ImportError(head + "alsim:contact:g' data='stiffness 1e5 hertz 1e9" + tail)
                .find("custom text 'alsim:contact:g': stiffness and hertz"),
            std::string::npos);
  EXPECT_NE(ImportError(head + "alsim:contact:g' data='damping -1" + tail)
                .find("damping '-1' is not a non-negative number"),
            std::string::npos);
  EXPECT_NE(ImportError(head + "alsim:joint:k' data='stiffness 1" + tail)
                .find("custom text 'alsim:joint:k': no joint named 'k'"),
            std::string::npos);
  EXPECT_NE(ImportError(head + "alsim:joint:j' data='stiffness 0" + tail)
                .find("stiffness '0' is not a positive number"),
            std::string::npos);
  EXPECT_NE(ImportError(head + "alsim:equality:e' data='stiffness 1" + tail)
                .find("no equality named 'e'"),
            std::string::npos);
  EXPECT_NE(ImportError(head + "alsim:joint:j' data='spring 1" + tail)
                .find("unknown key 'spring' (stiffness or damping)"),
            std::string::npos);
}

// D on the elastic foundation (scenes/foundation_cube_100.xml, the paper's Sec. 5.5): the 8 kg
// cube sinks m g depth / (E A) (7.84e-6 m at E 1e7, 7.84e-10 m at 1e11) and each of the 100
// elements carries m g / 100 = 0.784 N.
TEST(DrumwrightTest, DTheCubeSinksIntoTheFoundationByItsWeightOverEA) {
  std::ifstream in(ALSIM_SCENES_DIR "/foundation_cube_100.xml");
  std::stringstream text;
  text << in.rdbuf();
  const double m = 8, g = 9.8;
  for (const char* modulus : {"1e7", "1e11"}) {
    std::string xml = text.str();
    const size_t at = xml.find("modulus 1e7");
    ASSERT_NE(at, std::string::npos);
    xml.replace(at, 11, std::string("modulus ") + modulus);
    const auto model = Import(xml);
    ASSERT_EQ(model->foundation_site.size(), 100u);
    Data d(*model);
    Settle(*model, d, 5000);
    const double sink = m * g / std::strtod(modulus, nullptr);
    EXPECT_NEAR(0.5 - d.qpos[2], sink, 1e-6 * sink) << modulus;
    int elements = 0;
    for (const Constraint& c : d.constraints.constraints) {
      if (c.key.kind != 6) continue;
      ++elements;
      EXPECT_NEAR(d.constraints.lambda[c.row_adr] / model->timestep, m * g / 100, 1e-6) << modulus;
    }
    EXPECT_EQ(elements, 100);
  }
}

// Tables 1-2's runs through the engine: scenes/foundation_cube_100.xml under the circling load
// (xfrc_applied) steps as the dense model of bench/drumwright_foundation.h, rocking and lifting
// at 50 N included.
TEST(DrumwrightTest, TheFoundationSceneStepsAsTheDenseModelUnderTheLoad) {
  std::ifstream in(ALSIM_SCENES_DIR "/foundation_cube_100.xml");
  std::stringstream text;
  text << in.rdbuf();
  for (const double modulus : {1e7, 1e11}) {
    for (const double load : {5.0, 50.0}) {
      std::string xml = text.str();
      xml.replace(xml.find("modulus 1e7"), 11, "modulus " + Num(modulus));
      const auto model = Import(xml);
      Data d(*model);
      bench::FoundationParameters s;
      s.modulus = modulus;
      s.load = load;
      const std::vector<Eigen::Vector3d> elements = bench::FoundationElements(s);
      bench::CubeState dense = bench::RestingCube(s);
      const double h = model->timestep;
      for (int n = 0; n < 100; ++n) {
        // The load alone (the scene has gravity): force at the centre of mass and its torque.
        const Eigen::Matrix3d rotation =
            Eigen::Quaterniond(d.qpos[3], d.qpos[4], d.qpos[5], d.qpos[6]).toRotationMatrix();
        bench::FoundationParameters load_only = s;
        load_only.mass = 0;
        const bench::Wrench w = bench::AppliedWrench(load_only, rotation, d.time);
        d.xfrc_applied[1] << w.force, w.torque;
        StepOptions paper = Drumwright();
        paper.solver.drumwright.complementary = false;  // the paper's program alone, as the bench
        ASSERT_EQ(Step(*model, d, paper), StepStatus::kOk);
        ASSERT_TRUE(bench::StepFoundation(s, elements, n * h, h, &dense).ok);
      }
      for (int k = 0; k < 3; ++k) {
        EXPECT_NEAR(d.qpos[k], dense.position[k], 1e-12) << modulus << " " << load;
      }
      const Eigen::Quaterniond q(d.qpos[3], d.qpos[4], d.qpos[5], d.qpos[6]);
      EXPECT_NEAR(std::abs(q.dot(dense.orientation)), 1, 1e-14) << modulus << " " << load;
      EXPECT_NEAR(q.angularDistance(dense.orientation), 0, 1e-12) << modulus << " " << load;
      EXPECT_GT(std::abs(q.x()) + std::abs(q.y()), 1e-12);  // it tilts
    }
  }
}

// The other solvers take the elements as rigid frictionless points: the cube stays at 0.5 m.
TEST(DrumwrightTest, OtherSolversHoldTheCubeOnItsElementsRigidly) {
  const ModelImport imported = ImportModelFromFile(ALSIM_SCENES_DIR "/foundation_cube_100.xml");
  ASSERT_TRUE(imported) << imported.error;
  for (const SolverType type : {SolverType::kSubAdmm, SolverType::kCanal, SolverType::kPgs}) {
    Data d(*imported.model);
    StepOptions options;
    options.solver.type = type;
    for (int n = 0; n < 100; ++n) ASSERT_EQ(Step(*imported.model, d, options), StepStatus::kOk);
    EXPECT_NEAR(d.qpos[2], 0.5, 1e-6) << SolverName(type);
    EXPECT_NEAR(d.qvel[2], 0, 1e-6) << SolverName(type);
  }
}

TEST(DrumwrightTest, BadFoundationsAreImportErrorsNamingTheElement) {
  const auto scene = [](const std::string& data, const std::string& site = "type='box'") {
    return "<mujoco><custom><text name='alsim:foundation:floor' data='" + data +
           "'/></custom><worldbody><geom name='floor' type='plane' size='1 1 1'/><geom "
           "name='ball' type='sphere' size='0.1'/><body><freejoint/><geom type='box' "
           "size='0.1 0.1 0.1'/><site name='e_1' " +
           site + " size='0.1 0.1 0.01'/></body></worldbody></mujoco>";
  };
  EXPECT_DOUBLE_EQ(Import(scene("modulus 1e7 depth 1 sites e_"))->foundation_stiffness[0],
                   1e7 * 0.04 / 1);
  EXPECT_NE(ImportError(scene("modulus 1e7 depth 1 sites f_"))
                .find("custom text 'alsim:foundation:floor': no site's name starts with 'f_'"),
            std::string::npos);
  EXPECT_NE(ImportError(scene("modulus 1e7 sites e_")).find("needs modulus, depth and sites"),
            std::string::npos);
  EXPECT_NE(ImportError(scene("modulus -1 depth 1 sites e_"))
                .find("modulus '-1' is not a positive number"),
            std::string::npos);
  EXPECT_NE(ImportError(scene("modulus 1 depth 1 sites e_", "type='sphere'"))
                .find("site 'e_1' is not a box"),
            std::string::npos);
  std::string ball = scene("modulus 1 depth 1 sites e_");
  ball.replace(ball.find("foundation:floor"), 16, "foundation:ball");
  EXPECT_NE(ImportError(ball).find("geom 'ball' is not a plane"), std::string::npos);
}

// The program (83)-(85) alone lets a row push while its spring ends the step extended; a humanoid
// falling under zero controls then gains energy and diverges. With complementary (the default)
// it lies down: finite, slow, its root low.
TEST(DrumwrightTest, AFallingHumanoidLiesDownWithComplementaryRows) {
  const ModelImport imported =
      ImportModelFromFile(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  double fastest = 0;
  for (int n = 0; n < 1000; ++n) {
    ASSERT_EQ(Step(m, d, Drumwright()), StepStatus::kOk) << "step " << n;
    for (int k = 0; k < m.nv; ++k) fastest = std::max(fastest, std::abs(d.qvel[k]));
  }
  EXPECT_LT(fastest, 50);
  EXPECT_LT(d.qpos[2], 0.3);  // the root's height, m (1.4 standing)
  const auto* solver = dynamic_cast<const DrumwrightSolver*>(d.solver.get());
  ASSERT_NE(solver, nullptr);
  EXPECT_EQ(solver->statistics().failed_programs, 0);
}

TEST(DrumwrightTest, RefusesRowsWithoutASpringLaw) {
  const auto friction = Import(
      "<mujoco><worldbody><body><joint name='elbow' type='hinge' frictionloss='0.5'/><geom "
      "type='sphere' size='0.1'/></body></worldbody></mujoco>");
  EXPECT_NE(SolverRefusesModel(*friction, SolverType::kDrumwright)
                .find("dry friction (frictionloss) of joint 'elbow'"),
            std::string::npos);
  EXPECT_EQ(SolverRefusesModel(*friction, SolverType::kSap), "");
  const auto servo = Import(
      "<mujoco><worldbody><body><joint name='s' type='slide'/><geom type='sphere' "
      "size='0.1'/></body></worldbody><actuator><position name='arm' joint='s' kp='10' "
      "forcelimited='true' forcerange='-1 1'/></actuator></mujoco>");
  EXPECT_NE(SolverRefusesModel(*servo, SolverType::kDrumwright)
                .find("force limits (forcerange) of the servo actuator 'arm'"),
            std::string::npos);
  const auto torsion = Import(
      "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1' condim='4'/><body>"
      "<freejoint/><geom type='sphere' size='0.1'/></body></worldbody></mujoco>");
  EXPECT_NE(SolverRefusesModel(*torsion, SolverType::kDrumwright).find("condim 4 or 6"),
            std::string::npos);
  Data d(*torsion);
  EXPECT_NE(Step(*torsion, d, Drumwright()), StepStatus::kOk);
}

// Islands in parallel: boxes and spheres dropped onto the ground, apart, with friction.
std::vector<double> QposAfterSteps(const Model& model, int threads) {
  Data d(model);
  for (int k = 0; k < model.nv; ++k) d.qvel[k] = 0.3 * std::sin(1.0 + k);
  RunWithThreads(threads, [&] {
    for (int n = 0; n < 150; ++n) EXPECT_EQ(Step(model, d, Drumwright()), StepStatus::kOk);
  });
  EXPECT_GE(d.islands.num, 3);
  return d.qpos;
}

TEST(DrumwrightTest, BitIdenticalForOneTwoAndEightThreads) {
  std::string bodies;
  for (int i = 0; i < 6; ++i) {
    const std::string shape =
        i % 2 == 0 ? "type='box' size='0.05 0.06 0.04'" : "type='sphere' size='0.05'";
    bodies +=
        "<body pos='" + Num(0.4 * i) + " 0 0.06'><freejoint/><geom " + shape + " mass='1'/></body>";
  }
  const auto model = Import(
      "<mujoco><option timestep='0.002'/><custom><text name='alsim:contact:floor' "
      "data='stiffness 1e6 damping 100'/></custom><worldbody><geom name='floor' "
      "type='plane' size='5 5 0.1' friction='0.6'/>" +
      bodies + "</worldbody></mujoco>");
  const std::vector<double> one = QposAfterSteps(*model, 1);
  for (const int threads : {2, 8}) {
    const std::vector<double> other = QposAfterSteps(*model, threads);
    ASSERT_EQ(one.size(), other.size());
    EXPECT_EQ(std::memcmp(one.data(), other.data(), one.size() * sizeof(double)), 0) << threads;
  }
}

// G with the velocity product (first_order_step.h): the scene's connect rows get their Gd v0
// from row_acceleration.h and step as the dense rod with the closed-form Gd v, at a stiff pin and
// at a soft one, where the term changes the swing.
TEST(DrumwrightTest, GWithItsGdvTheRodSceneStepsAsTheDenseModel) {
  std::ifstream in(ALSIM_SCENES_DIR "/rod_pendulum.xml");
  std::stringstream text;
  text << in.rdbuf();
  for (const double k : {1e3, 1e6}) {
    std::string xml = text.str();
    const size_t at = xml.find("stiffness 1e15");
    ASSERT_NE(at, std::string::npos);
    xml.replace(at, 14, "stiffness " + Num(k));
    const auto model = Import(xml);
    Data d(*model), off(*model);
    d.qpos = off.qpos = {0.5, 0.5, -bench::kPi / 2};
    StepOptions options = Drumwright();
    options.solver.drumwright.velocity_product = true;
    const double h = model->timestep;
    Eigen::Vector3d q = bench::RodPendulum::Start(), v = Eigen::Vector3d::Zero();
    for (int n = 0; n < 1000; ++n) {
      ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
      ASSERT_EQ(Step(*model, off, Drumwright()), StepStatus::kOk);
      const FirstOrderResult r = SolveFirstOrderStep(bench::RodPendulumProblem(q, v, k, h, true));
      ASSERT_TRUE(r.ok);
      v = r.velocity;
      q += h * v;
    }
    EXPECT_NEAR(d.qpos[0], q.x(), 1e-9) << k;
    EXPECT_NEAR(d.qpos[1] - 0.5, q.y(), 1e-9) << k;
    EXPECT_NEAR(-d.qpos[2], q.z(), 1e-9) << k;
    EXPECT_NEAR(-d.qvel[2], v.z(), 1e-8) << k;
    // The term moves the soft rod by far more than the agreement above.
    if (k < 1e4) {
      EXPECT_GT(std::abs(off.qpos[2] - d.qpos[2]), 1e-4);
    }
  }
}

// Once each island slot has seen its sizes, a step allocates nothing: contacts (boxes and spheres
// settling, with friction), a hinge resting past its limit, a connect and a servo, with and
// without the velocity product. Counted on the calling thread, so TBB is held to one thread.
TEST(DrumwrightTest, AWarmStepAllocatesNothing) {
  std::string bodies;
  for (int i = 0; i < 4; ++i) {
    const std::string shape =
        i % 2 == 0 ? "type='box' size='0.05 0.06 0.04'" : "type='sphere' size='0.05'";
    bodies +=
        "<body pos='" + Num(0.4 * i) + " 0 0.06'><freejoint/><geom " + shape + " mass='1'/></body>";
  }
  const auto model = Import(
      "<mujoco><option timestep='0.002'/><custom><text name='alsim:contact:floor' "
      "data='stiffness 1e6 damping 100'/></custom><worldbody><geom name='floor' "
      "type='plane' size='5 5 0.1' friction='0.6'/>" +
      bodies +
      "<body name='arm' pos='0 2 1'><joint name='hinge' type='hinge' axis='0 1 0' limited='true' "
      "range='-0.5 0.5'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' mass='1'/>"
      "</body><body name='bob' pos='0 -2 1'><joint type='hinge' axis='1 0 0'/><joint "
      "name='reach' type='slide' axis='0 0 1'/><geom type='sphere' size='0.05' pos='0 0 -0.4' "
      "mass='1'/></body></worldbody><equality><connect body1='bob' anchor='0 0 -0.4'/>"
      "</equality><actuator><position joint='reach' kp='50'/></actuator></mujoco>");
  const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, 1);
  for (const bool velocity_product : {false, true}) {
    Data d(*model);
    for (int k = 0; k < model->nv; ++k) d.qvel[k] = 0.3 * std::sin(1.0 + k);
    StepOptions options = Drumwright();
    options.solver.drumwright.velocity_product = velocity_product;
    for (int n = 0; n < 300; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    long count = 0;
    {
      const testing::AllocationCounter allocations;
      for (int n = 0; n < 100; ++n) Step(*model, d, options);
      count = allocations.count();
    }
    EXPECT_EQ(count, 0) << velocity_product;
    EXPECT_GE(d.islands.num, 4);
  }
}

}  // namespace
}  // namespace alsim
