// Gradients through a step (engine/sim/step_gradients.h) against central finite differences of
// the whole step, each perturbed step solved again to 1e-13 (digest seed-000-icf.md section 15):
// in stick, slip and separation, for v, q (a free body's rotation on the tangent space), u and
// each named parameter, 1e-5 relative where the step is smooth there.
#include "engine/sim/step_gradients.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine/model/model_import.h"
#include "engine/sim/integrate_positions.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

std::shared_ptr<const Model> Import(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml, {}, "gradients.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

StepOptions Options(SolverType type) {
  StepOptions options;
  options.solver.type = type;
  options.solver.icf.relative_tolerance = 1e-14;
  options.solver.icf.absolute_tolerance = 0;
  options.solver.sap.relative_tolerance = 1e-14;
  options.solver.sap.absolute_tolerance = 0;
  options.solver.max_iterations = 200;
  return options;
}

// A state to step from.
struct State {
  std::vector<double> qpos, qvel, ctrl;
};

State Capture(const Data& d) { return State{d.qpos, d.qvel, d.ctrl}; }

// The step's next velocity and position (as tangent offsets from `reference`'s next position)
// from `state`, in a fresh Data.
void StepFrom(const Model& m, const StepOptions& options, const State& state,
              const std::vector<double>& reference, std::vector<double>* v,
              std::vector<double>* dq) {
  Data d(m);
  d.qpos = state.qpos;
  d.qvel = state.qvel;
  d.ctrl = state.ctrl;
  ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
  *v = d.qvel;
  dq->assign(m.nv, 0.0);
  if (!reference.empty()) DifferencePositions(m, reference.data(), d.qpos.data(), 1.0, dq->data());
}

// max |a - b| / max |b| over a Jacobian (row-major, nv rows); a Jacobian of zeros absolute.
double RelativeError(const std::vector<double>& a, const std::vector<double>& b) {
  double error = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    error = std::max(error, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return error / std::max(scale, 1e-9);
}

// Central differences of the whole step from `state` over each input that `move(state, j, eps)`
// perturbs (columns inputs), into dv and dq (row-major, nv rows).
void FiniteDifferences(const Model& m, const StepOptions& options, const State& state,
                       const std::vector<double>& next_qpos, int inputs,
                       const std::function<void(Model*, State*, StepOptions*, int, double)>& move,
                       double eps, std::vector<double>* dv, std::vector<double>* dq) {
  dv->assign(static_cast<size_t>(m.nv) * inputs, 0.0);
  dq->assign(static_cast<size_t>(m.nv) * inputs, 0.0);
  // Richardson's extrapolation of the central differences at eps and eps / 2, (4 D(eps / 2) -
  // D(eps)) / 3, exact to O(eps^4): a contact's scale is its penetration (m g / k, tens of
  // microns here), which eps must not approach at second order.
  for (int j = 0; j < inputs; ++j) {
    for (const double step : {eps, eps / 2}) {
      const double weight = step == eps ? -1.0 / 3 : 4.0 / 3;
      std::vector<double> v[2], q[2];
      for (int s = 0; s < 2; ++s) {
        State moved = state;
        StepOptions moved_options = options;
        Model model = m;
        move(&model, &moved, &moved_options, j, s == 0 ? step : -step);
        StepFrom(model, moved_options, moved, next_qpos, &v[s], &q[s]);
      }
      for (int i = 0; i < m.nv; ++i) {
        (*dv)[static_cast<size_t>(i) * inputs + j] += weight * (v[0][i] - v[1][i]) / (2 * step);
        (*dq)[static_cast<size_t>(i) * inputs + j] += weight * (q[0][i] - q[1][i]) / (2 * step);
      }
    }
  }
}

// The value a parameter's name (GradientRequest::parameters) refers to.
double* ParameterField(Model* m, StepOptions* options, const std::string& name) {
  const size_t colon = name.find(':');
  const std::string kind = name.substr(0, colon), element = name.substr(colon + 1);
  auto index = [](const std::vector<std::string>& names, const std::string& n) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), n) - names.begin());
  };
  if (kind == "body_mass") return &m->body_mass.at(index(m->body_name, element));
  if (kind == "geom_friction") return &m->geom_friction.at(index(m->geom_name, element))[0];
  if (kind == "geom_stiffness") return &m->geom_contact_stiffness.at(index(m->geom_name, element));
  if (kind == "geom_dissipation") {
    return &m->geom_contact_dissipation.at(index(m->geom_name, element));
  }
  if (kind == "icf_stiffness") return &options->solver.icf.stiffness;
  return &options->solver.icf.dissipation;
}

