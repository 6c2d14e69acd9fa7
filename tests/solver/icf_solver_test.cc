// Irrotational Contact Fields (--solver icf-lagged, icf-similar: the Newton kit with ICF's
// contact, engine/solver/icf) against closed forms (digest seed-000-icf.md section 15): one step
// of a particle in contact is the root of the quadratic m (v - v*) = n(v) (test 4); a particle
// rests at phi = -m g / k whatever the dissipation (test 5); Lagged creeps on an incline at
// v_s r / sqrt(1 - r^2), r = tan(theta) / mu (test 6); a sphere thrown along the ground ends
// rolling at 5/7 of its speed (XI-B, test 9); on the oscillating conveyor Lagged does not move
// vertically while Similar and SAP glide (XI-A, test 8); the scene's compliance. Descent,
// determinism across thread counts and allocation: newton_solver_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

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
  };
  for (const auto& c : cases) {
    const ModelImport imported = ImportModelFromString(CompliantScene(c.custom), {}, "icf.xml");
    EXPECT_FALSE(imported) << c.custom;
    EXPECT_NE(imported.error.find("custom text 'alsim:contact:"), std::string::npos)
        << imported.error;
    EXPECT_NE(imported.error.find(c.message), std::string::npos) << imported.error;
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
