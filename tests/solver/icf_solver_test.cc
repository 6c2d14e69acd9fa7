// Irrotational Contact Fields (--solver icf-lagged, icf-similar: the Newton kit with ICF's
// contact, engine/solver/icf) against closed forms (digest seed-000-icf.md section 15): one step
// of a particle in contact is the root of the quadratic m (v - v*) = n(v) (test 4); a particle
// rests at phi = -m g / k whatever the dissipation (test 5); Lagged creeps on an incline at
// v_s r / sqrt(1 - r^2), r = tan(theta) / mu (test 6); a sphere thrown along the ground ends
// rolling at 5/7 of its speed (XI-B, test 9); on the oscillating conveyor Lagged does not move
// vertically while Similar and SAP glide (XI-A, test 8); the scene's compliance; anisotropic
// friction (Appendix B): a box decelerates at mu_i g along each principal direction and follows
// the maximum-dissipation law, a curved path, when it slides between them. Descent,
// determinism across thread counts and allocation: newton_solver_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/icf/icf_contact.h"
#include "engine/solver/icf/icf_parameters.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

constexpr double kStep = 0.002;
constexpr double kGravity = 9.81;

std::shared_ptr<const Model> Import(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml, {}, "icf.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

// A particle: a sphere of radius 0.1 on slide joints along `axes` ("1 0 0", ...), touching the
// ground at qpos = 0 along z; gravity g (sin theta, 0, -cos theta).
std::shared_ptr<const Model> Particle(double mass, double friction, const std::string& axes,
                                      double theta = 0) {
  std::string joints;
  for (size_t start = 0; start < axes.size(); start += 6) {
    joints += "<joint type='slide' axis='" + axes.substr(start, 5) + "'/>";
  }
  return Import("<mujoco><option timestep='" + std::to_string(kStep) + "' gravity='" +
                std::to_string(kGravity * std::sin(theta)) + " 0 " +
                std::to_string(-kGravity * std::cos(theta)) +
                "'/><worldbody><geom type='plane' size='5 5 0.1' friction='" +
                std::to_string(friction) + "'/><body pos='0 0 0.1'>" + joints +
                "<geom type='sphere' size='0.1' mass='" + std::to_string(mass) + "' friction='" +
                std::to_string(friction) + "'/></body></worldbody></mujoco>");
}

StepOptions IcfOptions(SolverType type) {
  StepOptions options;
  options.solver.type = type;
  options.solver.icf.relative_tolerance = 1e-13;
  return options;
}

const char* Name(SolverType type) { return SolverName(type); }

// Test 4: a vertical particle at phi0 < 0 moving at v0; with v* = v0 - g dt the step's v solves
//   m (v - v*) = dt k (-phi0 - dt v) (1 - d v),
// i.e. dt^2 k d v^2 + (dt k phi0 d - dt^2 k - m) v + m v* - dt k phi0 = 0, the root below vhat.
TEST(IcfSolverTest, OneStepIsTheRootOfTheNormalLawsQuadratic) {
  const double mass = 0.7, k = 2e5;
  const auto model = Particle(mass, 0.0, "0 0 1");
  for (const SolverType type : {SolverType::kIcfLagged, SolverType::kIcfSimilar}) {
    for (const double dissipation : {0.0, 3.0}) {
      for (const auto& [phi0, v0] : {std::pair{-1e-3, -0.5}, {-2e-4, 0.05}, {-5e-3, -2.0}}) {
        StepOptions options = IcfOptions(type);
        options.solver.icf.stiffness = k;
        options.solver.icf.dissipation = dissipation;
        Data d(*model);
        d.qpos[0] = phi0;
        d.qvel[0] = v0;
        ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
        const double h = kStep, vstar = v0 - kGravity * h;
        const double a = h * h * k * dissipation;
        const double b = h * k * phi0 * dissipation - h * h * k - mass;
        const double c = mass * vstar - h * k * phi0;
        // b < 0 and a >= 0: the smaller root, in the form that does not cancel.
        const double root = a > 0 ? 2 * c / (-b + std::sqrt(b * b - 4 * a * c)) : -c / b;
        const double vhat = dissipation > 0 ? std::min(-phi0 / h, 1 / dissipation) : -phi0 / h;
        ASSERT_LT(root, vhat);
        EXPECT_NEAR(d.qvel[0], root, 1e-12 * std::max(1.0, std::abs(root)))
            << Name(type) << " d " << dissipation << " phi0 " << phi0 << " v0 " << v0;
      }
    }
  }
}

// Test 5: at rest, m g dt = dt k (-phi), so phi = -m g / k for any d, both models.
TEST(IcfSolverTest, RestsAtMinusMgOverKForAnyDissipation) {
  const double k = 1e5;
  for (const SolverType type : {SolverType::kIcfLagged, SolverType::kIcfSimilar}) {
    for (const double mass : {0.5, 3.0}) {
      for (const double dissipation : {0.0, 10.0}) {
        StepOptions options = IcfOptions(type);
        options.solver.icf.stiffness = k;
        options.solver.icf.dissipation = dissipation;
        const auto model = Particle(mass, 1.0, "1 0 0 0 1 0 0 0 1");
        Data d(*model);
        for (int step = 0; step < 1500; ++step) {
          ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
        }
        EXPECT_NEAR(d.qpos[2], -mass * kGravity / k, 1e-9 * mass * kGravity / k)
            << Name(type) << " mass " << mass << " d " << dissipation;
        EXPECT_NEAR(d.qvel[2], 0, 1e-12) << Name(type);
      }
    }
  }
}

// Test 6: on an incline below the friction angle Lagged friction mu gamma_n0 f(v / v_s),
// f(s) = s / sqrt(1 + s^2), balances m g sin(theta) dt with gamma_n0 = m g cos(theta) dt: the
// particle creeps at v_s r / sqrt(1 - r^2), r = tan(theta) / mu.
TEST(IcfSolverTest, LaggedCreepsOnAnInclineAtTheStictionLawsSpeed) {
  const double mu = 0.5, stiction = 1e-4;
  for (const double r : {0.3, 0.6, 0.9}) {
    const double theta = std::atan(r * mu);
    const auto model = Particle(1.0, mu, "1 0 0 0 1 0 0 0 1", theta);
    StepOptions options = IcfOptions(SolverType::kIcfLagged);
    options.solver.icf.stiffness = 1e5;
    options.solver.icf.stiction_speed = stiction;
    Data d(*model);
    for (int step = 0; step < 3000; ++step) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    const double expected = stiction * r / std::sqrt(1 - r * r);
    EXPECT_NEAR(d.qvel[0], expected, 1e-6 * expected) << "r " << r;
    EXPECT_NEAR(d.qvel[1], 0, 1e-15);
  }
}

// XI-B (scenes/icf_falling_sphere.xml, plotted by bench/plot_icf.py): a steel sphere (0.5 kg, 5 cm
// across) thrown at U0 = 2 m/s from 5 cm above the ground (k 1e7 N/m, d 500 s/m, mu 0.5, v_s 1e-4,
// dt 2e-3) slides, then rolls; angular momentum about the contact point gives the rolling speed 5/7
// U0 whatever the impact. Lagged meets it. Similar glides (Table I): its friction acts while the
// sphere is mu dt |v_t| above the ground, at a contact point raised by half that, a longer lever,
// so it ends faster than 5/7 U0 (within 1%), and it touches down earlier (Sec. XI-B).
TEST(IcfSolverTest, FallingSphereEndsRollingAtFiveSeventhsOfItsSpeed) {
  const auto model = ImportModelFromFile(ALSIM_SCENES_DIR "/icf_falling_sphere.xml").model;
  ASSERT_TRUE(model);
  const double rolling = 2.0 * 5 / 7;
  int touchdown[2] = {-1, -1};
  for (const SolverType type : {SolverType::kIcfLagged, SolverType::kIcfSimilar}) {
    const bool similar = type == SolverType::kIcfSimilar;
    StepOptions options = IcfOptions(type);
    options.solver.icf.stiffness = 1e7;
    options.solver.icf.dissipation = 500;
    options.solver.icf.stiction_speed = 1e-4;
    Data d(*model);
    d.qvel[0] = 2.0;
    for (int step = 0; step < 500; ++step) {
      ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
      if (touchdown[similar] < 0 && d.qvel[0] < 2.0) touchdown[similar] = step;
    }
    if (similar) {
      EXPECT_GT(d.qvel[0], rolling) << Name(type);
      EXPECT_LT(d.qvel[0], 1.01 * rolling) << Name(type);
    } else {
      EXPECT_NEAR(d.qvel[0], rolling, 0.005 * rolling) << Name(type);
    }
    EXPECT_NEAR(d.qvel[4], d.qvel[0] / 0.025, 1e-3 * d.qvel[0] / 0.025) << Name(type) << " rolls";
    EXPECT_NEAR(d.qvel[2], 0, 1e-6) << Name(type) << " rests on the ground";
  }
  EXPECT_LT(touchdown[1], touchdown[0]) << "Similar touches down first";
}

// A particle on the floor whose geoms (and pair) set their compliance in custom text.
std::string CompliantScene(const std::string& custom) {
  return "<mujoco><option timestep='0.002' gravity='0 0 -9.81'/><custom>" + custom +
         "</custom><worldbody><geom name='floor' type='plane' size='5 5 0.1'/>"
         "<body pos='0 0 0.1'><joint type='slide' axis='0 0 1'/>"
         "<geom name='ball' type='sphere' size='0.1' mass='2'/></body></worldbody></mujoco>";
}

// The scene's alsim:contact:GEOM and alsim:contact:GEOM1:GEOM2 texts (ContactCompliance): the
// particle rests at -m g / k with k the ball's own against the rigid floor, the two layers' in
// series, or the pair's; an unset scene is the option's contact.
TEST(IcfSolverTest, SceneSetsEachGeomsAndPairsCompliance) {
  const struct {
    std::string custom;
    double stiffness;
  } cases[] = {
      {"", 1e5},
      {"<text name='alsim:contact:ball' data='stiffness 2e5 dissipation 0'/>", 2e5},
      {"<text name='alsim:contact:ball' data='stiffness 2e5'/>"
       "<text name='alsim:contact:floor' data='stiffness 2e5'/>",
       1e5},
      {"<text name='alsim:contact:ball' data='stiffness 2e5'/>"
       "<text name='alsim:contact:floor:ball' data='stiffness 5e4 stiction 1e-3'/>",
       5e4},
  };
  for (const auto& c : cases) {
    const auto model = Import(CompliantScene(c.custom));
    ASSERT_TRUE(model);
    StepOptions options = IcfOptions(SolverType::kIcfLagged);
    options.solver.icf.stiffness = 1e5;
    Data d(*model);
    for (int step = 0; step < 1500; ++step) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    EXPECT_NEAR(d.qpos[0], -2 * kGravity / c.stiffness, 1e-9 * 2 * kGravity / c.stiffness)
        << c.custom;
  }
}

TEST(IcfSolverTest, ComplianceCombinesAsSpringsInSeries) {
  const auto model = Import(CompliantScene(
      "<text name='alsim:contact:ball' data='dissipation 10 stiffness 1e5 stiction 2e-3'/>"
      "<text name='alsim:contact:floor' data='stiffness 3e5 dissipation 2'/>"));
  ASSERT_TRUE(model);
  IcfParameters p;
  const IcfCompliance both = ContactCompliance(*model, p, 0, 1);
  EXPECT_DOUBLE_EQ(both.stiffness, 1e5 * 3e5 / 4e5);
  EXPECT_DOUBLE_EQ(both.dissipation, (3e5 * 10 + 1e5 * 2) / 4e5);
  EXPECT_EQ(both.stiction, 2e-3);  // the larger of the ball's and the option's 1e-4
  const IcfCompliance swapped = ContactCompliance(*model, p, 1, 0);
  EXPECT_EQ(swapped.stiffness, both.stiffness);
  EXPECT_EQ(swapped.dissipation, both.dissipation);
  const auto plain = Import(CompliantScene(""));
  const IcfCompliance none = ContactCompliance(*plain, p, 0, 1);
  EXPECT_EQ(none.stiffness, p.stiffness);
  EXPECT_EQ(none.dissipation, p.dissipation);
  EXPECT_EQ(none.stiction, p.stiction_speed);
}

// Bad values are import errors naming the element; nothing is imported.
TEST(IcfSolverTest, BadComplianceIsAnImportErrorNamingTheElement) {
  const struct {
    std::string custom;
    std::string message;
  } cases[] = {
      {"<text name='alsim:contact:bal' data='stiffness 1e5'/>", "no geom"},
      {"<text name='alsim:contact:ball:ball' data='stiffness 1e5'/>", "two different geoms"},
      {"<text name='alsim:contact:ball' data='stifness 1e5'/>", "unknown key 'stifness'"},
      {"<text name='alsim:contact:ball' data='stiffness -3'/>", "is not a positive number"},
      {"<text name='alsim:contact:ball' data='stiffness 0'/>", "is not a positive number"},
      {"<text name='alsim:contact:ball' data='dissipation nan'/>", "non-negative"},
      {"<text name='alsim:contact:ball' data='stiction'/>", "has no value"},
      {"<text name='alsim:contact:ball' data='friction_x -0.5 friction_y 1'/>", "non-negative"},
      {"<text name='alsim:contact:ball' data='friction_x 0.5 friction_y nan'/>", "non-negative"},
      {"<text name='alsim:contact:ball' data='friction_x 0.5'/>", "go together"},
      {"<text name='alsim:contact:floor:ball' data='friction_y 0.5'/>", "go together"},
      {"<text name='alsim:contact:ball' data='friction_z 0.5'/>", "unknown key 'friction_z'"},
  };
  for (const auto& c : cases) {
    const ModelImport imported = ImportModelFromString(CompliantScene(c.custom), {}, "icf.xml");
    EXPECT_FALSE(imported) << c.custom;
    EXPECT_NE(imported.error.find("custom text 'alsim:contact:"), std::string::npos)
        << imported.error;
    EXPECT_NE(imported.error.find(c.message), std::string::npos) << imported.error;
  }
}

// A 1 kg box (10 cm half sides) on slide joints along world x, y and z, resting on a floor, its
// geom turned 30 degrees about z: the principal directions of its friction_x, friction_y are
// e1 = (cos 30, sin 30) and e2 = (-sin 30, cos 30). `custom` sets them, `box` and `floor` add
// attributes to the geoms.
std::shared_ptr<const Model> SlidingBox(const std::string& custom, const std::string& box = "",
                                        const std::string& floor = "") {
  return Import("<mujoco><option timestep='0.002' gravity='0 0 -9.81'/><custom>" + custom +
                "</custom><worldbody><geom name='floor' type='plane' size='5 5 0.1' " + floor +
                "/><body pos='0 0 0.1'><joint type='slide' axis='1 0 0'/>"
                "<joint type='slide' axis='0 1 0'/><joint type='slide' axis='0 0 1'/>"
                "<geom name='box' type='box' size='0.1 0.1 0.1' mass='1' euler='0 0 30' " +
                box + "/></body></worldbody></mujoco>");
}

constexpr double kBoxAngle = M_PI / 6;

// The box settled on its four corners (1 s), then sliding at `velocity` (world x, y).
Data SettledBox(const Model& model, const StepOptions& options, double vx, double vy) {
  Data d(model);
  for (int step = 0; step < 500; ++step) EXPECT_EQ(Step(model, d, options), StepStatus::kOk);
  EXPECT_NEAR(d.qvel[2], 0, 1e-12);
  d.qvel[0] = vx;
  d.qvel[1] = vy;
  return d;
}

// Along a principal direction the friction opposes the slip with mu_i m g (eq. 31 with v_t along
// e_i): Lagged, whose gamma_n0 is the settled m g dt, takes mu_i g T off the speed in T and
// keeps the path straight, for mu_x 0.8 along e1 and mu_y 0.3 along e2.
TEST(IcfSolverTest, AnisotropicBoxDeceleratesAtMuGAlongEachPrincipalDirection) {
  const auto model =
      SlidingBox("<text name='alsim:contact:box' data='friction_x 0.8 friction_y 0.3'/>");
  ASSERT_TRUE(model);
  const StepOptions options = IcfOptions(SolverType::kIcfLagged);
  const double c = std::cos(kBoxAngle), s = std::sin(kBoxAngle);
  for (const auto& [ex, ey, mu] : {std::tuple{c, s, 0.8}, {-s, c, 0.3}}) {
    Data d = SettledBox(*model, options, ex, ey);
    const int steps = 50;
    for (int step = 0; step < steps; ++step) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    const double speed = d.qvel[0] * ex + d.qvel[1] * ey;
    const double lateral = -d.qvel[0] * ey + d.qvel[1] * ex;
    EXPECT_NEAR(speed, 1 - mu * kGravity * steps * kStep, 1e-7) << "mu " << mu;
    EXPECT_NEAR(lateral, 0, 1e-9) << "mu " << mu;
  }
}

// Between the principal directions the friction is the maximum-dissipation impulse over the
// ellipse (eq. 30), in the principal frame m dv = -m g dt (mu_x^2 p1, mu_y^2 p2) /
// sqrt(mu_x^2 p1^2 + mu_y^2 p2^2) with p the step's end velocity (implicit Euler), written out
// here, not opposite to the slip. Over the slide dp1/dp2 = mu_x^2 p1 / (mu_y^2 p2), so the path
// curves with p1 / p2^(mu_x^2 / mu_y^2) constant (mu_x 0.8, mu_y 0.4: the fourth power), up to
// the time step's first-order error; isotropic friction would keep p1 / p2 constant instead.
TEST(IcfSolverTest, AnisotropicBoxSlidingBetweenTheAxesFollowsMaximumDissipation) {
  const auto model =
      SlidingBox("<text name='alsim:contact:box' data='friction_x 0.8 friction_y 0.4'/>");
  ASSERT_TRUE(model);
  const StepOptions options = IcfOptions(SolverType::kIcfLagged);
  const double c = std::cos(kBoxAngle), s = std::sin(kBoxAngle);
  const auto principal = [&](const Data& d) {
    return std::pair{d.qvel[0] * c + d.qvel[1] * s, -d.qvel[0] * s + d.qvel[1] * c};
  };
  // p = (1, 1) m/s.
  Data d = SettledBox(*model, options, c - s, s + c);
  const auto [p1_start, p2_start] = principal(d);
  ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
  const auto [p1, p2] = principal(d);
  const double r = std::sqrt(0.64 * p1 * p1 + 0.16 * p2 * p2);
  EXPECT_NEAR(p1 - p1_start, -kGravity * kStep * 0.64 * p1 / r, 1e-8);
  EXPECT_NEAR(p2 - p2_start, -kGravity * kStep * 0.16 * p2 / r, 1e-8);
  const double invariant = p1 / std::pow(p2, 4);
  for (int step = 0; step < 60; ++step) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
  const auto [q1, q2] = principal(d);
  ASSERT_LT(q1, 0.5 * p1);  // well into the curve
  EXPECT_NEAR(q1 / std::pow(q2, 4) / invariant, 1, 0.02);
  EXPECT_GT(std::abs(q1 / q2 - p1 / p2), 0.2);  // not the isotropic straight line
}

// friction_x = friction_y = mu is the isotropic friction mu: the same trajectory, bit for bit, as
// MuJoCo's friction mu on both geoms, for both models.
TEST(IcfSolverTest, EqualFrictionCoefficientsAreTheIsotropicFrictionBitForBit) {
  const auto equal =
      SlidingBox("<text name='alsim:contact:box' data='friction_x 0.6 friction_y 0.6'/>");
  const auto plain = SlidingBox("", "friction='0.6'", "friction='0.6'");
  ASSERT_TRUE(equal && plain);
  for (const SolverType type : {SolverType::kIcfLagged, SolverType::kIcfSimilar}) {
    const StepOptions options = IcfOptions(type);
    Data a = SettledBox(*equal, options, 0.8, 0.5);
    Data b = SettledBox(*plain, options, 0.8, 0.5);
    for (int step = 0; step < 100; ++step) {
      ASSERT_EQ(Step(*equal, a, options), StepStatus::kOk);
      ASSERT_EQ(Step(*plain, b, options), StepStatus::kOk);
    }
    EXPECT_LT(a.qvel[0], 0.5) << Name(type) << ": it slowed down";
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(a.qpos[i], b.qpos[i]) << Name(type);
      EXPECT_EQ(a.qvel[i], b.qvel[i]) << Name(type);
    }
  }
}

