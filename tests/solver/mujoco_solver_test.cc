// The Newton kit in MuJoCo's model (--solver mujoco) against libmujoco 2.2.2 as the oracle: one
// step from identical states (qpos, qvel, ctrl) on scenes where both engines find the same
// contacts must give MuJoCo's next velocities and positions, pyramidal and elliptic, with MuJoCo's
// default soft contact and with solref, solimp and impratio set; and the iterations at rest.
// Determinism and allocation: newton_solver_test.cc.
#include <gtest/gtest.h>

#include <mujoco/mujoco.h>

#include <string>
#include <vector>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/newton/newton_solver.h"
#include "engine/solver/solver.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::ExpectNear;
using testing::OracleScene;
using testing::WriteTempScene;

StepOptions MujocoOptions() {
  StepOptions options;
  options.solver.type = SolverType::kMujoco;
  options.solver.mujoco.tolerance = 1e-12;
  return options;
}

// A scene: MJCF text, and the state both engines start from.
struct OracleCase {
  std::string name;
  std::string xml;
  std::vector<double> qpos;
  std::vector<double> qvel;
};

// The geoms' contact parameters: none (MuJoCo's defaults), or solref/solimp on every geom, and
// the options element (cone, impratio).
std::string Scene(const std::string& geom_defaults, const std::string& option,
                  const std::string& body) {
  return "<mujoco><option timestep='0.002' " + option + "/><default><geom " + geom_defaults +
         "/></default><worldbody><geom name='floor' type='plane' size='5 5 0.1'/>" + body +
         "</worldbody></mujoco>";
}

std::vector<OracleCase> Cases(const std::string& geom_defaults, const std::string& option) {
  std::vector<OracleCase> cases;
  cases.push_back({"sphere_sliding",
                   Scene(geom_defaults, option,
                         "<body pos='0 0 0.099'><freejoint/><geom type='sphere' size='0.1' "
                         "friction='0.8'/></body>"),
                   {0, 0, 0.099, 1, 0, 0, 0},
                   {0.7, -0.3, -0.2, 0.5, 1.0, -2.0}});
  cases.push_back({"capsule_rolling",
                   Scene(geom_defaults, option,
                         "<body><freejoint/><geom type='capsule' size='0.05 0.2' "
                         "friction='0.6'/></body>"),
                   {0, 0, 0.0495, 0.7071067811865476, 0.7071067811865476, 0, 0},
                   {0.2, 0.1, -0.3, 1.5, 0.4, 0.2}});
  cases.push_back({"box_landing",
                   Scene(geom_defaults, option,
                         "<body><freejoint/><geom type='box' size='0.1 0.15 0.05' "
                         "mass='2'/></body>"),
                   {0.3, -0.2, 0.0492, 1, 0, 0, 0},
                   {0.4, 0.1, -0.8, 0.3, -0.2, 0.5}});
  // Boxes just touching, contacts kept by a margin: MuJoCo's box-box reports half the overlap of
  // interpenetrating boxes as their distance, alsim the overlap, so the stack starts at contact.
  cases.push_back(
      {"box_stack",
       Scene(geom_defaults, option,
             "<body><freejoint/><geom type='box' size='0.1 0.1 0.1' margin='0.001'/>"
             "</body><body><freejoint/><geom type='box' size='0.08 0.08 0.08' "
             "margin='0.001'/></body><body><freejoint/><geom type='box' "
             "size='0.06 0.06 0.06' margin='0.001'/></body>"),
       {0, 0, 0.1, 1, 0, 0, 0, 0.01, 0.005, 0.28, 1, 0, 0, 0, -0.01, 0.0, 0.42, 1, 0, 0, 0},
       {0.1, 0, -0.1, 0, 0, 0.2, 0, 0.1, -0.2, 0.1, 0, 0, 0, 0, -0.3, 0, 0.3, 0}});
  cases.push_back({"hinge_past_limit",
                   Scene(geom_defaults, option,
                         "<body pos='0 0 1'><joint name='hinge' type='hinge' axis='0 1 0' "
                         "limited='true' range='-0.5 0.5'/><geom type='capsule' "
                         "fromto='0 0 0 0.3 0 0' size='0.03'/></body>"),
                   {0.52},
                   {1.5}});
  cases.push_back({"weld",
                   Scene(geom_defaults, option,
                         "<body name='a' pos='0 0 1'><freejoint/><geom type='box' "
                         "size='0.1 0.05 0.05' contype='0' conaffinity='0'/></body>"
                         "</worldbody><equality><weld body1='a'/></equality><worldbody>"),
                   {0.002, -0.001, 1.001, 0.99995, 0.01, 0, 0},
                   {0.1, 0, -0.2, 0.3, -0.1, 0.2}});
  return cases;
}

