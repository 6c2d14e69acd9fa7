// Kinematics, mass matrix, bias and passive forces and Jacobians against libmujoco 2.2.2 at random
// states of MuJoCo's sample scenes and of scenes written here to reach every joint type, bodies
// with several joints, joint offsets, reference angles, springs and a welded (jointless) tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <random>
#include <vector>

#include "engine/core/parallel.h"
#include "engine/dynamics/actuation.h"
#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/jacobian.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/dynamics/passive_forces.h"
#include "engine/dynamics/velocity.h"
#include "engine/linalg/tree_ldl.h"
#include "engine/sim/step.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::ExpectNear;
using testing::OracleScene;
using RowMajor3 = Eigen::Matrix<double, 3, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double kTol = 1e-9;
constexpr int kStates = 20;

// Every joint type, a body with hinge + slide + hinge, a ball joint with a spring, a free joint
// with a spring, hinge reference angles and spring references, joint anchors off the body origin,
// rotated bodies and inertias, a jointless base, a static body and tilted gravity.
constexpr char kMixedJointsScene[] = R"(
<mujoco model="mixed joints">
  <option gravity="0.3 -1 -9.81"/>
  <worldbody>
    <body name="static" pos="0 3 0"><geom type="sphere" size="0.1"/></body>
    <body name="base" pos="0.5 -0.2 1" quat="0.9 0.1 0.3 -0.2">
      <geom type="box" size="0.1 0.2 0.05" mass="3"/>
      <body name="carriage" pos="0.1 0 0">
        <joint name="rail" type="slide" axis="1 0.2 0" limited="true" range="-0.3 0.4"
               damping="0.7" stiffness="5" springref="0.1" armature="0.05"/>
        <joint name="turn" type="hinge" pos="0 0.05 0" axis="0 0 1" ref="0.4" damping="0.2"
               stiffness="2" springref="0.7"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
        <body name="link" pos="0.3 0 0" euler="0.3 0.2 0.1">
          <joint name="shoulder" type="ball" pos="0 0 0.05" stiffness="3" damping="0.4"
                 armature="0.02"/>
          <geom type="box" size="0.05 0.15 0.03" pos="0 0.1 0" euler="0.5 0 0.2"/>
          <body name="forearm" pos="0 0.3 0">
            <joint name="elbow" type="hinge" axis="1 1 0" pos="0 0 0.02" stiffness="1"/>
            <joint name="wrist_slide" type="slide" axis="0 1 0" ref="0.05"/>
            <joint name="wrist" type="hinge" axis="0 0.3 1" pos="0.02 0 0" damping="0.1"/>
            <geom type="ellipsoid" size="0.05 0.08 0.03" pos="0.05 0.1 0" euler="0.2 0.4 0.1"/>
            <body name="hand" pos="0 0.2 0.01">
              <geom type="box" size="0.02 0.03 0.04" euler="0 0.3 0"/>
            </body>
          </body>
        </body>
      </body>
    </body>
    <body name="floater" pos="2 1 0.5" euler="0.2 0 0.4">
      <joint type="free" stiffness="4" damping="0.3"/>
      <geom type="box" size="0.1 0.2 0.3" euler="0.1 0.2 0.3"/>
      <body name="pendulum" pos="0 0 -0.3">
        <joint type="ball" damping="0.1" pos="0 0 0.02"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 -0.4" size="0.03"/>
        <body pos="0.1 0 -0.4">
          <joint type="hinge" axis="0 1 0" pos="0 0 0.01"/>
          <geom type="sphere" size="0.05" pos="0 0.05 0"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
)";

// Worst norm-relative errors over all states of one scene, printed for the record.
struct WorstErrors {
  double xpos = 0, xmat = 0, xipos = 0, mass = 0, bias = 0, passive = 0, jacobian = 0;

  void Print(const std::string& scene) const {
    std::cout << scene << ": worst norm-relative errors over " << kStates << " states: xpos "
              << xpos << ", xmat " << xmat << ", xipos " << xipos << ", M " << mass
              << ", qfrc_bias " << bias << ", qfrc_passive " << passive << ", jacobians "
              << jacobian << "\n";
  }
};