// Which geom's axes and whose tensor: a pair text's first-named geom fixes the axes (floor:box,
// the floor's world x and y; box:floor, the box's turned ones); a pair text wins over the geom's;
// condim 1 (on both geoms: MuJoCo takes the larger) stays frictionless.
TEST(IcfSolverTest, AnisotropicFrictionFollowsThePairsFirstNamedGeomAndCondim) {
  const std::string geom = "<text name='alsim:contact:box' data='friction_x 0.1 friction_y 0.1'/>";
  const StepOptions options = IcfOptions(SolverType::kIcfLagged);
  const double c = std::cos(kBoxAngle), s = std::sin(kBoxAngle);
  const struct {
    std::string custom;
    std::string box;
    double ex, ey;  // the slip's direction
    double mu;      // its deceleration over g
  } cases[] = {
      {geom + "<text name='alsim:contact:floor:box' data='friction_x 0.8 friction_y 0.3'/>", "", 1,
       0, 0.8},
      {geom + "<text name='alsim:contact:floor:box' data='friction_x 0.8 friction_y 0.3'/>", "", 0,
       1, 0.3},
      {geom + "<text name='alsim:contact:box:floor' data='friction_x 0.8 friction_y 0.3'/>", "", c,
       s, 0.8},
      {"<text name='alsim:contact:box' data='friction_x 0.8 friction_y 0.3'/>", "condim='1'", c, s,
       0.0},
  };
  for (const auto& k : cases) {
    const auto model = SlidingBox(k.custom, k.box, k.box);
    ASSERT_TRUE(model);
    Data d = SettledBox(*model, options, k.ex, k.ey);
    const int steps = 50;
    for (int step = 0; step < steps; ++step) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    EXPECT_NEAR(d.qvel[0] * k.ex + d.qvel[1] * k.ey, 1 - k.mu * kGravity * steps * kStep, 1e-7)
        << k.custom << " " << k.box;
    EXPECT_NEAR(-d.qvel[0] * k.ey + d.qvel[1] * k.ex, 0, 1e-9) << k.custom << " " << k.box;
  }
}