// One step of both engines from the case's state; returns false if the engines' contact counts
// differ (then the comparison would not be of the same problem).
void ExpectOneStepMatches(const OracleCase& c, const StepOptions& options, double tolerance) {
  SCOPED_TRACE(c.name);
  OracleScene scene(WriteTempScene(c.name + ".xml", c.xml));
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  mjData* md = scene.mj_data();
  ASSERT_EQ(static_cast<int>(c.qpos.size()), m.nq);
  ASSERT_EQ(static_cast<int>(c.qvel.size()), m.nv);
  for (int i = 0; i < m.nq; ++i) d.qpos[i] = md->qpos[i] = c.qpos[i];
  for (int i = 0; i < m.nv; ++i) d.qvel[i] = md->qvel[i] = c.qvel[i];
  scene.mutable_mj_model()->opt.tolerance = 1e-12;
  ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
  mj_step(scene.mj_model(), md);
  int alsim_contacts = 0;
  for (const Constraint& constraint : d.constraints.constraints) {
    alsim_contacts += constraint.type == ConstraintType::kContact;
  }
  ASSERT_EQ(alsim_contacts, md->ncon) << "the engines found different contacts";
  ASSERT_GT(md->nefc, 0) << "the case has no constraint";
  const Eigen::VectorXd qvel = Eigen::Map<const Eigen::VectorXd>(d.qvel.data(), m.nv);
  const Eigen::VectorXd mj_qvel = Eigen::Map<const Eigen::VectorXd>(md->qvel, m.nv);
  // The constraint impulse alone, relative to its own size: v_{k+1} - v_free.
  ExpectNear(qvel, mj_qvel, tolerance, "qvel");
  const Eigen::VectorXd change = qvel - Eigen::Map<const Eigen::VectorXd>(d.v_free.data(), m.nv);
  Eigen::VectorXd mj_change(m.nv);
  for (int i = 0; i < m.nv; ++i) mj_change[i] = md->qvel[i] - d.v_free[i];
  EXPECT_LE((change - mj_change).norm(), tolerance * mj_change.norm()) << "constraint's dv";
  const Eigen::VectorXd qpos = Eigen::Map<const Eigen::VectorXd>(d.qpos.data(), m.nq);
  ExpectNear(qpos, Eigen::Map<const Eigen::VectorXd>(md->qpos, m.nq), tolerance, "qpos");
}

TEST(MujocoSolverTest, OneStepMatchesMujocoWithDefaultContactParameters) {
  for (const OracleCase& c : Cases("", "")) ExpectOneStepMatches(c, MujocoOptions(), 1e-6);
}

TEST(MujocoSolverTest, OneStepMatchesMujocoWithSolrefSolimpAndImpratio) {
  const std::string geoms = "solref='0.01 0.7' solimp='0.8 0.97 0.003 0.3 3'";
  for (const OracleCase& c : Cases(geoms, "impratio='3'")) {
    ExpectOneStepMatches(c, MujocoOptions(), 1e-6);
  }
  // Torsional and rolling friction (condim 4 and 6): a pyramid edge pair per row.
  for (const std::string condim : {"4", "6"}) {
    for (const OracleCase& c : Cases("condim='" + condim + "' friction='0.9 0.02 0.001'", "")) {
      ExpectOneStepMatches(c, MujocoOptions(), 1e-6);
    }
  }
  // Direct (stiffness, damping) references.
  for (const OracleCase& c : Cases("solref='-20000 -150'", "")) {
    ExpectOneStepMatches(c, MujocoOptions(), 1e-6);
  }
}