struct Case {
  std::string name;
  std::shared_ptr<const Model> model;
  State state;
  std::vector<std::string> parameters;
  // The stiction speed v_s: the soft norm's curvature 1 / v_s limits how far the linearization
  // holds in stick, so the finite differences' steps must move the slip well under v_s.
  double stiction = 1e-4;
  // Servos as soft constraints (the default) take dg/dv and dg/du by differences; as explicit
  // forces, by their exact forms (step_gradients.h).
  bool implicit_servos = true;
  bool regularized = false;  // regularized Lagged (eq. 26): dg/dv by differences
};

// Every Jacobian of StepGradients against the finite differences, within `tolerance`.
void Check(const Case& c, SolverType type, double tolerance) {
  SCOPED_TRACE(c.name + " " + SolverName(type));
  const Model& m = *c.model;
  StepOptions options = Options(type);
  options.solver.icf.stiction_speed = c.stiction;
  options.constraints.implicit_servos = c.implicit_servos;
  options.solver.icf.regularized = c.regularized;
  GradientRequest request;
  request.parameters = c.parameters;
  ASSERT_EQ(StepGradients::Validate(m, options, request), "");
  Data d(m);
  d.qpos = c.state.qpos;
  d.qvel = c.state.qvel;
  d.ctrl = c.state.ctrl;
  StepGradients gradients(m, type);
  StepJacobians jacobians;
  ASSERT_EQ(gradients.Step(m, d, options, request, &jacobians), StepStatus::kOk);
  EXPECT_LT(jacobians.residual, 1e-10);
  EXPECT_EQ(jacobians.constraint_changes, 0);
  const std::vector<double> next_qpos = d.qpos;
  const double eps = 1e-6;
  std::vector<double> dv, dq;

  FiniteDifferences(
      m, options, c.state, next_qpos, m.nv,
      [](Model*, State* s, StepOptions*, int j, double e) { s->qvel[j] += e; }, eps, &dv, &dq);
  EXPECT_LT(RelativeError(jacobians.dv_dv, dv), tolerance) << "dv/dv";
  EXPECT_LT(RelativeError(jacobians.dq_dv, dq), tolerance) << "dq/dv";

  FiniteDifferences(
      m, options, c.state, next_qpos, m.nv,
      [](Model* model, State* s, StepOptions*, int j, double e) {
        std::vector<double> unit(model->nv, 0.0);
        unit[j] = 1;
        IntegratePositions(*model, unit.data(), e, s->qpos.data());
      },
      eps, &dv, &dq);
  EXPECT_LT(RelativeError(jacobians.dv_dq, dv), tolerance) << "dv/dq";
  EXPECT_LT(RelativeError(jacobians.dq_dq, dq), tolerance) << "dq/dq";

  if (m.nu > 0) {
    FiniteDifferences(
        m, options, c.state, next_qpos, m.nu,
        [](Model*, State* s, StepOptions*, int a, double e) { s->ctrl[a] += e; }, 100 * eps, &dv,
        &dq);
    EXPECT_LT(RelativeError(jacobians.dv_du, dv), tolerance) << "dv/du";
    EXPECT_LT(RelativeError(jacobians.dq_du, dq), tolerance) << "dq/du";
  }
  for (size_t p = 0; p < c.parameters.size(); ++p) {
    const std::string& name = c.parameters[p];
    // Relative steps, as the parameters' scales differ by orders of magnitude.
    FiniteDifferences(
        m, options, c.state, next_qpos, 1,
        [&](Model* model, State*, StepOptions* o, int, double e) {
          *ParameterField(model, o, name) *= 1 + e;
        },
        eps, &dv, &dq);
    Model copy = m;
    StepOptions copy_options = options;
    const double value = *ParameterField(&copy, &copy_options, name);  // d/dp = d/d(1 + e) / p
    std::vector<double> column(m.nv), expected(m.nv);
    const int np = static_cast<int>(c.parameters.size());
    for (int i = 0; i < m.nv; ++i) {
      column[i] = jacobians.dv_dp[static_cast<size_t>(i) * np + p];
      expected[i] = dv[i] / value;
    }
    EXPECT_LT(RelativeError(column, expected), tolerance) << "dv/d " << name;
  }
}