// XI-A (scenes/icf_conveyor.xml, plotted by bench/plot_icf.py): a 1 kg box (5 cm sides) on a belt
// oscillating at 1 Hz with 0.2 m amplitude (mu 0.7, k 1e7 N/m, dt 0.01 s; d 500 s/m, SAP tau_d 1e-3
// s). The belt's peak acceleration (7.9 m/s^2) exceeds mu g (6.9), so the box sticks and slips.
// Lagged has no vertical motion and its normal force stays m g; Similar and SAP glide, the box
// rising and falling with the slip speed, and their normal force jumps when the gliding ends at the
// return to stiction. The belt is a 1e4 kg body whose velocity is set before each step; the solves
// run to a relative tolerance of 1e-12 (the stopping test scales by the island's momentum, which
// the belt's dominates).
struct ConveyorRun {
  double max_vertical_speed = 0;  // after the first second, m/s
  double max_normal_force = 0;    // over m g, after the first second
  double max_slip = 0;            // m/s
};

ConveyorRun RunConveyor(SolverType type) {
  const auto model = ImportModelFromFile(ALSIM_SCENES_DIR "/icf_conveyor.xml").model;
  EXPECT_TRUE(model);
  if (!model) return {};
  StepOptions options;
  options.solver.type = type;
  options.solver.icf.stiffness = 1e7;
  options.solver.icf.dissipation = 500;
  options.solver.icf.stiction_speed = 1e-4;
  options.solver.icf.relative_tolerance = 1e-12;
  options.solver.sap.relative_tolerance = 1e-12;
  options.solver.sap.stiffness = 1e7;
  options.solver.sap.dissipation_time = 1e-3;
  Data d(*model);
  ConveyorRun run;
  const double h = 0.01, omega = 2 * M_PI;
  for (int step = 0; step < 300; ++step) {
    const double t = (step + 1) * h;  // the belt's velocity at the step's end
    d.qpos[0] = 0.2 * std::sin(omega * t) - h * 0.2 * omega * std::cos(omega * t);
    d.qvel[0] = 0.2 * omega * std::cos(omega * t);
    EXPECT_EQ(Step(*model, d, options), StepStatus::kOk);
    if (step < 100) continue;
    double normal = 0;
    for (const Constraint& c : d.constraints.constraints) {
      if (c.type == ConstraintType::kContact) normal += d.constraints.lambda[c.row_adr];
    }
    run.max_vertical_speed = std::max(run.max_vertical_speed, std::abs(d.qvel[3]));
    run.max_normal_force = std::max(run.max_normal_force, normal / h / kGravity);
    run.max_slip = std::max(run.max_slip, std::abs(d.qvel[1] - d.qvel[0]));
  }
  return run;
}

TEST(IcfSolverTest, ConveyorLaggedHasNoVerticalMotionSimilarAndSapGlide) {
  const ConveyorRun lagged = RunConveyor(SolverType::kIcfLagged);
  const ConveyorRun similar = RunConveyor(SolverType::kIcfSimilar);
  const ConveyorRun sap = RunConveyor(SolverType::kSap);
  for (const ConveyorRun* run : {&lagged, &similar, &sap}) EXPECT_GT(run->max_slip, 0.05);
  EXPECT_LT(lagged.max_vertical_speed, 1e-6);
  EXPECT_NEAR(lagged.max_normal_force, 1.0, 1e-6);
  for (const ConveyorRun* run : {&similar, &sap}) {
    EXPECT_GT(run->max_vertical_speed, 1e-2);  // gliding: up to mu dt |v_t| = 0.8 mm per step
    EXPECT_GT(run->max_normal_force, 1.1);     // the spike when the gliding ends
  }
}

}  // namespace
}  // namespace alsim
