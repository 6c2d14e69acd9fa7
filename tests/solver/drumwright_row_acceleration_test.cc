// Gd v of the constraint rows (engine/solver/drumwright/row_acceleration.h) against a central
// difference of G(q) v along the path q(t) = q (+) t v with v fixed (IntegratePositions, so that
// quaternions move on their manifold), the rows rebuilt at each configuration by the step's own
// stages (PrepareConstraintSolve: kinematics, velocities, BuildConstraints) and G read from the
// JointSpaceJacobian: (G(q (+) eps v) v - G(q (+) -eps v) v) / (2 eps) = Gd v + O(eps^2). Scenes:
// a double pendulum whose tip is connected to a third link (a closed loop), welds between free,
// ball-jointed and hinged bodies (alsim's rows and MuJoCo's), a free root with a hinged child
// connected to another free body, hinge, slide and fixed tendon limits, servos and dry friction,
// and the foundation cube spinning on its plane; a pendulum's connect row against its centripetal
// closed form -omega^2 r; contacts refused; no allocation.
#include "engine/solver/drumwright/row_acceleration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/model/model_import.h"
#include "engine/sim/integrate_positions.h"
#include "engine/sim/step.h"
#include "engine/solver/joint_space_jacobian.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

std::shared_ptr<const Model> Import(const std::string& xml) {
  const ModelImport imported = ImportModelFromString(xml, {}, "row_acceleration.xml");
  EXPECT_TRUE(imported) << imported.error;
  return imported.model;
}

StepOptions Options(SolverType solver) {
  StepOptions options;
  options.solver.type = solver;
  return options;
}

// Index of the constraint with `key` in d.constraints, or -1.
int FindConstraint(const Data& d, const ConstraintKey& key) {
  const std::vector<Constraint>& constraints = d.constraints.constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    if (constraints[i].key == key) return static_cast<int>(i);
  }
  return -1;
}

// The rows' G v of the constraint with `key` at configuration `qpos` and velocity `qvel`: the
// step's stages rebuild the rows, the JointSpaceJacobian gives G. Empty when there is no such
// constraint at that configuration.
std::vector<double> RowVelocities(const Model& m, Data& d, const StepOptions& options,
                                  const ConstraintKey& key, const std::vector<double>& qpos,
                                  const std::vector<double>& qvel) {
  d.qpos = qpos;
  d.qvel = qvel;
  PrepareConstraintSolve(m, d, options);
  const int i = FindConstraint(d, key);
  if (i < 0) return {};
  JointSpaceJacobian jacobian;
  jacobian.Layout(m, d);
  jacobian.Fill(m, d, i);
  const Constraint& c = d.constraints.constraints[i];
  std::vector<double> velocity(c.dim, 0.0);
  for (int e = jacobian.entry_adr[i]; e < jacobian.entry_adr[i] + jacobian.entry_num[i]; ++e) {
    for (int r = 0; r < c.dim; ++r) velocity[r] += jacobian.At(e, r) * qvel[jacobian.dof[e]];
  }
  return velocity;
}

// The largest relative difference seen over all checks of a test, printed at its end.
struct Worst {
  double relative = 0;
  std::string where;
  double largest = 0;  // the largest |Gd v| compared, so that a test sees non-trivial rows
};

