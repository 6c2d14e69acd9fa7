// Quaternion and spatial-vector helpers against hand-computed values.
#include "engine/math/spatial.h"

#include <gtest/gtest.h>

#include <cmath>

#include <Eigen/Eigenvalues>

namespace alsim {
namespace {

constexpr double kTol = 1e-14;

void ExpectVecNear(const Eigen::VectorXd& a, const Eigen::VectorXd& b, double tol = kTol) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_LE((a - b).lpNorm<Eigen::Infinity>(), tol)
      << "got " << a.transpose() << "\nexpected " << b.transpose();
}

TEST(QuatTest, MultiplyFollowsHamiltonRules) {
  const Quat i(0, 1, 0, 0), j(0, 0, 1, 0), k(0, 0, 0, 1);
  ExpectVecNear(QuatMultiply(i, j), k);
  ExpectVecNear(QuatMultiply(j, i), -k);
  ExpectVecNear(QuatMultiply(i, i), Quat(-1, 0, 0, 0));
  ExpectVecNear(QuatMultiply(Quat(1, 2, 3, 4), Quat(5, 6, 7, 8)), Quat(-60, 12, 30, 24));
}

TEST(QuatTest, AxisAngleRotatesVectorsAndMatchesMatrix) {
  const Quat z90 = QuatFromAxisAngle(Vec3::UnitZ(), M_PI / 2);
  ExpectVecNear(z90, Quat(std::sqrt(0.5), 0, 0, std::sqrt(0.5)));
  ExpectVecNear(QuatRotate(z90, Vec3(1, 0, 0)), Vec3(0, 1, 0));
  ExpectVecNear(QuatRotate(z90, Vec3(0, 2, 3)), Vec3(-2, 0, 3));

  Mat3 x90;
  x90 << 1, 0, 0, 0, 0, -1, 0, 1, 0;
  const Mat3 r = QuatToMatrix(QuatFromAxisAngle(Vec3::UnitX(), M_PI / 2));
  EXPECT_LE((r - x90).lpNorm<Eigen::Infinity>(), kTol);

  const Quat q = QuatNormalize(Quat(0.3, -0.2, 0.8, 0.1));
  const Vec3 v(0.7, -1.1, 2.3);
  ExpectVecNear(QuatRotate(q, v), QuatToMatrix(q) * v);
  // The conjugate undoes the rotation.
  ExpectVecNear(QuatRotate(QuatConjugate(q), QuatRotate(q, v)), v);
}

TEST(QuatTest, NormalizeScalesAndFallsBackToIdentity) {
  ExpectVecNear(QuatNormalize(Quat(0, 3, 0, 4)), Quat(0, 0.6, 0, 0.8));
  ExpectVecNear(QuatNormalize(Quat(0, 0, 0, 0)), QuatIdentity());
}

TEST(QuatTest, RotationVectorInvertsAxisAngleTheShortWay) {
  const Vec3 axis = Vec3(1, -2, 2) / 3.0;
  ExpectVecNear(QuatToRotationVector(QuatFromAxisAngle(axis, 2.5)), axis * 2.5, 1e-13);
  ExpectVecNear(QuatToRotationVector(QuatFromAxisAngle(axis, -0.4)), axis * -0.4, 1e-13);
  // 4 rad one way is 2 pi - 4 rad the other way.
  ExpectVecNear(QuatToRotationVector(QuatFromAxisAngle(axis, 4.0)), axis * (4.0 - 2 * M_PI), 1e-13);
  ExpectVecNear(QuatToRotationVector(QuatIdentity()), Vec3::Zero());
}

TEST(QuatTest, IntegrateTurnsAboutTheBodyFrameAxis) {
  // A quarter turn at pi/2 rad/s about z for 1 s.
  ExpectVecNear(QuatIntegrate(QuatIdentity(), Vec3(0, 0, M_PI / 2), 1.0),
                QuatFromAxisAngle(Vec3::UnitZ(), M_PI / 2));
  // Body-frame z after a quarter turn about world x is world -y; turning about it takes the body
  // x axis (still world x) to world z.
  const Quat x90 = QuatFromAxisAngle(Vec3::UnitX(), M_PI / 2);
  const Quat after = QuatIntegrate(x90, Vec3(0, 0, M_PI / 2), 1.0);
  ExpectVecNear(QuatRotate(after, Vec3::UnitX()), Vec3(0, 0, 1));
  ExpectVecNear(QuatIntegrate(x90, Vec3::Zero(), 1.0), x90);
}

TEST(SpatialTest, CrossProductsMatchHandComputedValues) {
  Vec6 v, m;
  v << 1, 0, 0, 0, 1, 0;
  m << 0, 1, 0, 0, 0, 1;
  Vec6 expected_motion;
  expected_motion << 0, 0, 1, 0, -1, 0;  // [x ^ y; x ^ z + y ^ y]
  ExpectVecNear(CrossMotion(v, m), expected_motion);
  Vec6 expected_force;
  expected_force << 1, 0, 1, 0, -1, 0;  // [x ^ y + y ^ z; x ^ z]
  ExpectVecNear(CrossForce(v, m), expected_force);
  EXPECT_LE((Skew(Vec3(1, 2, 3)) * Vec3(-1, 0.5, 2) - Vec3(1, 2, 3).cross(Vec3(-1, 0.5, 2))).norm(),
            kTol);
}

TEST(SpatialTest, ForceCrossIsMinusTransposeOfMotionCross) {
  // (v x*) = -(v x)^T (RBDA eq. 2.33): f . (v x m) = -(v x* f) . m.
  Vec6 v, m, f;
  v << 0.3, -1.2, 0.5, 2.0, 0.1, -0.7;
  m << -0.4, 0.9, 1.5, 0.2, -0.3, 0.8;
  f << 1.1, 0.6, -0.2, -0.9, 1.3, 0.4;
  EXPECT_NEAR(f.dot(CrossMotion(v, m)), -CrossForce(v, f).dot(m), kTol);
  EXPECT_LE(CrossMotion(v, v).norm(), kTol);
}

TEST(SpatialTest, PointMassInertiaGivesItsMomentum) {
  // 2 kg at (1, 0, 0): I_O = 2 diag(0, 1, 1); [m c]x couples angular and linear parts.
  const Mat6 inertia = SpatialInertiaMatrix(2.0, Vec3(1, 0, 0), Mat3::Zero());
  Mat6 expected;
  expected << 0, 0, 0, 0, 0, 0,  //
      0, 2, 0, 0, 0, -2,         //
      0, 0, 2, 0, 2, 0,          //
      0, 0, 0, 2, 0, 0,          //
      0, 0, 2, 0, 2, 0,          //
      0, -2, 0, 0, 0, 2;
  EXPECT_LE((inertia - expected).lpNorm<Eigen::Infinity>(), kTol) << inertia;
  // Spinning about the world z axis at 1 rad/s, the mass moves at (0, 1, 0): linear momentum
  // (0, 2, 0), angular momentum about the origin (0, 0, 2).
  Vec6 spin;
  spin << 0, 0, 1, 0, 0, 0;
  Vec6 momentum;
  momentum << 0, 0, 2, 0, 2, 0;
  ExpectVecNear(inertia * spin, momentum);
}

TEST(SpatialTest, RigidInertiaAgreesWithItsMatrixAndAdds) {
  Mat3 inertia_com;
  inertia_com << 0.3, 0.01, -0.02, 0.01, 0.5, 0.03, -0.02, 0.03, 0.4;
  const RigidInertia a = RigidInertia::FromCom(1.7, Vec3(0.2, -0.4, 0.9), inertia_com);
  const RigidInertia b = RigidInertia::FromCom(0.6, Vec3(-1.0, 0.3, 0.1), 2 * inertia_com);
  Vec6 v;
  v << 0.5, -0.1, 0.3, 1.2, -0.8, 0.4;
  ExpectVecNear(a.Apply(v), a.ToMatrix() * v, 1e-13);
  RigidInertia sum = a;
  sum += b;
  ExpectVecNear(sum.Apply(v), a.Apply(v) + b.Apply(v), 1e-13);
  EXPECT_DOUBLE_EQ(sum.mass, 2.3);
  // The matrix is symmetric and positive definite.
  const Mat6 matrix = a.ToMatrix();
  EXPECT_LE((matrix - matrix.transpose()).norm(), kTol);
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<Mat6>(matrix).eigenvalues().minCoeff(), 0);
}

}  // namespace
}  // namespace alsim