// A box on a plane: a free joint; its contacts' compliance set by the scene.
std::shared_ptr<const Model> Box() {
  return Import(
      "<mujoco><option timestep='0.002'/><custom>"
      "<text name='alsim:contact:box' data='stiffness 2e5 dissipation 5'/></custom>"
      "<worldbody><geom name='floor' type='plane' size='5 5 0.1' friction='0.6'/>"
      "<body name='box' pos='0 0 0.0495'><freejoint/>"
      "<geom name='box' type='box' size='0.1 0.08 0.05' mass='1.3' friction='0.6'/>"
      "</body></worldbody></mujoco>");
}

// A particle on slide joints x, z with a motor on each.
std::shared_ptr<const Model> Particle() {
  return Import(
      "<mujoco><option timestep='0.002'/><worldbody>"
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.5'/>"
      "<body name='ball' pos='0 0 0.1'><joint name='x' type='slide' axis='1 0 0'/>"
      "<joint name='z' type='slide' axis='0 0 1'/>"
      "<geom name='ball' type='sphere' size='0.1' mass='2' friction='0.5'/></body></worldbody>"
      "<actuator><motor joint='x' gear='1'/><motor joint='z' gear='1'/></actuator></mujoco>");
}

// The state after `steps` steps of `m` from qpos0 (with initial velocities and controls).
State Settle(const Model& m, SolverType type, int steps, const std::vector<double>& qvel,
             const std::vector<double>& ctrl, double stiction = 1e-4) {
  Data d(m);
  if (!qvel.empty()) d.qvel = qvel;
  if (!ctrl.empty()) d.ctrl = ctrl;
  StepOptions options = Options(type);
  options.solver.icf.stiction_speed = stiction;
  for (int i = 0; i < steps; ++i) EXPECT_EQ(Step(m, d, options), StepStatus::kOk);
  return Capture(d);
}

class StepGradientsTest : public testing::TestWithParam<SolverType> {};

TEST_P(StepGradientsTest, ParticleInStick) {
  const auto m = Particle();
  // 3 N pushes against mu m g = 9.81 N: the ball stays.
  Case c{"stick",
         m,
         Settle(*m, GetParam(), 200, {}, {3, 0}, 1e-3),
         {"body_mass:ball", "geom_friction:ball", "icf_stiffness"},
         1e-3};
  Check(c, GetParam(), 1e-5);
}

TEST_P(StepGradientsTest, ParticleInSlip) {
  const auto m = Particle();
  Case c{"slip",
         m,
         Settle(*m, GetParam(), 100, {1.5, 0}, {4, -2}),
         {"body_mass:ball", "geom_friction:ball", "icf_stiffness"}};
  Check(c, GetParam(), 1e-5);
}

TEST_P(StepGradientsTest, ParticleInImpact) {
  if (GetParam() == SolverType::kSap) GTEST_SKIP() << "ICF's normal law: SAP's is near-rigid";
  const auto m = Particle();
  // One step after touching down at 1 m/s while sliding: compressing, so dissipation acts.
  Case c{"impact",
         m,
         Settle(*m, GetParam(), 1, {0.8, -1.0}, {0, 0}),
         {"body_mass:ball", "geom_friction:ball", "icf_stiffness", "icf_dissipation"}};
  ASSERT_LT(c.state.qpos[1], 0);
  ASSERT_LT(c.state.qvel[1], 0);
  Check(c, GetParam(), 1e-5);
}

TEST_P(StepGradientsTest, SpinningBoxInSlip) {
  const auto m = Box();
  Case c{"box slip",
         m,
         Settle(*m, GetParam(), 60, {1.0, 0.5, 0, 0, 0, 6}, {}),
         {"body_mass:box", "geom_friction:box", "geom_stiffness:box", "geom_dissipation:box"}};
  Check(c, GetParam(), 1e-5);
}