// Compares every computed constraint's Gd v at (qpos, qvel) with the central difference of its
// rows' G v, to 1e-6 of the larger of the row block's magnitude and `floor` (the scene's typical
// acceleration, which the rows of a constant G, zero on both sides, are measured against).
// Returns the number of constraints compared.
int CompareWithDifferences(const Model& m, const StepOptions& options,
                           const std::vector<double>& qpos, const std::vector<double>& qvel,
                           double floor, Worst* worst, const std::string& label) {
  Data d(m);
  Data perturbed(m);
  d.qpos = qpos;
  d.qvel = qvel;
  PrepareConstraintSolve(m, d, options);
  const std::vector<Constraint> constraints = d.constraints.constraints;
  constexpr double kEps = 1e-5;
  int compared = 0;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    double out[kMaxConstraintDim];
    std::fill(out, out + kMaxConstraintDim, -7.0);
    const bool computed = RowVelocityProductAcceleration(m, d, static_cast<int>(i), out);
    if (c.key.kind == 0) {
      EXPECT_FALSE(computed) << label;
      continue;
    }
    EXPECT_TRUE(computed) << label << " kind " << c.key.kind << " a " << c.key.a;
    if (!computed) continue;
    std::vector<double> plus_q = qpos, minus_q = qpos;
    IntegratePositions(m, qvel.data(), kEps, plus_q.data());
    IntegratePositions(m, qvel.data(), -kEps, minus_q.data());
    const std::vector<double> plus = RowVelocities(m, perturbed, options, c.key, plus_q, qvel);
    const std::vector<double> minus = RowVelocities(m, perturbed, options, c.key, minus_q, qvel);
    EXPECT_EQ(static_cast<int>(plus.size()), c.dim) << label;
    EXPECT_EQ(static_cast<int>(minus.size()), c.dim) << label;
    if (static_cast<int>(plus.size()) != c.dim || static_cast<int>(minus.size()) != c.dim) continue;
    double scale = floor;
    for (int r = 0; r < c.dim; ++r) scale = std::max(scale, std::abs(out[r]));
    for (int r = 0; r < c.dim; ++r) worst->largest = std::max(worst->largest, std::abs(out[r]));
    for (int r = 0; r < c.dim; ++r) {
      const double difference = (plus[r] - minus[r]) / (2 * kEps);
      const double relative = std::abs(out[r] - difference) / scale;
      EXPECT_LT(relative, 1e-6) << label << " kind " << c.key.kind << " a " << c.key.a << " b "
                                << c.key.b << " row " << r << ": " << out[r] << " vs "
                                << difference;
      if (relative > worst->relative) {
        worst->relative = relative;
        worst->where = label + " kind " + std::to_string(c.key.kind) + " row " + std::to_string(r);
      }
    }
    ++compared;
  }
  return compared;
}

// A random configuration (qpos0 moved by a random velocity for unit time, on the manifold) and a
// random velocity, entries uniform in [-spread, spread] and [-speed, speed].
void RandomState(const Model& m, std::mt19937_64& rng, double spread, double speed,
                 std::vector<double>* qpos, std::vector<double>* qvel) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const Data d(m);
  *qpos = d.qpos;
  std::vector<double> move(m.nv);
  for (double& x : move) x = spread * unit(rng);
  IntegratePositions(m, move.data(), 1.0, qpos->data());
  qvel->resize(m.nv);
  for (double& x : *qvel) x = speed * unit(rng);
}

void Report(const char* test, const Worst& worst) {
  std::printf("[ Gd v ] %s: max relative difference %.3e (%s), largest |Gd v| %.3g\n", test,
              worst.relative, worst.where.c_str(), worst.largest);
}

// A double pendulum (hinges about y and x) whose tip is connected to the tip of a third link
// hinged elsewhere: a closed loop, rows on two bodies of different trees.
constexpr char kLoop[] = R"(
<mujoco><option timestep='0.001'/><worldbody>
  <body name='a' pos='0 0 1'><joint type='hinge' axis='0 1 0'/>
    <geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.03' mass='1'/>
    <body name='b' pos='0 0 -0.5'><joint type='hinge' axis='1 0 0'/>
      <geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.03' mass='1'/>
    </body>
  </body>
  <body name='c' pos='0.6 0.1 1.2'><joint type='hinge' axis='0 0.6 0.8'/>
    <geom type='capsule' fromto='0 0 0 -0.2 0 -0.6' size='0.03' mass='1'/>
  </body>
</worldbody>
<equality><connect body1='b' body2='c' anchor='0.4 0 0'/></equality>
<contact><exclude body1='a' body2='b'/><exclude body1='b' body2='c'/>
  <exclude body1='a' body2='c'/></contact>
</mujoco>)";

TEST(RowAccelerationTest, ConnectClosingALoopMatchesDifferences) {
  const auto model = Import(kLoop);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(3);
  Worst worst;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> qpos, qvel;
    RandomState(*model, rng, 1.0, 3.0, &qpos, &qvel);
    for (const SolverType solver : {SolverType::kDrumwright, SolverType::kSubAdmm}) {
      EXPECT_EQ(CompareWithDifferences(*model, Options(solver), qpos, qvel, 1.0, &worst, "loop"),
                1);
    }
  }
  Report("connect loop", worst);
  EXPECT_GT(worst.largest, 1.0);
}