Eigen::VectorXd Flatten(const std::vector<Vec3>& vectors) {
  Eigen::VectorXd flat(3 * vectors.size());
  for (size_t i = 0; i < vectors.size(); ++i) flat.segment<3>(3 * i) = vectors[i];
  return flat;
}

// Rotation matrices flattened row by row, as MuJoCo stores them.
Eigen::VectorXd FlattenRowMajor(const std::vector<Mat3>& matrices) {
  Eigen::VectorXd flat(9 * matrices.size());
  for (size_t i = 0; i < matrices.size(); ++i) {
    for (int r = 0; r < 3; ++r) flat.segment<3>(9 * i + 3 * r) = matrices[i].row(r).transpose();
  }
  return flat;
}

Eigen::VectorXd MujocoVector(const mjtNum* values, int n) {
  return Eigen::Map<const Eigen::VectorXd>(values, n);
}

void ExpectQuaternionsMatchUpToSign(const Data& d, const mjData* mjd, int nbody) {
  for (int b = 0; b < nbody; ++b) {
    const Quat expected(mjd->xquat + 4 * b);
    const double error = std::min((d.xquat[b] - expected).norm(), (d.xquat[b] + expected).norm());
    EXPECT_LE(error, kTol) << "xquat of body " << b;
  }
}

void CompareKinematics(const Model& m, const Data& d, const mjData* mjd, WorstErrors& worst) {
  auto update = [](double& w, double e) { w = std::max(w, e); };
  update(worst.xpos,
         ExpectNear(Flatten(d.xpos), MujocoVector(mjd->xpos, 3 * m.nbody), kTol, "xpos"));
  update(worst.xmat,
         ExpectNear(FlattenRowMajor(d.xmat), MujocoVector(mjd->xmat, 9 * m.nbody), kTol, "xmat"));
  update(worst.xipos,
         ExpectNear(Flatten(d.xipos), MujocoVector(mjd->xipos, 3 * m.nbody), kTol, "xipos"));
  ExpectNear(FlattenRowMajor(d.ximat), MujocoVector(mjd->ximat, 9 * m.nbody), kTol, "ximat");
  ExpectNear(Flatten(d.xanchor), MujocoVector(mjd->xanchor, 3 * m.njnt), kTol, "xanchor");
  ExpectQuaternionsMatchUpToSign(d, mjd, m.nbody);
}

void CompareMassMatrix(const Model& m, const Data& d, const mjModel* mjm, const mjData* mjd,
                       WorstErrors& worst) {
  Eigen::MatrixXd expected(m.nv, m.nv);  // symmetric, so row/column order does not matter
  mj_fullM(mjm, expected.data(), mjd->qM);
  const Eigen::MatrixXd dense = MassMatrixToDense(d);
  const Eigen::Map<const Eigen::VectorXd> flat(dense.data(), dense.size());
  const Eigen::Map<const Eigen::VectorXd> flat_expected(expected.data(), expected.size());
  worst.mass = std::max(worst.mass, ExpectNear(flat, flat_expected, kTol, "M"));
}