// Eleven spheres in a row, each pressing on the next and on the floor: one island of 66 dofs,
// above NewtonSolver::kMaxDenseDofs, so H is sparse and factored by CHOLMOD.
TEST(MujocoSolverTest, OneStepMatchesMujocoOnALargeIsland) {
  OracleCase row{"sphere_row", "", {}, {}};
  std::string bodies;
  for (int k = 0; k < 11; ++k) {
    bodies += "<body><freejoint/><geom type='sphere' size='0.1' friction='0.7'/></body>";
    row.qpos.insert(row.qpos.end(), {0.199 * k, 0.001 * (k % 3), 0.0995, 1, 0, 0, 0});
    row.qvel.insert(row.qvel.end(), {0.3 - 0.05 * k, 0.1, -0.2, 0.5, -0.3, 0.1 * k});
  }
  row.xml = Scene("", "", bodies);
  ASSERT_GT(6 * 11, NewtonSolver::kMaxDenseDofs);
  ExpectOneStepMatches(row, MujocoOptions(), 1e-6);
}

TEST(MujocoSolverTest, OneStepMatchesMujocoWithAnEllipticCone) {
  for (const OracleCase& c : Cases("", "cone='elliptic'")) {
    ExpectOneStepMatches(c, MujocoOptions(), 1e-6);
  }
  const std::string geoms =
      "solref='0.01 0.7' solimp='0.8 0.97 0.003 0.3 3' condim='6' "
      "friction='0.9 0.02 0.001'";
  for (const OracleCase& c : Cases(geoms, "cone='elliptic' impratio='5'")) {
    ExpectOneStepMatches(c, MujocoOptions(), 1e-6);
  }
}

// A three-box stack settles on the floor: once its contacts stop changing state, the pyramidal
// rows make each step's cost quadratic on the right active set and Newton needs about one
// iteration per island (MuJoCo: 1.10 on the humanoid with a held action); the stack comes to
// rest where MuJoCo's does.
TEST(MujocoSolverTest, ARestingStackTakesAboutOneNewtonIteration) {
  const OracleCase stack = Cases("", "")[3];
  OracleScene scene(WriteTempScene("resting_stack.xml", stack.xml));
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  mjData* md = scene.mj_data();
  for (int i = 0; i < m.nq; ++i) d.qpos[i] = md->qpos[i] = stack.qpos[i];
  StepOptions options;
  options.solver.type = SolverType::kMujoco;
  double iterations = 0, mujoco_iterations = 0;
  int counted = 0;
  for (int step = 0; step < 1500; ++step) {
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << "step " << step;
    mj_step(scene.mj_model(), md);
    if (step >= 1000) {
      iterations += d.solver_statistics.mean_iterations;
      mujoco_iterations += md->solver_iter;
      ++counted;
    }
  }
  printf("mean Newton iterations at rest: alsim %.3f, MuJoCo %.3f\n", iterations / counted,
         mujoco_iterations / counted);
  EXPECT_LE(iterations / counted, 1.2);
  const Eigen::VectorXd qpos = Eigen::Map<const Eigen::VectorXd>(d.qpos.data(), m.nq);
  // Within a millimetre: once the boxes sink into each other MuJoCo's box-box reports half
  // their overlap as the distance (see box_stack), so its stack rests a little lower.
  ExpectNear(qpos, Eigen::Map<const Eigen::VectorXd>(md->qpos, m.nq), 1e-3, "resting qpos");
}

}  // namespace
}  // namespace alsim