// A weld between two free bodies, one between a ball-jointed body and a hinged one, and a free
// root with a hinged child connected to another free body: the reference point of a free tree
// moves, and ball and free rotations have cdof_dot of their own.
constexpr char kWelds[] = R"(
<mujoco><option timestep='0.001'/><worldbody>
  <body name='f1' pos='0 0 1'><freejoint/><geom type='box' size='0.1 0.2 0.3' mass='1'/></body>
  <body name='f2' pos='0.5 0.2 1.3' euler='10 20 30'><freejoint/>
    <geom type='box' size='0.1 0.1 0.1' mass='1'/></body>
  <body name='ball' pos='2 0 1'><joint type='ball'/>
    <geom type='capsule' fromto='0 0 0 0.3 0 -0.4' size='0.05' mass='1'/></body>
  <body name='hinged' pos='2.5 0.3 1'><joint type='hinge' axis='0.3 0.4 0.866'/>
    <geom type='capsule' fromto='0 0 0 -0.2 0 -0.4' size='0.05' mass='1'/></body>
  <body name='root' pos='-2 0 1'><freejoint/><geom type='sphere' size='0.1' mass='1'/>
    <body name='child' pos='0.2 0 0'><joint type='hinge' axis='0 0 1' pos='-0.05 0 0'/>
      <geom type='capsule' fromto='0 0 0 0.3 0 0' size='0.03' mass='1'/></body>
  </body>
  <body name='f3' pos='-1.4 0.1 1.1'><freejoint/><geom type='sphere' size='0.1' mass='1'/></body>
</worldbody>
<equality>
  <weld body1='f1' body2='f2' relpose='0.3 0.1 0.2 0.9 0.1 0.3 0.2'/>
  <weld body1='ball' body2='hinged' torquescale='2'/>
  <connect body1='child' body2='f3' anchor='0.3 0 0'/>
</equality>
<contact><exclude body1='f1' body2='f2'/><exclude body1='ball' body2='hinged'/>
  <exclude body1='root' body2='child'/><exclude body1='child' body2='f3'/>
  <exclude body1='root' body2='f3'/></contact>
</mujoco>)";

TEST(RowAccelerationTest, WeldsAndFreeTreesMatchDifferences) {
  const auto model = Import(kWelds);
  ASSERT_TRUE(model);
  std::mt19937_64 rng(5);
  Worst worst;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> qpos, qvel;
    RandomState(*model, rng, 0.8, 3.0, &qpos, &qvel);
    if (trial == 0) {
      // MuJoCo's model replaces the weld's world-axis rotation rows by its own
      Data d(*model);
      d.qpos = qpos;
      d.qvel = qvel;
      PrepareConstraintSolve(*model, d, Options(SolverType::kMujoco));
      const int i = FindConstraint(d, {1, 0, 1});
      ASSERT_GE(i, 0);
      const ConstraintBlock& block = d.constraints.blocks[d.constraints.constraints[i].block_adr];
      EXPECT_FALSE(block.map.leftCols<3>().isApprox(Mat3::Identity(), 1e-3));
      EXPECT_FALSE(block.map.leftCols<3>().isApprox(-Mat3::Identity(), 1e-3));
    }
    // alsim's world-axis rows (SAP's model for Drumwright, the hard model) and MuJoCo's rotation
    // rows (MuJoCo's model): two welds' position and rotation constraints, and the connect.
    for (const SolverType solver :
         {SolverType::kDrumwright, SolverType::kSubAdmm, SolverType::kMujoco}) {
      EXPECT_EQ(CompareWithDifferences(*model, Options(solver), qpos, qvel, 1.0, &worst, "welds"),
                5);
    }
  }
  Report("welds, free trees", worst);
  EXPECT_GT(worst.largest, 1.0);
}

