// d qfrc_bias / d qvel (BiasForceVelocityJacobian) against central differences of BiasForces: at
// fixed positions qfrc_bias is quadratic in qvel, so the central difference is exact but for
// rounding, whatever its step. Scenes with free, ball, hinge and slide joints, welded bodies and
// several trees.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/velocity.h"
#include "engine/model/model_import.h"
#include "engine/sim/integrate_positions.h"

namespace alsim {
namespace {

void ExpectMatchesCentralDifferences(const Model& m, unsigned seed) {
  Data d(m);
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> turn(m.nv);
  for (double& x : turn) x = uniform(random);
  IntegratePositions(m, turn.data(), 1.0, d.qpos.data());
  for (double& v : d.qvel) v = 3 * uniform(random);
  Kinematics(m, d);
  Velocity(m, d);
  BiasForceVelocityJacobian jacobian(m);
  std::vector<double> out(static_cast<size_t>(m.nv) * m.nv, 0.0);
  jacobian.Add(m, d, 1.0, out.data());

  const double eps = 0.5;  // exact for a quadratic; a large step keeps rounding small
  const std::vector<double> qvel = d.qvel;
  double error = 0, scale = 0;
  for (int j = 0; j < m.nv; ++j) {
    std::vector<double> force[2];
    for (int s = 0; s < 2; ++s) {
      d.qvel = qvel;
      d.qvel[j] += s == 0 ? eps : -eps;
      Velocity(m, d);
      BiasForces(m, d);
      force[s] = d.qfrc_bias;
    }
    for (int k = 0; k < m.nv; ++k) {
      const double expected = (force[0][k] - force[1][k]) / (2 * eps);
      error = std::max(error, std::abs(out[static_cast<size_t>(k) * m.nv + j] - expected));
      scale = std::max(scale, std::abs(expected));
    }
  }
  EXPECT_GT(scale, 0);
  EXPECT_LT(error, 1e-12 * scale) << "largest entry " << scale;
}

TEST(BiasForceVelocityJacobian, HumanoidMatchesCentralDifferences) {
  const ModelImport imported = ImportModelFromFile("/usr/share/mujoco/model/humanoid/humanoid.xml");
  ASSERT_TRUE(imported) << imported.error;
  for (unsigned seed = 1; seed <= 3; ++seed) ExpectMatchesCentralDifferences(*imported.model, seed);
}

TEST(BiasForceVelocityJacobian, BallSlideWeldedAndTwoTreesMatchCentralDifferences) {
  const ModelImport imported = ImportModelFromString(
      "<mujoco><worldbody>"
      "<body pos='0 0 1'><joint type='ball'/><geom type='capsule' size='0.05 0.2' mass='1.3'/>"
      "<body pos='0.2 0.1 0'><joint type='slide' axis='1 0.3 0'/><joint type='hinge' axis='0 1 1'/>"
      "<geom type='box' size='0.1 0.05 0.02' mass='0.7'/>"
      "<body pos='0 0 0.3'><geom type='sphere' size='0.05' mass='0.4'/>"
      "<body pos='0.1 0 0'><joint type='hinge' axis='1 0 0'/>"
      "<geom type='box' size='0.05 0.1 0.02' mass='0.3'/></body></body></body></body>"
      "<body pos='1 0 1'><freejoint/><geom type='box' size='0.1 0.2 0.3' mass='2'/>"
      "<body pos='0 0 0.4'><joint type='ball'/><geom type='ellipsoid' size='0.1 0.05 0.2' "
      "mass='0.5'/></body></body></worldbody></mujoco>",
      {}, "bias.xml");
  ASSERT_TRUE(imported) << imported.error;
  for (unsigned seed = 1; seed <= 3; ++seed) ExpectMatchesCentralDifferences(*imported.model, seed);
}

}  // namespace
}  // namespace alsim