// Point Jacobians (at a point off each body's COM) vs mj_jac, and body Jacobians vs mj_jacBody,
// for up to `max_bodies` bodies spread over the scene.
void CompareJacobians(const Model& m, const Data& d, const mjModel* mjm, const mjData* mjd,
                      int max_bodies, WorstErrors& worst) {
  Jacobian3 jacp(3, m.nv), jacr(3, m.nv);
  RowMajor3 expected_p(3, m.nv), expected_r(3, m.nv);
  Jacobian6 compact(6, m.nv);
  std::vector<int> dofs(m.nv);
  const int stride = std::max(1, m.nbody / max_bodies);
  for (int b = 1; b < m.nbody; b += stride) {
    const Vec3 point = d.xipos[b] + Vec3(0.1, -0.05, 0.2);
    PointJacobian(m, d, b, point, jacp, jacr);
    mj_jac(mjm, mjd, expected_p.data(), expected_r.data(), point.data(), b);
    const Eigen::MatrixXd got_p = jacp, got_r = jacr, want_p = expected_p, want_r = expected_r;
    worst.jacobian = std::max(
        worst.jacobian,
        ExpectNear(Eigen::Map<const Eigen::VectorXd>(got_p.data(), got_p.size()),
                   Eigen::Map<const Eigen::VectorXd>(want_p.data(), want_p.size()), kTol, "jacp"));
    ExpectNear(Eigen::Map<const Eigen::VectorXd>(got_r.data(), got_r.size()),
               Eigen::Map<const Eigen::VectorXd>(want_r.data(), want_r.size()), kTol, "jacr");

    // The compact body Jacobian scattered to dense columns equals mj_jacBody (body origin).
    const int n = BodyPathDofs(d, b, dofs.data());
    ASSERT_EQ(n, BodyPathLength(d, b));
    BodyJacobian(m, d, b, compact);
    Eigen::MatrixXd scattered = Eigen::MatrixXd::Zero(6, m.nv);
    for (int c = 0; c < n; ++c) scattered.col(dofs[c]) = compact.col(c);
    mj_jacBody(mjm, mjd, expected_p.data(), expected_r.data(), b);
    Eigen::MatrixXd want(6, m.nv);
    want << expected_r, expected_p;
    ExpectNear(Eigen::Map<const Eigen::VectorXd>(scattered.data(), scattered.size()),
               Eigen::Map<const Eigen::VectorXd>(want.data(), want.size()), kTol, "body jacobian");
    // Exactly the path's dofs have nonzero columns in MuJoCo's dense Jacobian too.
    for (int k = 0; k < m.nv; ++k) {
      const bool on_path = std::find(dofs.begin(), dofs.begin() + n, k) != dofs.begin() + n;
      if (!on_path) {
        EXPECT_EQ(want.col(k).norm(), 0.0) << "body " << b << " dof " << k;
      }
    }
  }
}

// The MuJoCo stages that produce the quantities compared here (no collision detection).
void ComputeMujocoReference(const mjModel* mjm, mjData* mjd) {
  mj_kinematics(mjm, mjd);
  mj_comPos(mjm, mjd);
  mj_crb(mjm, mjd);
  mj_comVel(mjm, mjd);
  mj_passive(mjm, mjd);
  mj_rne(mjm, mjd, 0, mjd->qfrc_bias);
}

void RunOracle(const std::string& path, const std::string& label, int max_jacobian_bodies) {
  OracleScene scene(path);
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  const mjModel* mjm = scene.mj_model();
  mjData* mjd = scene.mj_data();
  std::mt19937 rng(2024);
  WorstErrors worst;
  for (int state = 0; state < kStates; ++state) {
    SCOPED_TRACE(label + " state " + std::to_string(state));
    scene.SetRandomState(rng);
    Kinematics(m, d);
    Velocity(m, d);
    MassMatrix(m, d);
    BiasForces(m, d);
    PassiveForces(m, d);
    ComputeMujocoReference(mjm, mjd);

    CompareKinematics(m, d, mjd, worst);
    CompareMassMatrix(m, d, mjm, mjd, worst);
    worst.bias =
        std::max(worst.bias, ExpectNear(Eigen::Map<const Eigen::VectorXd>(d.qfrc_bias.data(), m.nv),
                                        MujocoVector(mjd->qfrc_bias, m.nv), kTol, "qfrc_bias"));
    worst.passive = std::max(
        worst.passive, ExpectNear(Eigen::Map<const Eigen::VectorXd>(d.qfrc_passive.data(), m.nv),
                                  MujocoVector(mjd->qfrc_passive, m.nv), kTol, "qfrc_passive"));
    CompareJacobians(m, d, mjm, mjd, max_jacobian_bodies, worst);
    if (::testing::Test::HasFailure()) break;  // one state's messages are enough
  }
  worst.Print(label);
}

class SampleSceneOracleTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SampleSceneOracleTest, MatchesMujocoAtRandomStates) {
  RunOracle(testing::kMujocoSamples + GetParam(), GetParam(), 20);
}

// The sample scenes the importer accepts (tendon_arm, flag, hammock, ... use tendons or other
// features it refuses by design).
INSTANTIATE_TEST_SUITE_P(Samples, SampleSceneOracleTest,
                         ::testing::Values("humanoid/humanoid.xml", "humanoid/22_humanoids.xml",
                                           "humanoid100/humanoid100.xml", "mug/mug.xml",
                                           "composite/rope.xml", "composite/loop.xml",
                                           "composite/particle.xml",
                                           "slider_crank/slider_crank.xml"));