// Limits, servos and dry friction read joint-space rows with constant coefficients: Gd v = 0, and
// so are the differences (to round-off).
constexpr char kJointRows[] = R"(
<mujoco><option timestep='0.001'/><worldbody>
  <body pos='0 0 1'><joint name='j1' type='hinge' axis='0 1 0' limited='true' range='-1 1'
      frictionloss='0.1'/>
    <geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.03' mass='1'/>
    <body pos='0 0 -0.5'><joint name='j2' type='slide' axis='1 0 0' limited='true'
        range='-0.2 0.2'/>
      <geom type='box' size='0.05 0.05 0.05' mass='1'/>
      <body pos='0 0 -0.2'><joint name='j3' type='hinge' axis='1 0 0'/>
        <geom type='capsule' fromto='0 0 0 0 0 -0.3' size='0.03' mass='1'/></body>
    </body>
  </body>
</worldbody>
<tendon><fixed name='t' limited='true' range='-0.5 0.5'>
  <joint joint='j1' coef='1'/><joint joint='j3' coef='-0.5'/></fixed></tendon>
<actuator><position joint='j3' kp='10'/><position tendon='t' kp='5'/></actuator>
</mujoco>)";

TEST(RowAccelerationTest, JointSpaceRowsHaveNoVelocityProductAcceleration) {
  const auto model = Import(kJointRows);
  ASSERT_TRUE(model);
  // j1 at its upper bound, j2 at its lower, the tendon at its lower: L = q1 - 0.5 q3 = -0.5.
  const Data d0(*model);
  std::vector<double> qpos = d0.qpos;
  qpos[0] = 0.995;
  qpos[1] = -0.199;
  qpos[2] = 2 * (0.995 + 0.5) - 0.002;
  const std::vector<double> qvel = {1.5, -0.7, 2.5};
  Worst worst;
  for (const SolverType solver : {SolverType::kDrumwright, SolverType::kSubAdmm}) {
    Data d(*model);
    d.qpos = qpos;
    d.qvel = qvel;
    PrepareConstraintSolve(*model, d, Options(solver));
    // 2 joint limits, 2 servos, 1 friction row, 1 tendon limit (kinds 2, 3, 4, 5)
    int kinds[8] = {};
    for (const Constraint& c : d.constraints.constraints) ++kinds[c.key.kind];
    EXPECT_EQ(kinds[2], 2);
    EXPECT_EQ(kinds[3], 2);
    EXPECT_EQ(kinds[4], 1);
    EXPECT_EQ(kinds[5], 1);
    for (size_t i = 0; i < d.constraints.constraints.size(); ++i) {
      double out[kMaxConstraintDim] = {7, 7, 7, 7, 7, 7};
      ASSERT_TRUE(RowVelocityProductAcceleration(*model, d, static_cast<int>(i), out));
      EXPECT_EQ(out[0], 0.0);
    }
    EXPECT_EQ(CompareWithDifferences(*model, Options(solver), qpos, qvel, 1.0, &worst, "joints"),
              6);
  }
  Report("joint-space rows", worst);
  EXPECT_LT(worst.relative, 1e-9);
}

// The foundation cube (scenes/foundation_cube_100.xml, 100 elements on the floor) sunk 1 mm and
// tumbling: every element's row, with the cube's rotation and its moving reference point.
TEST(RowAccelerationTest, FoundationElementsOfATumblingCubeMatchDifferences) {
  const ModelImport imported = ImportModelFromFile(ALSIM_SCENES_DIR "/foundation_cube_100.xml");
  ASSERT_TRUE(imported) << imported.error;
  const std::shared_ptr<const Model> model = imported.model;
  ASSERT_EQ(model->foundation_site.size(), 100u);
  std::vector<double> qpos = Data(*model).qpos;
  qpos[2] -= 0.001;
  const std::vector<double> qvel = {0.3, -0.2, -0.1, 1.0, -1.5, 2.5};  // spinning, tumbling
  Worst worst;
  for (const SolverType solver : {SolverType::kDrumwright, SolverType::kSubAdmm}) {
    EXPECT_EQ(
        CompareWithDifferences(*model, Options(solver), qpos, qvel, 1.0, &worst, "foundation"),
        100);
  }
  Report("foundation cube", worst);
  EXPECT_GT(worst.largest, 1.0);
}