TEST_P(StepGradientsTest, TumblingBoxInFlight) {
  const auto m = Box();
  State s = Settle(*m, GetParam(), 0, {}, {});
  s.qpos[2] = 1.0;
  s.qvel = {0.3, -0.2, 1.0, 4.0, -2.0, 3.0};
  Case c{"separation", m, s, {"body_mass:box"}};
  Check(c, GetParam(), 1e-5);
}

// A gradient step advances the state exactly as Step does.
TEST_P(StepGradientsTest, AdvancesAsStep) {
  const auto m = Box();
  const StepOptions options = Options(GetParam());
  Data a(*m), b(*m);
  a.qvel = b.qvel = {1.0, 0.5, 0, 0, 0, 4};
  StepGradients gradients(*m, GetParam());
  GradientRequest request;
  request.parameters = {"body_mass:box"};
  StepJacobians jacobians;
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(Step(*m, a, options), StepStatus::kOk);
    ASSERT_EQ(gradients.Step(*m, b, options, request, &jacobians), StepStatus::kOk);
    ASSERT_EQ(a.qpos, b.qpos);
    ASSERT_EQ(a.qvel, b.qvel);
  }
  EXPECT_EQ(jacobians.dv_dv.size(), 36u);
  EXPECT_EQ(jacobians.dv_dp.size(), 6u);
}

// A two-link arm with joint damping, a damped fixed tendon, a motor, a position servo and a
// force-limited velocity servo, its tip sliding on the floor.
std::shared_ptr<const Model> Arm() {
  return Import(
      "<mujoco><option timestep='0.002'/><worldbody>"
      "<geom name='floor' type='plane' size='5 5 0.1' friction='0.7'/>"
      "<body name='upper' pos='0 0 0.55'><joint name='shoulder' type='hinge' axis='0 1 0' "
      "damping='0.3'/><geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1'/>"
      "<body name='lower' pos='0.3 0 0'><joint name='elbow' type='hinge' axis='0 1 0' "
      "damping='0.1'/><geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.03' mass='0.6'/>"
      "<body pos='0 0 -0.52'><joint name='wrist' type='slide' axis='1 0 0'/>"
      "<geom name='tip' type='sphere' size='0.04' mass='0.2'/></body></body></body>"
      "</worldbody><tendon><fixed name='coupling' damping='0.5'><joint joint='shoulder' "
      "coef='1'/><joint joint='elbow' coef='-0.5'/></fixed></tendon>"
      "<actuator><motor joint='shoulder' gear='2'/><position joint='elbow' kp='30'/>"
      "<velocity joint='wrist' kv='4' forcelimited='true' forcerange='-3 3'/>"
      "<motor tendon='coupling' gear='1' ctrllimited='true' ctrlrange='-1 1'/></actuator>"
      "</mujoco>");
}

TEST_P(StepGradientsTest, ArmWithServosAndTendons) {
  const auto m = Arm();
  for (const bool implicit : {true, false}) {
    Case c{implicit ? "arm, implicit servos" : "arm, explicit servos",
           m,
           Settle(*m, GetParam(), 60, {0.5, -1.0, 0.3}, {0.5, 0.2, 0.4, 0.3}),
           {"body_mass:lower", "geom_friction:tip"}};
    c.state.ctrl = {0.7, 0.25, -0.2, 0.5};
    c.implicit_servos = implicit;
    Check(c, GetParam(), 1e-5);
  }
}

TEST_P(StepGradientsTest, HumanoidRegularizedLagged) {
  if (GetParam() != SolverType::kIcfLagged) GTEST_SKIP() << "eq. (26) is Lagged's";
  const ModelImport imported = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const auto m = imported.model;
  Data d(*m);
  StepOptions options = Options(GetParam());
  options.solver.icf.regularized = true;
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int i = 0; i < 120; ++i) {
    for (double& u : d.ctrl) u = uniform(random);
    ASSERT_EQ(Step(*m, d, options), StepStatus::kOk);
  }
  ASSERT_GE(d.contact.size(), 2u);
  Case c{"humanoid regularized", m, Capture(d), {}};
  c.regularized = true;
  Check(c, GetParam(), 1e-5);
}