TEST(WrittenSceneOracleTest, MixedJointsMatchMujocoAtRandomStates) {
  RunOracle(testing::WriteTempScene("mixed_joints.xml", kMixedJointsScene), "mixed_joints", 100);
}

template <class T>
bool SameBits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Step's smooth dynamics runs every tree as its own task (engine/sim/step.cc). On 2 threads it
// gives the whole-model stages' results, compared with MuJoCo above, bit for bit: frames,
// subspaces, inertias, M, the forces and the free acceleration (M + h D)^{-1} f.
TEST(TreeParallelDynamicsTest, PerTreeTasksEqualTheWholeModelStagesBitForBit) {
  for (const std::string name :
       {"humanoid/22_humanoids.xml", "humanoid100/humanoid100.xml", "composite/particle.xml"}) {
    SCOPED_TRACE(name);
    OracleScene scene(testing::kMujocoSamples + name);
    ASSERT_TRUE(scene.ok());
    const Model& m = scene.model();
    ASSERT_GE(m.nsubsystem, 2);
    Data& parallel = scene.data();
    std::mt19937 rng(11);
    scene.SetRandomState(rng);
    Data serial(m);
    serial.qpos = parallel.qpos;
    serial.qvel = parallel.qvel;
    for (int u = 0; u < m.nu; ++u) parallel.ctrl[u] = serial.ctrl[u] = 0.3 * std::sin(u + 1.0);

    RunWithThreads(2, [&] { Forward(m, parallel); });
    Kinematics(m, serial);
    Velocity(m, serial);
    MassMatrix(m, serial);
    BiasForces(m, serial);
    PassiveForces(m, serial);
    ActuatorForces(m, serial);
    std::vector<double> step_matrix = serial.M;
    for (int i = 0; i < m.nv; ++i) {
      step_matrix[serial.mass_layout.row_adr[i]] += m.timestep * m.dof_damping[i];
    }
    TreeLdlFactor(serial.mass_layout, step_matrix.data());
    for (int i = 0; i < m.nv; ++i) {
      serial.qacc[i] = serial.qfrc_actuator[i] + serial.qfrc_passive[i] - serial.qfrc_bias[i];
    }
    TreeLdlSolve(serial.mass_layout, step_matrix.data(), serial.qacc.data());

    EXPECT_TRUE(SameBits(parallel.xpos, serial.xpos));
    EXPECT_TRUE(SameBits(parallel.xquat, serial.xquat));
    EXPECT_TRUE(SameBits(parallel.geom_xpos, serial.geom_xpos));
    EXPECT_TRUE(SameBits(parallel.geom_xmat, serial.geom_xmat));
    EXPECT_TRUE(SameBits(parallel.cdof, serial.cdof));
    EXPECT_TRUE(SameBits(parallel.cvel, serial.cvel));
    EXPECT_TRUE(SameBits(parallel.M, serial.M));
    EXPECT_TRUE(SameBits(parallel.qfrc_bias, serial.qfrc_bias));
    EXPECT_TRUE(SameBits(parallel.qfrc_passive, serial.qfrc_passive));
    EXPECT_TRUE(SameBits(parallel.qH, step_matrix));
    EXPECT_TRUE(SameBits(parallel.qacc, serial.qacc));
  }
}

// Zero velocity leaves gravity alone in the bias: qfrc_bias = -J_com^T m g summed over bodies.
TEST(BiasForcesTest, AtRestIsMinusGravityThroughComJacobians) {
  OracleScene scene(testing::kMujocoSamples + "humanoid/humanoid.xml");
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  std::mt19937 rng(5);
  scene.SetRandomState(rng, 0.0);
  Kinematics(m, d);
  Velocity(m, d);
  BiasForces(m, d);
  Eigen::VectorXd expected = Eigen::VectorXd::Zero(m.nv);
  Jacobian3 jacp(3, m.nv), jacr(3, m.nv);
  for (int b = 1; b < m.nbody; ++b) {
    PointJacobian(m, d, b, d.xipos[b], jacp, jacr);
    expected -= jacp.transpose() * (m.body_mass[b] * m.gravity);
  }
  ExpectNear(Eigen::Map<const Eigen::VectorXd>(d.qfrc_bias.data(), m.nv), expected, 1e-12,
             "gravity bias");
}

}  // namespace
}  // namespace alsim