// A pendulum of length L (hinge about y at the origin) with its tip connected to the world: the
// row is the tip's velocity, and Gd v is its centripetal acceleration -omega^2 (p - pivot), along
// the rod toward the pivot, of magnitude omega^2 L.
TEST(RowAccelerationTest, APendulumsConnectRowIsItsCentripetalAcceleration) {
  const double length = 0.7;
  const auto model = Import(R"(
<mujoco><worldbody>
  <body name='rod' pos='0 0 0'><joint type='hinge' axis='0 1 0'/>
    <geom type='capsule' fromto='0 0 0 0 0 -0.7' size='0.02' mass='1'/></body>
</worldbody>
<equality><connect body1='rod' body2='world' anchor='0 0 -0.7'/></equality></mujoco>)");
  ASSERT_TRUE(model);
  double worst = 0;
  for (const double angle : {0.0, 0.4, -1.3, 2.9}) {
    for (const double omega : {0.5, -2.0, 7.0}) {
      Data d(*model);
      d.qpos[0] = angle;
      d.qvel[0] = omega;
      PrepareConstraintSolve(*model, d, Options(SolverType::kDrumwright));
      ASSERT_EQ(d.constraints.constraints.size(), 1u);
      double out[3];
      ASSERT_TRUE(RowVelocityProductAcceleration(*model, d, 0, out));
      // the tip at rotation `angle` about y: (-L sin, 0, -L cos)
      const Vec3 tip(-length * std::sin(angle), 0, -length * std::cos(angle));
      const Vec3 expected = -omega * omega * tip;
      for (int r = 0; r < 3; ++r) {
        EXPECT_NEAR(out[r], expected[r], 1e-12 * omega * omega * length) << angle << " " << r;
        worst = std::max(worst, std::abs(out[r] - expected[r]) / (omega * omega * length));
      }
      EXPECT_NEAR(Vec3(out[0], out[1], out[2]).norm(), omega * omega * length,
                  1e-12 * omega * omega * length);
    }
  }
  std::printf("[ Gd v ] pendulum: max relative difference to -omega^2 r %.3e\n", worst);
}

// Contacts are not computed: false, the rows zeroed.
TEST(RowAccelerationTest, ContactsAreNotComputed) {
  const auto model = Import(R"(
<mujoco><worldbody><geom type='plane' size='5 5 0.1'/>
  <body pos='0 0 0.099'><freejoint/><geom type='sphere' size='0.1' mass='1'/></body>
  <body pos='1 0 0.099'><freejoint/><geom type='box' size='0.1 0.1 0.1' mass='1'
      condim='6'/></body>
</worldbody></mujoco>)");
  ASSERT_TRUE(model);
  Data d(*model);
  for (int i = 0; i < model->nv; ++i) d.qvel[i] = 0.1 * (i + 1);
  PrepareConstraintSolve(*model, d, Options(SolverType::kDrumwright));
  ASSERT_GT(d.constraints.num_contacts, 0);
  for (size_t i = 0; i < d.constraints.constraints.size(); ++i) {
    const Constraint& c = d.constraints.constraints[i];
    ASSERT_EQ(c.type, ConstraintType::kContact);
    double out[kMaxConstraintDim] = {7, 7, 7, 7, 7, 7};
    EXPECT_FALSE(RowVelocityProductAcceleration(*model, d, static_cast<int>(i), out));
    for (int r = 0; r < c.dim; ++r) EXPECT_EQ(out[r], 0.0) << r;
  }
}

// Inside the step: no heap allocation for any kind.
TEST(RowAccelerationTest, AllocatesNothing) {
  for (const char* xml : {kLoop, kWelds, kJointRows}) {
    const auto model = Import(xml);
    ASSERT_TRUE(model);
    Data d(*model);
    std::mt19937_64 rng(11);
    std::vector<double> qpos, qvel;
    RandomState(*model, rng, 0.5, 2.0, &qpos, &qvel);
    d.qpos = qpos;
    d.qvel = qvel;
    PrepareConstraintSolve(*model, d, Options(SolverType::kMujoco));
    const int n = static_cast<int>(d.constraints.constraints.size());
    double out[kMaxConstraintDim];
    double sum = 0;
    const testing::AllocationCounter allocations;
    for (int i = 0; i < n; ++i) {
      RowVelocityProductAcceleration(*model, d, i, out);
      sum += out[0];
    }
    EXPECT_EQ(allocations.count(), 0);
    EXPECT_TRUE(std::isfinite(sum));
  }
}

}  // namespace
}  // namespace alsim