// MuJoCo's humanoid under random controls: 27 dofs, a free joint, feet and hands on the floor,
// joint limits, self-contacts.
TEST_P(StepGradientsTest, HumanoidUnderRandomControls) {
  const ModelImport imported = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  const auto m = imported.model;
  Data d(*m);
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const StepOptions options = Options(GetParam());
  for (int i = 0; i < 150; ++i) {
    for (double& u : d.ctrl) u = uniform(random);
    ASSERT_EQ(Step(*m, d, options), StepStatus::kOk);
  }
  for (double& u : d.ctrl) u = uniform(random);
  ASSERT_GE(d.contact.size(), 3u);  // the last step's: feet on the floor
  Case c{"humanoid", m, Capture(d), {"body_mass:torso", "geom_friction:floor", "icf_stiffness"}};
  Check(c, GetParam(), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Solvers, StepGradientsTest,
                         testing::Values(SolverType::kIcfLagged, SolverType::kIcfSimilar,
                                         SolverType::kSap),
                         [](const testing::TestParamInfo<SolverType>& p) {
                           return std::string(p.param == SolverType::kIcfLagged    ? "Lagged"
                                              : p.param == SolverType::kIcfSimilar ? "Similar"
                                                                                   : "Sap");
                         });

// The solver's interrupt stops the columns of differences: the step stands, no Jacobians.
TEST(StepGradients, InterruptDropsTheJacobiansNotTheStep) {
  const auto m = Box();
  StepOptions options = Options(SolverType::kIcfLagged);
  std::atomic<bool> interrupt{true};
  options.solver.interrupt = &interrupt;
  Data a(*m), b(*m);
  a.qvel[0] = b.qvel[0] = 1;
  GradientRequest request;
  StepGradients gradients(*m, SolverType::kIcfLagged);
  StepJacobians jacobians;
  ASSERT_EQ(Step(*m, a, options), StepStatus::kOk);
  ASSERT_EQ(gradients.Step(*m, b, options, request, &jacobians), StepStatus::kOk);
  EXPECT_EQ(a.qpos, b.qpos);
  EXPECT_TRUE(jacobians.interrupted);
  EXPECT_EQ(jacobians.nv, 0);
  EXPECT_TRUE(jacobians.dv_dq.empty());
  interrupt = false;
  ASSERT_EQ(gradients.Step(*m, b, options, request, &jacobians), StepStatus::kOk);
  EXPECT_FALSE(jacobians.interrupted);
  EXPECT_EQ(jacobians.dv_dq.size(), 36u);
}

TEST(StepGradients, RefusesWhatItCannotDifferentiate) {
  const auto m = Box();
  StepOptions options = Options(SolverType::kIcfLagged);
  GradientRequest request;
  EXPECT_EQ(StepGradients::Validate(*m, options, request), "");
  StepOptions other = options;
  other.solver.type = SolverType::kSubAdmm;
  EXPECT_NE(StepGradients::Validate(*m, other, request).find("icf-lagged, icf-similar or sap"),
            std::string::npos);
  other = options;
  other.theta = 0.5;
  EXPECT_NE(StepGradients::Validate(*m, other, request).find("theta 0"), std::string::npos);
  other = options;
  other.solver.time_budget_us = 100;
  EXPECT_NE(StepGradients::Validate(*m, other, request).find("time_budget_us"), std::string::npos);
  for (const char* bad : {"body_mass:nobody", "geom_stiffness:floor", "geom_dissipation:floor",
                          "mass", "geom_friction:", "body_mass:world"}) {
    request.parameters = {bad};
    EXPECT_NE(StepGradients::Validate(*m, options, request), "") << bad;
  }
  request.parameters = {"geom_stiffness:box", "geom_dissipation:box", "icf_dissipation"};
  EXPECT_EQ(StepGradients::Validate(*m, options, request), "");
  // A refused step changes nothing.
  Data d(*m);
  d.qvel[0] = 1;
  const std::vector<double> qpos = d.qpos, qvel = d.qvel;
  StepGradients gradients(*m, SolverType::kIcfLagged);
  StepJacobians jacobians;
  EXPECT_EQ(gradients.Step(*m, d, other, request, &jacobians), StepStatus::kInvalidOptions);
  EXPECT_EQ(d.qpos, qpos);
  EXPECT_EQ(d.qvel, qvel);
}

}  // namespace
}  // namespace alsim
