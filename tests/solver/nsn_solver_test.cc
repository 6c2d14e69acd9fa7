// The non-smooth Newton solver in the engine (--solver nsn, engine/solver/nsn/nsn_solver.h) on
// rigid trees against closed forms (digest seed-002-nsn.md section 14): the incline holds iff
// tan theta <= mu and otherwise slides at g (sin - mu cos), alike in 8 directions; a box on four
// coplanar contacts does not sink; position-level rows do not drift (a connect, a joint limit);
// the ablation options solve the same problems; refusals; bit-identical for 1, 2 and 8 threads; no
// allocation once warm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <oneapi/tbb/global_control.h>

#include "engine/constraint/build_constraints.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/solver_figures.h"

namespace alsim {
namespace {

constexpr double kGravity = 9.81;
constexpr double kPi = 3.14159265358979323846;

std::string Num(double x) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", x);
  return text;
}

std::shared_ptr<const Model> Import(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml, {}, "nsn.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

StepOptions Nsn() {
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  return options;
}

// Converged tightly: the closed forms below are met to the solver's tolerance (rows: |C| <= tol,
// velocities within tol / h; momentum tol max(1, |A v_free|)).
StepOptions TightNsn() {
  StepOptions options = Nsn();
  options.solver.nsn.newton_tolerance = 1e-10;
  options.solver.nsn.newton_iterations = 300;
  return options;
}

using testing::Figure;

// A 0.2 x 0.2 x 0.1 m box of 1 kg resting on a floor (friction mu) under gravity tilted by theta
// towards the azimuth phi: the incline without rotating the geometry.
std::shared_ptr<const Model> TiltedBox(double mu, double theta, double phi, double h) {
  const double gx = kGravity * std::sin(theta) * std::cos(phi);
  const double gy = kGravity * std::sin(theta) * std::sin(phi);
  const double gz = -kGravity * std::cos(theta);
  return Import("<mujoco><option timestep='" + Num(h) + "' gravity='" + Num(gx) + " " + Num(gy) +
                " " + Num(gz) + "'/><worldbody><geom type='plane' size='5 5 0.1' friction='" +
                Num(mu) + "'/><body pos='0 0 0.05'><freejoint/><geom type='box' " +
                "size='0.1 0.1 0.05' mass='1' friction='" + Num(mu) +
                "'/></body></worldbody></mujoco>");
}

// Digest 14, test 8: with mu = 0.5 the box holds at tan theta = 0.4 and slides at tan theta = 0.6
// with a = g (sin theta - mu cos theta), in 8 azimuths (no faceting: the cone is smooth).
TEST(NsnSolverTest, AnInclineHoldsIffTanThetaIsBelowMuElseSlidesAtTheCoulombRate) {
  const double mu = 0.5, h = 0.005;
  const int steps = 100;
  for (const double slope : {0.4, 0.6}) {
    const double theta = std::atan(slope);
    const double expected =
        slope <= mu ? 0 : kGravity * (std::sin(theta) - mu * std::cos(theta)) * steps * h;
    for (int k = 0; k < 8; ++k) {
      const double phi = k * kPi / 4;
      const auto model = TiltedBox(mu, theta, phi, h);
      Data d(*model);
      const StepOptions options = TightNsn();
      for (int n = 0; n < steps; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
      const double along = d.qvel[0] * std::cos(phi) + d.qvel[1] * std::sin(phi);
      const double across = -d.qvel[0] * std::sin(phi) + d.qvel[1] * std::cos(phi);
      if (expected == 0) {
        EXPECT_LT(std::abs(along), 1e-6) << "slope " << slope << " azimuth " << k;
      } else {
        EXPECT_NEAR(along, expected, 0.01 * expected) << "slope " << slope << " azimuth " << k;
      }
      EXPECT_LT(std::abs(across), 1e-6 + 1e-3 * expected) << "slope " << slope << " azimuth " << k;
      EXPECT_LT(std::abs(d.qvel[2]), 1e-6);
      EXPECT_EQ(Figure(d, "unconverged_islands"), 0);
    }
  }
}

// Digest 14, test 9: a box on four coplanar contacts (a singular system: eps = 1e-6) does not sink
// in 1000 steps, and its four normal forces hold its weight.
TEST(NsnSolverTest, ABoxOnFourCoplanarContactsDoesNotSink) {
  for (const double mu : {0.0, 0.8}) {
    const auto model = TiltedBox(mu, 0, 0, 1.0 / 120);
    Data d(*model);
    const StepOptions options = TightNsn();
    for (int n = 0; n < 1000; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    EXPECT_NEAR(d.qpos[2], 0.05, 1e-6) << mu;
    double normal = 0;
    for (const Constraint& c : d.constraints.constraints) {
      if (c.type == ConstraintType::kContact) normal += d.constraints.lambda[c.row_adr];
    }
    EXPECT_EQ(d.contact.size(), 4u);
    EXPECT_NEAR(normal / model->timestep, kGravity, 1e-6 * kGravity) << mu;
  }
}
// Position-level rows (digest 4.2 (a), 12.1): a pendulum held to the world by a connect keeps its
// anchor on the pivot at every step to the solver's tolerance; the same pendulum under the
// default solver's velocity-level rows with error reduction drifts by orders of magnitude more.
double ConnectDrift(SolverType type) {
  const auto model = Import(
      "<mujoco><option timestep='0.005'/><worldbody><body name='bob' pos='0.5 0 1'><freejoint/>"
      "<geom type='capsule' fromto='-0.5 0 0 0 0 0' size='0.03' mass='1'/></body></worldbody>"
      "<equality><connect body1='bob' anchor='-0.5 0 0'/></equality></mujoco>");
  Data d(*model);
  d.qvel[4] = 3;  // spin about y: a swinging start
  StepOptions options = type == SolverType::kNsn ? TightNsn() : StepOptions{};
  options.solver.type = type;
  double drift = 0;
  for (int n = 0; n < 1000; ++n) {
    EXPECT_EQ(Step(*model, d, options), StepStatus::kOk);
    Kinematics(*model, d);
    drift = std::max(drift, EqualityErrors(*model, d, 0).position.norm());
  }
  return drift;
}

TEST(NsnSolverTest, AConnectIsHeldAtPositionLevelWithoutDrift) {
  const double nsn = ConnectDrift(SolverType::kNsn);
  EXPECT_LT(nsn, 1e-9);
  EXPECT_GT(ConnectDrift(SolverType::kSubAdmm), 1e3 * nsn);
}

// A hinge pendulum falling onto its limit stays at it (no violation beyond the tolerance, no
// bounce: a hard row at position level).
TEST(NsnSolverTest, AJointLimitIsNotViolated) {
  const auto model = Import(
      "<mujoco><compiler angle='radian'/><option timestep='0.005'/><worldbody><body pos='0 0 1'>"
      "<joint type='hinge' axis='0 1 0' limited='true' range='-0.5 0.5'/><geom type='capsule' "
      "fromto='0 0 0 0.5 0 0' size='0.02' mass='1'/></body></worldbody></mujoco>");
  Data d(*model);
  const StepOptions options = TightNsn();
  double lowest = 0;
  for (int n = 0; n < 400; ++n) {
    ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
    lowest = std::min(lowest, d.qpos[0] + 0.5);  // the rod falls towards +y rotation... either way
    lowest = std::min(lowest, 0.5 - d.qpos[0]);
  }
  EXPECT_GT(lowest, -1e-9);
  EXPECT_NEAR(std::abs(d.qpos[0]), 0.5, 1e-9);  // resting on the limit
  EXPECT_LT(std::abs(d.qvel[0]), 1e-6);
}

// An implicit servo's row: the soft law h lambda = -k e - b J v solved by nsn equals the default
// solver's solve of the same row (no other constraint), step by step.
TEST(NsnSolverTest, AServoRowMatchesTheDefaultSolversSolve) {
  const auto model = Import(
      "<mujoco><option timestep='0.01'/><worldbody><body><joint name='s' type='slide' axis='1 0 "
      "0'/><geom type='sphere' size='0.1' mass='2'/></body></worldbody><actuator><position "
      "joint='s' kp='400'/></actuator></mujoco>");
  Data a(*model), b(*model);
  a.ctrl[0] = b.ctrl[0] = 0.3;
  StepOptions reference;
  reference.solver.max_iterations = 10000;
  reference.solver.tolerance = 1e-13;
  for (int n = 0; n < 100; ++n) {
    ASSERT_EQ(Step(*model, a, TightNsn()), StepStatus::kOk);
    ASSERT_EQ(Step(*model, b, reference), StepStatus::kOk);
    ASSERT_NEAR(a.qvel[0], b.qvel[0], 1e-8) << n;
  }
  EXPECT_NEAR(a.qpos[0], 0.3, 0.05);
}

// A solid sphere (0.1 m, 1 kg) on the floor under gravity tilted by theta towards phi: one contact,
// a unique solution.
std::shared_ptr<const Model> TiltedSphere(double mu, double theta, double phi, double h) {
  const double gx = kGravity * std::sin(theta) * std::cos(phi);
  const double gy = kGravity * std::sin(theta) * std::sin(phi);
  const double gz = -kGravity * std::cos(theta);
  return Import("<mujoco><option timestep='" + Num(h) + "' gravity='" + Num(gx) + " " + Num(gy) +
                " " + Num(gz) + "'/><worldbody><geom type='plane' size='5 5 0.1' friction='" +
                Num(mu) + "'/><body pos='0 0 0.1'><freejoint/><geom type='sphere' " +
                "size='0.1' mass='1' friction='" + Num(mu) + "'/></body></worldbody></mujoco>");
}

// The ablations (NCP function, linear solvers PCG, Gauss-Seidel and the dense LDL^T,
// complementarity scaling h^2, undamped steps, contact rows kept at the step's start) solve the
// same problems to 1e-5 m/s: a sphere on a slope of tan 0.6 rolls at a = (5/7) g sin theta with mu
// = 0.5 (the contact sticks: mu >= (2/7) tan theta) and slides at g (sin - mu cos) with mu = 0.1,
// after 20 steps at a N h within 1e-4. The sphere's side of the contact is its centre (its point of
// curvature, nsn_solver.h), so it neither sinks nor gains a lever arm while it turns within a step.
// r = 1 (Sec 10.2: "fails badly ... with large sliding velocities") does not converge on the
// sliding sphere.
TEST(NsnSolverTest, TheAblationsSolveTheSameProblem) {
  const double h = 0.005, theta = std::atan(0.6), phi = 0.3;
  for (const double mu : {0.5, 0.1}) {
    const bool rolls = mu >= 2.0 / 7.0 * std::tan(theta);
    const double a = rolls ? 5.0 / 7.0 * kGravity * std::sin(theta)
                           : kGravity * (std::sin(theta) - mu * std::cos(theta));
    const auto model = TiltedSphere(mu, theta, phi, h);
    const auto run = [&](const StepOptions& options, int variant) {
      Data d(*model);
      for (int n = 0; n < 20; ++n) EXPECT_EQ(Step(*model, d, options), StepStatus::kOk);
      EXPECT_NEAR(d.qpos[2], 0.1, 1e-6) << mu << " " << variant;
      return d;
    };
    const auto along = [&](const Data& d) {
      return d.qvel[0] * std::cos(phi) + d.qvel[1] * std::sin(phi);
    };
    const Data paper = run(TightNsn(), -1);
    EXPECT_EQ(Figure(paper, "unconverged_islands"), 0) << mu;
    EXPECT_NEAR(along(paper), a * 20 * h, 1e-4 * a * 20 * h) << mu;
    Eigen::VectorXd reference;
    for (int variant = 0; variant < 8; ++variant) {
      StepOptions options = TightNsn();
      NsnParameters& p = options.solver.nsn;
      p.contact_rows_at_start = true;
      p.linear_iterations = 1000;
      p.linear_tolerance = 1e-12;
      if (variant == 1) p.ncp = NcpFunction::kMinimumMap;
      if (variant == 2) p.linear_solver = NsnLinearSolver::kConjugateGradient;
      if (variant == 3) p.linear_solver = NsnLinearSolver::kGaussSeidel;
      if (variant == 4) p.scaling = ComplementarityScaling::kTimeStepSquared;
      if (variant == 5) p.step_fraction = 1;
      if (variant == 6) p.scaling = ComplementarityScaling::kIdentity;
      if (variant == 7) p.linear_solver = NsnLinearSolver::kLdlt;
      const Data d = run(options, variant);
      if (variant == 6) {
        if (!rolls) {
          EXPECT_GT(Figure(d, "unconverged_islands"), 0);
        }
        continue;
      }
      EXPECT_EQ(Figure(d, "unconverged_islands"), 0) << mu << " " << variant;
      EXPECT_NEAR(along(d), a * 20 * h, 1e-4 * a * 20 * h) << mu << " " << variant;
      const Eigen::VectorXd state = Eigen::Map<const Eigen::VectorXd>(d.qvel.data(), model->nv);
      if (variant == 0) reference = state;
      EXPECT_LT((state - reference).lpNorm<Eigen::Infinity>(), 1e-5) << mu << " " << variant;
    }
  }
}

// Digest 7: a joint spring is a compliance row E = 1 / K, so the step is backward Euler on it
// whatever the integrator, as a row (NsnParameters::spring_rows) or eliminated into H (the
// default): a slide joint's mass m on a spring K (h omega = 10, where the explicit spring of
// MuJoCo's Euler grows without bound), with no other row, follows
//   (m + h^2 K) v+ = m v - h K (x - x_spring),  x+ = x + h v+
// step by step under euler and implicit-euler, in a system of its own (no island). A hinge's
// spring toward a nonzero springref likewise, beside a free body that has no spring.
TEST(NsnSolverTest, AJointSpringIsBackwardEulerAsARowOrInHUnderEitherIntegrator) {
  const double mass = 2, k = 2e6, h = 0.01, rest = 0.05;
  const auto model = Import(
      "<mujoco><compiler angle='radian'/><option timestep='" + Num(h) +
      "' gravity='0 0 0'/><worldbody><body><joint type='slide' axis='1 0 0' stiffness='" + Num(k) +
      "' springref='" + Num(rest) + "'/><geom type='sphere' size='0.1' mass='" + Num(mass) +
      "' contype='0' conaffinity='0'/></body><body pos='0 1 0'><joint type='hinge' axis='0 0 1' "
      "stiffness='" +
      Num(k) + "' springref='0.2'/><geom type='box' size='0.2 0.01 0.01' mass='" + Num(mass) +
      "' contype='0' conaffinity='0'/></body><body pos='0 2 0'><freejoint/><geom type='sphere' "
      "size='0.1' mass='1' contype='0' conaffinity='0'/></body></worldbody></mujoco>");
  ASSERT_NE(model, nullptr);
  const double inertia = mass * (0.4 * 0.4 + 0.02 * 0.02) / 12;  // the box's about z
  for (const bool rows : {false, true}) {
    for (const Integrator integrator : {Integrator::kEuler, Integrator::kImplicitEuler}) {
      const std::string label = std::string(IntegratorName(integrator)) + (rows ? " rows" : " H");
      Data d(*model);
      d.qpos[0] = 0.15;
      d.qvel[0] = 0.3;
      d.qvel[1] = -1;
      d.qvel[2] = 0.5;  // the free body drifts along x
      StepOptions options = TightNsn();
      options.solver.nsn.newton_tolerance = 1e-13;
      options.solver.nsn.spring_rows = rows;
      options.solver.integrator = integrator;
      double x = d.qpos[0], v = d.qvel[0], angle = d.qpos[1], omega = d.qvel[1], iterations = 0;
      for (int n = 0; n < 40; ++n) {
        ASSERT_EQ(Step(*model, d, options), StepStatus::kOk) << n;
        EXPECT_EQ(Figure(d, "unconverged_islands"), 0);
        iterations += Figure(d, "newton_iterations");
        v = (mass * v - h * k * (x - rest)) / (mass + h * h * k);
        x += h * v;
        omega = (inertia * omega - h * k * (angle - 0.2)) / (inertia + h * h * k);
        angle += h * omega;
        EXPECT_NEAR(d.qpos[0], x, 1e-9 * std::max(1.0, std::abs(x - rest))) << label << n;
        EXPECT_NEAR(d.qvel[0], v, 1e-8) << label << " step " << n;
        EXPECT_NEAR(d.qpos[1], angle, 1e-9) << label << " step " << n;
      }
      EXPECT_EQ(d.islands.num, 0);
      EXPECT_LT(std::abs(x - rest), 0.1);  // backward Euler dissipates: inside the start's stretch
      EXPECT_NEAR(d.qpos[2], 0.5 * 40 * h, 1e-12);  // the free body: no rows, u~ exactly
      // As rows the trees' systems take Newton iterations; in H they have no row and take u~.
      if (rows) {
        EXPECT_GT(iterations, 40) << label;
      }
    }
  }
}

// Digest 14 (coupling): a chain of 16 links (l = 0.1 m, 0.003 kg each, the paper's beam) on
// hinges of stiffness k = 250 N m/rad, its base welded to the world (the weld's rows put it in an
// island, solved by nsn), without gravity, under a load P = 0.01 N across it at the last link's
// centre of mass, settles with that point deflected by (P / k) sum_i L_i^2, L_i = (j + 1/2) l its
// lever from hinge i (small angles; 1%): the digest's (P l^2 / k) sum i^2 at the link centres. The
// springs are implicit under either integrator, in H or as compliance rows E = 1 / k (the
// explicit springs of MuJoCo's Euler would blow up: h omega is about 10^2 for the last link).
constexpr double kChainLink = 0.1, kChainStiffness = 250, kChainLoad = 0.01;

std::shared_ptr<const Model> HingeChain() {
  std::string chain =
      "<body name='base' pos='0 0 1'><freejoint/><geom type='box' "
      "size='0.02 0.02 0.02' mass='0.003' contype='0' conaffinity='0'/>";
  for (int i = 0; i < 16; ++i) {
    chain += "<body name='link" + std::to_string(i) + "' pos='" + Num(i == 0 ? 0 : kChainLink) +
             " 0 0'><joint type='hinge' axis='0 1 0' stiffness='" + Num(kChainStiffness) +
             "' damping='0.01'/><geom type='capsule' fromto='0 0 0 " + Num(kChainLink) +
             " 0 0' size='0.005' mass='0.003' contype='0' conaffinity='0'/>";
  }
  for (int i = 0; i < 17; ++i) chain += "</body>";
  return Import("<mujoco><option timestep='0.0083' gravity='0 0 0'/><worldbody>" + chain +
                "</worldbody><equality><weld body1='base'/></equality></mujoco>");
}

// The static estimate (P / k) sum_i L_i^2 and the chain's tip deflection after `steps` under the
// load (NaN where a step fails or the state is not finite).
double ChainStaticDeflection() {
  double sum = 0;
  for (int j = 0; j < 16; ++j) sum += (j + 0.5) * (j + 0.5);
  return kChainLoad * kChainLink * kChainLink / kChainStiffness * sum;
}

double ChainDeflection(const Model& model, const StepOptions& options, int steps) {
  Data d(model);
  const int tip = model.nbody - 1;
  for (int n = 0; n < steps; ++n) {
    d.xfrc_applied[tip][2] = -kChainLoad;  // MuJoCo's order: force first, at the centre of mass
    if (Step(model, d, options) != StepStatus::kOk) return std::nan("");
  }
  EXPECT_GT(d.islands.num, 0);
  Kinematics(model, d);
  return 1 - d.xipos[tip].z();
}

TEST(NsnSolverTest, AHingeChainUnderATipLoadDeflectsAsTheStaticBeam) {
  const auto model = HingeChain();
  ASSERT_NE(model, nullptr);
  const double expected = ChainStaticDeflection();
  for (const bool rows : {false, true}) {
    for (const Integrator integrator : {Integrator::kEuler, Integrator::kImplicitEuler}) {
      StepOptions options = TightNsn();
      options.solver.nsn.spring_rows = rows;
      options.solver.integrator = integrator;
      EXPECT_NEAR(ChainDeflection(*model, options, 600), expected, 0.01 * expected)
          << IntegratorName(integrator) << (rows ? " rows" : " H");
    }
  }
}

// Digest 14 test 12 (Fig. 18's beam): at the paper's Fetch Beam counts (6 Newton x 50 linear
// iterations, no tolerance), the springs as the paper's compliance rows (NsnParameters::
// spring_rows), PCR and PCG reach the static deflection of the joints' stiffness,
// while relaxation does not: Gauss-Seidel leaves the chain too soft (sweeps over the spring rows
// converge slowly) and undamped Jacobi diverges (the Schur matrix is far from diagonally
// dominant along the chain).
TEST(NsnSolverTest, AtTheBeamsFixedCountsPcrReachesTheJointStiffnessAndRelaxationDoesNot) {
  const auto model = HingeChain();
  ASSERT_NE(model, nullptr);
  const double expected = ChainStaticDeflection();
  const auto deflection = [&](NsnLinearSolver solver, bool rows = true) {
    StepOptions options = Nsn();
    options.solver.nsn.spring_rows = rows;
    options.solver.nsn.newton_tolerance = 0;
    options.solver.nsn.linear_tolerance = 0;
    options.solver.nsn.newton_iterations = 6;
    options.solver.nsn.linear_iterations = 50;
    options.solver.nsn.linear_solver = solver;
    return ChainDeflection(*model, options, 600);
  };
  EXPECT_NEAR(deflection(NsnLinearSolver::kConjugateResidual), expected, 1e-3 * expected);
  EXPECT_NEAR(deflection(NsnLinearSolver::kConjugateGradient), expected, 1e-3 * expected);
  EXPECT_GT(deflection(NsnLinearSolver::kGaussSeidel), 1.1 * expected);
  const double jacobi = deflection(NsnLinearSolver::kJacobi);
  EXPECT_FALSE(std::isfinite(jacobi) && std::abs(jacobi - expected) < 0.1 * expected) << jacobi;
  // With the springs in H (the default) Gauss-Seidel sees only the weld's rows and reaches it.
  EXPECT_NEAR(deflection(NsnLinearSolver::kGaussSeidel, false), expected, 1e-3 * expected);
}

TEST(NsnSolverTest, RefusesBoxRowsHighCondimAndOtherTimeStepping) {
  const auto friction = Import(
      "<mujoco><worldbody><body><joint name='elbow' type='hinge' frictionloss='0.5'/><geom "
      "type='sphere' size='0.1'/></body></worldbody></mujoco>");
  EXPECT_NE(SolverRefusesModel(*friction, SolverType::kNsn)
                .find("dry friction (frictionloss) of joint 'elbow'"),
            std::string::npos);
  const auto torsion = Import(
      "<mujoco><worldbody><geom name='floor' type='plane' size='1 1 1' condim='4'/><body>"
      "<freejoint/><geom type='sphere' size='0.1'/></body></worldbody></mujoco>");
  EXPECT_NE(SolverRefusesModel(*torsion, SolverType::kNsn).find("condim 4 or 6"),
            std::string::npos);
  Data d(*torsion);
  EXPECT_NE(Step(*torsion, d, Nsn()), StepStatus::kOk);
  StepOptions theta = Nsn();
  theta.theta = 0.5;
  EXPECT_NE(ValidateStepOptions(theta).find("solver nsn needs theta = 0"), std::string::npos);
  StepOptions midpoint = Nsn();
  midpoint.solver.integrator = Integrator::kMidpoint;
  EXPECT_NE(ValidateStepOptions(midpoint).find("solver nsn needs"), std::string::npos);
  midpoint.solver.integrator = Integrator::kImplicitEuler;
  EXPECT_EQ(ValidateStepOptions(midpoint), "");
}

// Boxes and spheres dropped apart onto the ground, a sprung hinge at its limit, a connect: islands
// in parallel; and a sprung slide with no other row (a system of its own).
std::shared_ptr<const Model> Scatter() {
  std::string bodies;
  for (int i = 0; i < 6; ++i) {
    const std::string shape =
        i % 2 == 0 ? "type='box' size='0.05 0.06 0.04'" : "type='sphere' size='0.05'";
    bodies +=
        "<body pos='" + Num(0.4 * i) + " 0 0.06'><freejoint/><geom " + shape + " mass='1'/></body>";
  }
  return Import(
      "<mujoco><option timestep='0.005'/><worldbody><geom name='floor' type='plane' size='5 5 "
      "0.1' friction='0.6'/>" +
      bodies +
      "<body name='arm' pos='0 2 1'><joint name='hinge' type='hinge' axis='0 1 0' limited='true' "
      "range='-0.5 0.5' stiffness='2'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.02' "
      "mass='1'/></body><body name='bob' pos='0 -2 1'><joint type='hinge' axis='1 0 0'/><joint "
      "name='reach' type='slide' axis='0 0 1'/><geom type='sphere' size='0.05' pos='0 0 -0.4' "
      "mass='1'/></body><body name='spring' pos='1 2 1'><joint type='slide' axis='0 0 1' "
      "stiffness='400'/><geom type='sphere' size='0.05' mass='1' contype='0' conaffinity='0'/>"
      "</body></worldbody><equality><connect body1='bob' anchor='0 0 -0.4'/>"
      "</equality><actuator><position joint='reach' kp='50'/></actuator></mujoco>");
}

std::uint64_t HashAfterSteps(const Model& model, int threads) {
  Data d(model);
  for (int k = 0; k < model.nv; ++k) d.qvel[k] = 0.3 * std::sin(1.0 + k);
  RunWithThreads(threads, [&] {
    for (int n = 0; n < 150; ++n) EXPECT_EQ(Step(model, d, Nsn()), StepStatus::kOk);
  });
  EXPECT_GE(d.islands.num, 4);
  return StateHash(model, d);
}

TEST(NsnSolverTest, BitIdenticalForOneTwoAndEightThreads) {
  const auto model = Scatter();
  const std::uint64_t one = HashAfterSteps(*model, 1);
  EXPECT_EQ(HashAfterSteps(*model, 2), one);
  EXPECT_EQ(HashAfterSteps(*model, 8), one);
}

TEST(NsnSolverTest, AWarmStepAllocatesNothing) {
  const auto model = Scatter();
  const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, 1);
  Data d(*model);
  for (int k = 0; k < model->nv; ++k) d.qvel[k] = 0.3 * std::sin(1.0 + k);
  const StepOptions options = Nsn();
  for (int n = 0; n < 300; ++n) ASSERT_EQ(Step(*model, d, options), StepStatus::kOk);
  long count = 0;
  {
    const testing::AllocationCounter allocations;
    for (int n = 0; n < 100; ++n) Step(*model, d, options);
    count = allocations.count();
  }
  EXPECT_EQ(count, 0);
  EXPECT_GE(d.islands.num, 4);
}

}  // namespace
}  // namespace alsim
