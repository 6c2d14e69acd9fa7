// The per-tet materials in compliance form (engine/deformable/tet_material.h): every Jacobian,
// the Neo-Hookean gradient and Hessian and every force against central differences; no force
// after a rigid motion (the linear model's spurious force under rotation); the patch test of a
// bar of Kuhn tets under a uniaxial dead load (the linear model exact, the corotated and Neo-
// Hookean ones at 1e-4 strain reproducing Y and nu, and the digest's and Smith et al.'s Lame
// mappings missing them); the Neo-Hookean Hessian at rest equal to K_e; inverted tets; no
// allocation per call.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "engine/deformable/tet_material.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/kuhn_grid.h"

namespace alsim {
namespace {

constexpr double kYoung = 1e6;  // Pa
constexpr double kPoisson = 0.3;

TetVertices RestVertices() {
  TetVertices x;
  x.col(0) << 0.01, -0.02, 0.03;
  x.col(1) << 0.11, -0.01, 0.02;
  x.col(2) << 0.03, 0.10, 0.04;
  x.col(3) << 0.02, 0.00, 0.12;
  return x;
}

TetRest Rest() {
  TetRest rest;
  EXPECT_TRUE(MakeTetRest(RestVertices(), &rest));
  return rest;
}

// The rest tet moved by a random perturbation of each coordinate of up to `size` (m).
TetVertices Deformed(std::mt19937* rng, double size) {
  std::uniform_real_distribution<double> u(-size, size);
  TetVertices x = RestVertices();
  for (int i = 0; i < 12; ++i) x.data()[i] += u(*rng);
  return x;
}

Mat3 RandomRotation(std::mt19937* rng) {
  std::normal_distribution<double> n;
  const Vec3 axis(n(*rng), n(*rng), n(*rng));
  std::uniform_real_distribution<double> angle(-3.1, 3.1);
  return Eigen::AngleAxisd(angle(*rng), axis.normalized()).toRotationMatrix();
}

// x moved rigidly: x_a -> r x_a + t.
TetVertices Moved(const TetVertices& x, const Mat3& r, const Vec3& t) {
  TetVertices y = r * x;
  y.colwise() += t;
  return y;
}

// Central differences (step h, m) of a vector function of the 12 coordinates.
template <int Rows, typename Function>
Eigen::Matrix<double, Rows, 12> Differences(const TetVertices& x, double h, Function function) {
  Eigen::Matrix<double, Rows, 12> d;
  for (int k = 0; k < 12; ++k) {
    TetVertices plus = x, minus = x;
    plus.data()[k] += h;
    minus.data()[k] -= h;
    d.col(k) = (function(plus) - function(minus)) / (2 * h);
  }
  return d;
}

Eigen::Matrix<double, 1, 1> Scalar(double v) { return Eigen::Matrix<double, 1, 1>::Constant(v); }

double RelativeError(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

// ---------------------------------------------------------------------------------------------
// Rest data and the linear material.

TEST(TetMaterialTest, RestDataOfAPositiveTetAndRefusals) {
  const TetRest rest = Rest();
  const TetVertices x0 = RestVertices();
  Mat3 dm;
  for (int k = 0; k < 3; ++k) dm.col(k) = x0.col(k + 1) - x0.col(0);
  EXPECT_NEAR(rest.volume, dm.determinant() / 6, 1e-18);
  EXPECT_GT(rest.volume, 0);
  EXPECT_LT((DeformationGradient(rest, x0) - Mat3::Identity()).norm(), 1e-14);
  // Shape gradients sum to zero and reproduce F of an affine map.
  EXPECT_LT(rest.shape_gradients.rowwise().sum().norm(), 1e-12);
  Mat3 a;
  a << 1.1, 0.2, -0.1, 0.05, 0.9, 0.3, -0.2, 0.1, 1.2;
  EXPECT_LT((DeformationGradient(rest, a * x0) - a).norm(), 1e-13);

  TetVertices swapped = x0;
  swapped.col(1).swap(swapped.col(2));
  TetRest refused;
  EXPECT_FALSE(MakeTetRest(swapped, &refused));
  EXPECT_EQ(refused.volume, 0);
  TetVertices flat = x0;
  flat.col(3) = (x0.col(0) + x0.col(1) + x0.col(2)) / 3;
  EXPECT_FALSE(MakeTetRest(flat, &refused));
  TetVertices nan = x0;
  nan(1, 2) = std::nan("");
  EXPECT_FALSE(MakeTetRest(nan, &refused));
}

TEST(TetMaterialTest, LinearStiffnessAndComplianceAreInverses) {
  const LinearMaterial m = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  EXPECT_LT((m.stiffness * m.compliance - Mat6::Identity()).norm(), 1e-12);
  // Uniaxial stress sigma_xx: strain sigma / Y along x and -nu sigma / Y across.
  Vec6 stress = Vec6::Zero();
  stress(0) = 1e3;
  const Vec6 strain = m.compliance * stress;
  EXPECT_NEAR(strain(0), 1e-3, 1e-15);
  EXPECT_NEAR(strain(1), -kPoisson * 1e-3, 1e-15);
  // Engineering shear: tau = mu gamma, and Psi = 1/2 s^T K s = mu eps:eps + lambda/2 tr(eps)^2.
  const LameParameters lame = LameFromYoungPoisson(kYoung, kPoisson);
  Mat3 eps;
  eps << 1e-3, 2e-4, -3e-4, 2e-4, -5e-4, 1e-4, -3e-4, 1e-4, 2e-4;
  const Vec6 s = VoigtStrain(eps + Mat3::Identity());
  const double psi = lame.mu * eps.squaredNorm() + lame.lambda / 2 * eps.trace() * eps.trace();
  EXPECT_NEAR(0.5 * s.dot(m.stiffness * s), psi, 1e-12 * psi);
}

// ---------------------------------------------------------------------------------------------
// Derivatives against central differences.

TEST(TetMaterialTest, LinearJacobianAndForceMatchDifferences) {
  std::mt19937 rng(1);
  const TetRest rest = Rest();
  const LinearMaterial m = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  for (int trial = 0; trial < 5; ++trial) {
    const TetVertices x = Deformed(&rng, 0.02);
    TetRows<6> rows;
    EvaluateLinearTet(rest, m, x, &rows);
    const auto ds = Differences<6>(
        x, 1e-6, [&](const TetVertices& y) { return VoigtStrain(DeformationGradient(rest, y)); });
    const auto du = Differences<1>(x, 1e-7, [&](const TetVertices& y) {
      TetRows<6> r;
      EvaluateLinearTet(rest, m, y, &r);
      return Scalar(r.energy);
    });
    EXPECT_LT(RelativeError(rows.jacobian, ds), 1e-8) << trial;
    EXPECT_LT(RelativeError(-rows.Force().transpose(), du), 1e-7) << trial;
    EXPECT_LT(RelativeError(rows.compliance * rows.value, rows.strain), 1e-12) << trial;
  }
}

TEST(TetMaterialTest, CorotatedJacobianWithRotationHeldAndExactForce) {
  std::mt19937 rng(2);
  const TetRest rest = Rest();
  const LinearMaterial m = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  double worst_jacobian = 0, worst_force = 0;
  for (int trial = 0; trial < 5; ++trial) {
    const TetVertices x = Moved(Deformed(&rng, 0.02), RandomRotation(&rng), Vec3(0.3, -0.1, 2));
    TetRows<6> rows;
    Mat3 r;
    EvaluateCorotatedTet(rest, m, x, &rows, &r);
    EXPECT_LT((r.transpose() * r - Mat3::Identity()).norm(), 1e-12);
    EXPECT_NEAR(r.determinant(), 1, 1e-12);
    // R^T F is symmetric (polar decomposition).
    const Mat3 rf = r.transpose() * DeformationGradient(rest, x);
    EXPECT_LT((rf - rf.transpose()).norm(), 1e-12);
    const auto ds = Differences<6>(x, 1e-6, [&](const TetVertices& y) {
      return VoigtStrain(r.transpose() * DeformationGradient(rest, y));
    });
    // The energy's gradient with R varying: -J^T c is exact (header comment).
    const auto du = Differences<1>(x, 1e-7, [&](const TetVertices& y) {
      TetRows<6> other;
      EvaluateCorotatedTet(rest, m, y, &other);
      return Scalar(other.energy);
    });
    worst_jacobian = std::max(worst_jacobian, RelativeError(rows.jacobian, ds));
    worst_force = std::max(worst_force, RelativeError(-rows.Force().transpose(), du));
  }
  std::printf("corotated: J %.2e, force %.2e relative to differences\n", worst_jacobian,
              worst_force);
  EXPECT_LT(worst_jacobian, 1e-8);
  EXPECT_LT(worst_force, 1e-6);
}

TEST(TetMaterialTest, NeoHookeanGradientAndHessianMatchDifferencesInStretches) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.5, 1.6);
  const NeoHookeanMaterial m = NeoHookeanFromYoungPoisson(kYoung, kPoisson);
  for (int trial = 0; trial < 20; ++trial) {
    Vec3 s(u(rng), u(rng), u(rng));
    if (trial % 4 == 3) s(2) = -s(2);  // inverted
    const double h = 1e-6;
    Vec3 gradient;
    Mat3 hessian;
    for (int k = 0; k < 3; ++k) {
      Vec3 plus = s, minus = s;
      plus(k) += h;
      minus(k) -= h;
      gradient(k) =
          (NeoHookeanEnergyDensity(m, plus) - NeoHookeanEnergyDensity(m, minus)) / (2 * h);
      hessian.col(k) = (NeoHookeanStress(m, plus) - NeoHookeanStress(m, minus)) / (2 * h);
    }
    EXPECT_LT(RelativeError(NeoHookeanStress(m, s), gradient), 1e-7) << trial;
    EXPECT_LT(RelativeError(NeoHookeanHessian(m, s), hessian), 1e-7) << trial;
  }
  // The printed gradient's (J - 1) is not the derivative of (107): at rest it would be 2 C1 (1,
  // 1, 1), not 0.
  EXPECT_LT(NeoHookeanStress(m, Vec3::Ones()).norm(), 1e-9 * m.c1);
  EXPECT_NEAR(m.alpha, 1 + m.c1 / m.d1, 1e-15);
}

TEST(TetMaterialTest, NeoHookeanStretchJacobianAndForceMatchDifferences) {
  std::mt19937 rng(4);
  const TetRest rest = Rest();
  const NeoHookeanMaterial m = NeoHookeanFromYoungPoisson(kYoung, kPoisson);
  double worst_jacobian = 0, worst_force = 0;
  for (int trial = 0; trial < 8; ++trial) {
    TetVertices x = Moved(Deformed(&rng, 0.03), RandomRotation(&rng), Vec3(1, 2, 3));
    if (trial % 2 == 1) x.row(0) = -x.row(0);  // a reflection: inverted
    TetRows<3> rows;
    EvaluateNeoHookeanTet(rest, m, x, &rows);
    const Vec3 s = rows.strain;
    ASSERT_GT(std::abs(s(0)) - std::abs(s(1)), 1e-3) << trial;  // distinct: differentiable
    ASSERT_GT(std::abs(s(1)) - std::abs(s(2)), 1e-3) << trial;
    EXPECT_EQ(s(2) < 0, trial % 2 == 1) << s.transpose();
    const auto ds = Differences<3>(x, 1e-7, [&](const TetVertices& y) {
      return ComputeSignedSvd(DeformationGradient(rest, y)).sigma;
    });
    const auto du = Differences<1>(x, 1e-7, [&](const TetVertices& y) {
      TetRows<3> other;
      EvaluateNeoHookeanTet(rest, m, y, &other);
      return Scalar(other.energy);
    });
    worst_jacobian = std::max(worst_jacobian, RelativeError(rows.jacobian, ds));
    worst_force = std::max(worst_force, RelativeError(-rows.Force().transpose(), du));
    // c = V_e dPsi/ds; the force is also V_e (2 C1 F + 2 D1 (J - alpha) cof F) : dF/dx.
    const Mat3 f = DeformationGradient(rest, x);
    const Mat3 cof = f.determinant() * f.inverse().transpose();
    const Mat3 p = 2 * m.c1 * f + 2 * m.d1 * (f.determinant() - m.alpha) * cof;
    const Eigen::Matrix<double, 3, 4> force = -rest.volume * p * rest.shape_gradients;
    EXPECT_LT(RelativeError(rows.Force(), Eigen::Map<const Vec12>(force.data())), 1e-10);
  }
  std::printf("Neo-Hookean: J %.2e, force %.2e relative to differences\n", worst_jacobian,
              worst_force);
  EXPECT_LT(worst_jacobian, 1e-7);
  EXPECT_LT(worst_force, 1e-6);
}

// ---------------------------------------------------------------------------------------------
// Rigid motions.

TEST(TetMaterialTest, NoForceAfterARigidMotionExceptTheLinearModelsUnderRotation) {
  std::mt19937 rng(5);
  const TetRest rest = Rest();
  const LinearMaterial linear = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  const NeoHookeanMaterial nh = NeoHookeanFromYoungPoisson(kYoung, kPoisson);
  // The force scale: a 1% stretch along x.
  TetRows<6> unit;
  Mat3 stretch = Mat3::Identity();
  stretch(0, 0) = 1.01;
  EvaluateLinearTet(rest, linear, stretch * RestVertices(), &unit);
  const double scale = unit.Force().norm();
  double worst = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Mat3 r = RandomRotation(&rng);
    const Vec3 t(0.5 * trial, -1, 0.25);
    const TetVertices x = Moved(RestVertices(), r, t);
    TetRows<6> corotated;
    TetRows<3> neo;
    EvaluateCorotatedTet(rest, linear, x, &corotated);
    EvaluateNeoHookeanTet(rest, nh, x, &neo);
    worst = std::max({worst, corotated.value.norm() / scale, corotated.Force().norm() / scale,
                      neo.value.norm() / scale, neo.Force().norm() / scale});
    EXPECT_LT((neo.strain - Vec3::Ones()).norm(), 1e-12);
    TetRows<6> translated;
    EvaluateLinearTet(rest, linear, Moved(RestVertices(), Mat3::Identity(), t), &translated);
    EXPECT_LT(translated.value.norm(), 1e-9 * scale);
  }
  std::printf("rigid motions: corotated and Neo-Hookean |c|, |f| at most %.2e of a 1%% stretch's\n",
              worst);
  EXPECT_LT(worst, 1e-9);
  // The linear model under a 30 degree rotation about z: eps = (cos - 1)(I - z z^T), a spurious
  // compression of 13% in x and y, and a force of that order (more than 5 times the 1% stretch's).
  const double theta = M_PI / 6;
  TetRows<6> rotated;
  EvaluateLinearTet(rest, linear,
                    Moved(RestVertices(),
                          Eigen::AngleAxisd(theta, Vec3::UnitZ()).toRotationMatrix(), Vec3::Zero()),
                    &rotated);
  Vec6 expected = Vec6::Zero();
  expected(0) = expected(1) = std::cos(theta) - 1;
  EXPECT_LT((rotated.strain - expected).norm(), 1e-12);
  std::printf("linear model rotated by 30 degrees: |f| = %.2f x the 1%% stretch's\n",
              rotated.Force().norm() / scale);
  EXPECT_GT(rotated.Force().norm(), 5 * scale);
}

// ---------------------------------------------------------------------------------------------
// The patch test: a bar of n unit cubes (side a) along x, each split into the 6 Kuhn tets about
// its diagonal (conforming between cubes), under a uniaxial dead load P on its x = L end (nodal
// forces P / A * area / 3 per end triangle); x fixed on the x = 0 end, y and z of the vertex at
// the origin and z of (0, a, 0) (rigid modes removed, lateral contraction free). The exact
// solution is homogeneous: u = (eps_a x, eps_l y, eps_l z).

struct Bar {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 4>> tets;
  std::vector<TetRest> rests;
  double a = 0, length = 0;
  int origin_y = 0;  // the vertex at (0, a, 0)
};

Bar MakeBar(int cubes, double a) {
  Bar bar;
  bar.a = a;
  bar.length = cubes * a;
  const testing::KuhnGrid grid = testing::MakeKuhnGrid(cubes, 1, 1, a, a, a);
  bar.vertices = grid.points;
  bar.tets = grid.tets;
  bar.origin_y = grid.Id(0, 1, 0);
  for (const auto& tet : bar.tets) {
    TetVertices x;
    for (int v = 0; v < 4; ++v) x.col(v) = bar.vertices[tet[v]];
    TetRest rest;
    EXPECT_TRUE(MakeTetRest(x, &rest));
    bar.rests.push_back(rest);
  }
  return bar;
}

TetVertices TetOf(const Bar& bar, const Eigen::VectorXd& x, int e) {
  TetVertices t;
  for (int v = 0; v < 4; ++v) t.col(v) = x.segment<3>(3 * bar.tets[e][v]);
  return t;
}

// Assembles the per-tet forces -J^T c (N) of the model evaluated by `rows_of`.
using ForceOfTet = std::function<Vec12(const TetRest&, const TetVertices&)>;

Eigen::VectorXd InternalForce(const Bar& bar, const Eigen::VectorXd& x, const ForceOfTet& force) {
  Eigen::VectorXd f = Eigen::VectorXd::Zero(x.size());
  for (size_t e = 0; e < bar.tets.size(); ++e) {
    const Vec12 fe = force(bar.rests[e], TetOf(bar, x, static_cast<int>(e)));
    for (int v = 0; v < 4; ++v) f.segment<3>(3 * bar.tets[e][v]) += fe.segment<3>(3 * v);
  }
  return f;
}

struct PatchResult {
  double axial = 0;            // eps_a, the mean u_x / x over the x = L end
  double lateral = 0;          // eps_l, the mean u_y / a over the y = a side
  double worst_deviation = 0;  // max |u - u_homogeneous| / (|eps_a| L) over all vertices
  int iterations = 0;
};

// Static equilibrium under the end load `load` (N): Newton-like iterations x <- x + K^-1 r with
// K the linear model's stiffness (exact for it: one iteration) on the free coordinates, until
// the step is below 1e-15 L.
PatchResult SolvePatch(const Bar& bar, double load, const ForceOfTet& force) {
  const int n = static_cast<int>(bar.vertices.size());
  Eigen::VectorXd rest(3 * n);
  for (int v = 0; v < n; ++v) rest.segment<3>(3 * v) = bar.vertices[v];
  std::vector<bool> fixed(3 * n, false);
  for (int v = 0; v < n; ++v) {
    if (bar.vertices[v].x() == 0) fixed[3 * v] = true;
  }
  fixed[1] = fixed[2] = true;          // the origin's y, z
  fixed[3 * bar.origin_y + 2] = true;  // (0, a, 0)'s z
  std::vector<int> free;
  for (int i = 0; i < 3 * n; ++i) {
    if (!fixed[i]) free.push_back(i);
  }
  // The dead load: P / A times each end triangle's area / 3 on its vertices.
  Eigen::VectorXd external = Eigen::VectorXd::Zero(3 * n);
  const double traction = load / (bar.a * bar.a);
  const std::array<std::array<int, 3>, 4> faces = {{{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}}};
  for (const auto& tet : bar.tets) {
    for (const auto& face : faces) {
      bool on_end = true;
      for (int k : face) on_end = on_end && bar.vertices[tet[k]].x() == bar.length;
      if (!on_end) continue;
      const Vec3 p0 = bar.vertices[tet[face[0]]], p1 = bar.vertices[tet[face[1]]],
                 p2 = bar.vertices[tet[face[2]]];
      const double area = 0.5 * (p1 - p0).cross(p2 - p0).norm();
      for (int k : face) external(3 * tet[k]) += traction * area / 3;
    }
  }
  // The linear model's stiffness on the free coordinates.
  const LinearMaterial linear = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  Eigen::MatrixXd k_full = Eigen::MatrixXd::Zero(3 * n, 3 * n);
  for (size_t e = 0; e < bar.tets.size(); ++e) {
    TetRows<6> rows;
    EvaluateLinearTet(bar.rests[e], linear, TetOf(bar, rest, static_cast<int>(e)), &rows);
    const Eigen::Matrix<double, 12, 12> ke =
        rows.jacobian.transpose() * bar.rests[e].volume * linear.stiffness * rows.jacobian;
    for (int v = 0; v < 4; ++v) {
      for (int w = 0; w < 4; ++w) {
        k_full.block<3, 3>(3 * bar.tets[e][v], 3 * bar.tets[e][w]) += ke.block<3, 3>(3 * v, 3 * w);
      }
    }
  }
  const int m = static_cast<int>(free.size());
  Eigen::MatrixXd k(m, m);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) k(i, j) = k_full(free[i], free[j]);
  }
  const Eigen::LLT<Eigen::MatrixXd> factor(k);
  EXPECT_EQ(factor.info(), Eigen::Success);
  PatchResult result;
  Eigen::VectorXd x = rest;
  for (; result.iterations < 200; ++result.iterations) {
    const Eigen::VectorXd residual = InternalForce(bar, x, force) + external;
    Eigen::VectorXd r(m);
    for (int i = 0; i < m; ++i) r(i) = residual(free[i]);
    const Eigen::VectorXd step = factor.solve(r);
    for (int i = 0; i < m; ++i) x(free[i]) += step(i);
    if (step.norm() < 1e-15 * bar.length) break;
  }
  const Eigen::VectorXd u = x - rest;
  int ends = 0, sides = 0;
  for (int v = 0; v < n; ++v) {
    if (bar.vertices[v].x() == bar.length) {
      result.axial += u(3 * v) / bar.length;
      ++ends;
    }
    if (bar.vertices[v].y() == bar.a) {
      result.lateral += u(3 * v + 1) / bar.a;
      ++sides;
    }
  }
  result.axial /= ends;
  result.lateral /= sides;
  for (int v = 0; v < n; ++v) {
    const Vec3 expected =
        Vec3(result.axial, result.lateral, result.lateral).cwiseProduct(bar.vertices[v]);
    result.worst_deviation =
        std::max(result.worst_deviation, (u.segment<3>(3 * v) - expected).cwiseAbs().maxCoeff() /
                                             (std::abs(result.axial) * bar.length));
  }
  return result;
}

TEST(TetMaterialTest, PatchTestLinearBarReproducesUniaxialStrainExactly) {
  const Bar bar = MakeBar(4, 0.1);
  EXPECT_EQ(bar.tets.size(), 24u);
  const LinearMaterial linear = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  const ForceOfTet force = [&](const TetRest& rest, const TetVertices& x) {
    TetRows<6> rows;
    EvaluateLinearTet(rest, linear, x, &rows);
    return rows.Force();
  };
  for (double load : {10.0, -3.0}) {
    const PatchResult result = SolvePatch(bar, load, force);
    const double expected = load / (kYoung * bar.a * bar.a);
    std::printf(
        "linear bar, P = %g N: axial %.10e (F/(YA) %.10e), lateral / axial %.10f, "
        "deviation %.1e, %d iterations\n",
        load, result.axial, expected, result.lateral / result.axial, result.worst_deviation,
        result.iterations);
    EXPECT_NEAR(result.axial, expected, 1e-6 * std::abs(expected));
    EXPECT_NEAR(result.lateral, -kPoisson * expected, 1e-6 * std::abs(expected));
    EXPECT_LT(result.worst_deviation, 1e-6);
    EXPECT_LE(result.iterations, 2);
  }
}

// Y and nu of a model from the patch test at 1e-4 axial strain.
std::pair<double, double> MeasuredYoungPoisson(const Bar& bar, const ForceOfTet& force,
                                               const char* label) {
  const double load = 1e-4 * kYoung * bar.a * bar.a;
  const PatchResult result = SolvePatch(bar, load, force);
  const double young = load / (bar.a * bar.a) / result.axial;
  const double poisson = -result.lateral / result.axial;
  std::printf("%s: Y %.6g Pa (%+.3f%%), nu %.5f (%+.3f%%), deviation %.1e, %d iterations\n", label,
              young, 100 * (young / kYoung - 1), poisson, 100 * (poisson / kPoisson - 1),
              result.worst_deviation, result.iterations);
  EXPECT_LT(result.worst_deviation, 1e-3) << label;
  EXPECT_LT(result.iterations, 200) << label;
  return {young, poisson};
}

TEST(TetMaterialTest, PatchTestCorotatedAndNeoHookeanReproduceYoungAndPoissonAtSmallStrain) {
  const Bar bar = MakeBar(4, 0.1);
  const LinearMaterial linear = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  const auto [y_co, nu_co] = MeasuredYoungPoisson(
      bar,
      [&](const TetRest& rest, const TetVertices& x) {
        TetRows<6> rows;
        EvaluateCorotatedTet(rest, linear, x, &rows);
        return rows.Force();
      },
      "corotated");
  EXPECT_NEAR(y_co / kYoung, 1, 1e-3);
  EXPECT_NEAR(nu_co / kPoisson, 1, 1e-3);

  const LameParameters lame = LameFromYoungPoisson(kYoung, kPoisson);
  const auto neo_hookean = [&](const NeoHookeanMaterial& m, const char* label) {
    return MeasuredYoungPoisson(
        bar,
        [&](const TetRest& rest, const TetVertices& x) {
          TetRows<3> rows;
          EvaluateNeoHookeanTet(rest, m, x, &rows);
          return rows.Force();
        },
        label);
  };
  // The mapping in use: C1 = mu / 2, D1 = (lambda + mu) / 2.
  const auto [y_nh, nu_nh] = neo_hookean(NeoHookeanFromYoungPoisson(kYoung, kPoisson),
                                         "Neo-Hookean, C1 mu/2, D1 (l+mu)/2");
  EXPECT_NEAR(y_nh / kYoung, 1, 1e-2);
  EXPECT_NEAR(nu_nh / kPoisson, 1, 1e-2);
  // The digest's C1 = mu / 2, D1 = lambda / 2 and Smith et al.'s mu' = 4/3 mu, lambda' = lambda +
  // 5/6 mu miss: each is off by more than 1% in Y or nu.
  const auto [y_digest, nu_digest] = neo_hookean(
      NeoHookeanFromCoefficients(lame.mu / 2, lame.lambda / 2), "Neo-Hookean, C1 mu/2, D1 l/2");
  EXPECT_GT(std::max(std::abs(y_digest / kYoung - 1), std::abs(nu_digest / kPoisson - 1)), 0.01);
  const auto [y_smith, nu_smith] =
      neo_hookean(NeoHookeanFromCoefficients(2 * lame.mu / 3, (lame.lambda + 5 * lame.mu / 6) / 2),
                  "Neo-Hookean, Smith et al.'s mu', lambda'");
  EXPECT_GT(std::max(std::abs(y_smith / kYoung - 1), std::abs(nu_smith / kPoisson - 1)), 0.01);
}

// ---------------------------------------------------------------------------------------------
// Small strain: the Neo-Hookean Hessian at rest is K_e's normal block.

TEST(TetMaterialTest, NeoHookeanHessianAtRestEqualsTheLinearStiffness) {
  for (double nu : {0.0, 0.3, 0.45, 0.49}) {
    const LinearMaterial linear = LinearMaterialFromYoungPoisson(kYoung, nu);
    const NeoHookeanMaterial m = NeoHookeanFromYoungPoisson(kYoung, nu);
    const Mat3 h = NeoHookeanHessian(m, Vec3::Ones());
    const Mat3 k = linear.stiffness.topLeftCorner<3, 3>();
    std::printf("nu %.2f: |H(1) - K_e| / |K_e| = %.1e\n", nu, RelativeError(h, k));
    EXPECT_LT(RelativeError(h, k), 1e-2) << nu;
    EXPECT_LT(RelativeError(h, k), 1e-12) << nu;  // the match is exact
    // E at rest is the unprojected (V_e H)^-1.
    const TetRest rest = Rest();
    TetRows<3> rows;
    EvaluateNeoHookeanTet(rest, m, RestVertices(), &rows);
    EXPECT_LT((rows.compliance * rest.volume * h - Mat3::Identity()).norm(), 1e-10) << nu;
  }
}

// The Neo-Hookean rows in F (EvaluateNeoHookeanGradientTet): the same energy as in stretches,
// c = V_e P the energy's gradient in F and J^T c its gradient in x (central differences), J the
// exact dF/dx, E^-1 / V_e the energy's Hessian in F (differences of P) with its eigenvalues made
// absolute and raised to the floor (the stable Neo-Hookean energy is not convex: stretched or
// random tets have negative eigenvalues), and at rest J^T E^-1 J the linear stiffness J_lin^T V_e
// K_e J_lin (up to the floor on the rotations' null space). Also at an inverted tet: finite rows
// and a positive definite E.
TEST(TetMaterialTest, NeoHookeanRowsInFMatchTheEnergysDerivatives) {
  std::mt19937 rng(11);
  const TetRest rest = Rest();
  const NeoHookeanMaterial m = NeoHookeanFromYoungPoisson(kYoung, kPoisson);
  for (int trial = 0; trial < 8; ++trial) {
    const Mat3 r = RandomRotation(&rng);
    // A stretched tet (every stretch in [1.05, 1.4]) under a random rotation, and a random one.
    const Mat3 stretch = Vec3(1.4, 1.2, 1.05).asDiagonal();
    const TetVertices x =
        trial % 2 == 0 ? Moved(r * stretch * RestVertices(), Mat3::Identity(), Vec3(0.1, -0.2, 0.3))
                       : Deformed(&rng, 0.03);
    TetRows<9> rows;
    EvaluateNeoHookeanGradientTet(rest, m, x, &rows);
    TetRows<3> stretches;
    EvaluateNeoHookeanTet(rest, m, x, &stretches);
    EXPECT_NEAR(rows.energy, stretches.energy, 1e-12 * std::abs(stretches.energy) + 1e-15) << trial;
    const auto energy = [&](const TetVertices& y) {
      TetRows<9> e;
      EvaluateNeoHookeanGradientTet(rest, m, y, &e);
      return Scalar(e.energy);
    };
    const Eigen::Matrix<double, 1, 12> gradient = Differences<1>(x, 1e-7, energy);
    EXPECT_LT(RelativeError((rows.jacobian.transpose() * rows.value).transpose(), gradient), 1e-6)
        << trial;
    const auto strain = [&](const TetVertices& y) {
      TetRows<9> e;
      EvaluateNeoHookeanGradientTet(rest, m, y, &e);
      return e.strain;
    };
    EXPECT_LT(RelativeError(rows.jacobian, Differences<9>(x, 1e-7, strain)), 1e-8) << trial;
    // The energy density's Hessian in F by differences of P = c / V_e.
    const Mat3 f = DeformationGradient(rest, x);
    Eigen::Matrix<double, 9, 9> hessian;
    for (int k = 0; k < 9; ++k) {
      Mat3 plus = f, minus = f;
      plus.data()[k] += 1e-6;
      minus.data()[k] -= 1e-6;
      TetRows<9> p, q;
      // The vertices whose F is plus / minus: x_a = x_0 + F (X_a - X_0).
      TetVertices xp = RestVertices(), xm = RestVertices();
      for (int a = 1; a < 4; ++a) {
        const Vec3 edge = RestVertices().col(a) - RestVertices().col(0);
        xp.col(a) = xp.col(0) + plus * edge;
        xm.col(a) = xm.col(0) + minus * edge;
      }
      EvaluateNeoHookeanGradientTet(rest, m, xp, &p);
      EvaluateNeoHookeanGradientTet(rest, m, xm, &q);
      hessian.col(k) = (p.value - q.value) / (2e-6 * rest.volume);
    }
    // E^-1 / V_e is that Hessian with each eigenvalue replaced by its absolute value, at least
    // the floor.
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>> eigen(
        0.5 * (hessian + hessian.transpose()));
    const Eigen::Matrix<double, 9, 1> floored =
        eigen.eigenvalues().cwiseAbs().cwiseMax(m.hessian_floor);
    const Eigen::Matrix<double, 9, 9> projected =
        eigen.eigenvectors() * floored.asDiagonal() * eigen.eigenvectors().transpose();
    EXPECT_LT(RelativeError(rows.compliance.inverse() / rest.volume, projected), 1e-6) << trial;
    // E is symmetric positive definite everywhere.
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>> e(rows.compliance);
    EXPECT_GT(e.eigenvalues()(0), 0) << trial;
  }
  // At rest: no force, and J^T E^-1 J = the linear model's stiffness (the floor adds 1e-4 mu on
  // the rotations, which the linear model's symmetric strain ignores).
  TetRows<9> at_rest;
  EvaluateNeoHookeanGradientTet(rest, m, RestVertices(), &at_rest);
  EXPECT_LT(at_rest.value.norm(), 1e-9 * kYoung * rest.volume);
  TetRows<6> linear;
  EvaluateLinearTet(rest, LinearMaterialFromYoungPoisson(kYoung, kPoisson), RestVertices(),
                    &linear);
  const Eigen::Matrix<double, 12, 12> k_nh =
      at_rest.jacobian.transpose() * at_rest.compliance.inverse() * at_rest.jacobian;
  const Eigen::Matrix<double, 12, 12> k_lin =
      linear.jacobian.transpose() * linear.compliance.inverse() * linear.jacobian;
  EXPECT_LT(RelativeError(k_nh, k_lin), 1e-3);
  // Inverted (a vertex through the opposite face): finite rows, E positive definite.
  TetVertices through = RestVertices();
  const Vec3 normal =
      (through.col(1) - through.col(0)).cross(through.col(2) - through.col(0)).normalized();
  through.col(3) -= 2 * normal.dot(through.col(3) - through.col(0)) * normal;
  TetRows<9> inverted;
  EvaluateNeoHookeanGradientTet(rest, m, through, &inverted);
  EXPECT_TRUE(inverted.value.allFinite());
  EXPECT_TRUE(inverted.compliance.allFinite());
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 9, 9>> e(inverted.compliance);
  EXPECT_GT(e.eigenvalues()(0), 0);
}

// ---------------------------------------------------------------------------------------------
// Inverted tets.

TEST(TetMaterialTest, InvertedTetsGiveOneNegativeStretchFiniteRowsAndAPositiveDefiniteE) {
  std::mt19937 rng(6);
  const TetRest rest = Rest();
  const NeoHookeanMaterial m = NeoHookeanFromYoungPoisson(kYoung, kPoisson);
  std::vector<TetVertices> cases;
  TetVertices mirrored = RestVertices();
  mirrored.row(0) = -mirrored.row(0);
  cases.push_back(mirrored);  // F = diag(-1, 1, 1)
  // Vertex 3 reflected through the plane of the other three.
  TetVertices through = RestVertices();
  const Vec3 normal =
      (through.col(1) - through.col(0)).cross(through.col(2) - through.col(0)).normalized();
  through.col(3) -= 2 * normal.dot(through.col(3) - through.col(0)) * normal;
  cases.push_back(through);
  // Flat (det F = 0) and random inversions under random rotations.
  TetVertices flat = RestVertices();
  flat.col(3) = (flat.col(0) + flat.col(1) + flat.col(2)) / 3;
  cases.push_back(flat);
  for (int trial = 0; trial < 10; ++trial) {
    TetVertices x = Deformed(&rng, 0.04);
    x.row(2) = -0.3 * x.row(2);
    cases.push_back(Moved(x, RandomRotation(&rng), Vec3(0, 0, 1)));
  }
  for (size_t c = 0; c < cases.size(); ++c) {
    TetRows<3> rows;
    SignedSvd svd;
    EvaluateNeoHookeanTet(rest, m, cases[c], &rows, &svd);
    const double det = DeformationGradient(rest, cases[c]).determinant();
    EXPECT_NEAR(rows.strain.prod(), det, 1e-12) << c;
    EXPECT_NEAR(svd.u.determinant(), 1, 1e-12) << c;
    EXPECT_NEAR(svd.v.determinant(), 1, 1e-12) << c;
    EXPECT_LT(
        (svd.u * rows.strain.asDiagonal() * svd.v.transpose() - DeformationGradient(rest, cases[c]))
            .norm(),
        1e-12)
        << c;
    if (det < 0) {
      EXPECT_EQ((rows.strain.array() < 0).count(), 1) << c;
    }
    EXPECT_TRUE(rows.value.allFinite() && rows.jacobian.allFinite() &&
                rows.compliance.allFinite() && std::isfinite(rows.energy))
        << c;
    EXPECT_LT((rows.compliance - rows.compliance.transpose()).norm(),
              1e-15 * rows.compliance.norm());
    const Vec3 eig = Eigen::SelfAdjointEigenSolver<Mat3>(rows.compliance).eigenvalues();
    EXPECT_GT(eig.minCoeff(), 0) << c;
    // The projection's bound: no eigenvalue of E above 1 / (V_e floor).
    EXPECT_LE(eig.maxCoeff(), (1 + 1e-9) / (rest.volume * m.hessian_floor)) << c;
  }
  // The mirrored tet's stretches are (1, 1, -1) and its Hessian is indefinite there: E projected.
  TetRows<3> rows;
  EvaluateNeoHookeanTet(rest, m, mirrored, &rows);
  EXPECT_LT((rows.strain - Vec3(1, 1, -1)).norm(), 1e-12);
  const Vec3 h =
      Eigen::SelfAdjointEigenSolver<Mat3>(NeoHookeanHessian(m, rows.strain)).eigenvalues();
  std::printf("mirrored tet: d2Psi/ds2 eigenvalues %.3g %.3g %.3g Pa (floor %.3g)\n", h(0), h(1),
              h(2), m.hessian_floor);
  EXPECT_LT(h.minCoeff(), 0);
}

// ---------------------------------------------------------------------------------------------
// No allocation per call.

TEST(TetMaterialTest, EvaluationsAllocateNothing) {
  std::mt19937 rng(7);
  const TetRest rest = Rest();
  const LinearMaterial linear = LinearMaterialFromYoungPoisson(kYoung, kPoisson);
  const NeoHookeanMaterial nh = NeoHookeanFromYoungPoisson(kYoung, kPoisson);
  std::vector<TetVertices> xs;
  for (int i = 0; i < 16; ++i) xs.push_back(Deformed(&rng, 0.03));
  xs[3].row(1) = -xs[3].row(1);
  TetRows<6> six;
  TetRows<3> three;
  TetRest other;
  Mat3 r;
  SignedSvd svd;
  double sink = 0;
  long count = 0;
  {
    const testing::AllocationCounter allocations;
    for (const TetVertices& x : xs) {
      sink += MakeTetRest(x, &other) ? other.volume : 0;
      EvaluateLinearTet(rest, linear, x, &six);
      sink += six.Force().sum();
      EvaluateCorotatedTet(rest, linear, x, &six, &r);
      sink += six.energy;
      EvaluateNeoHookeanTet(rest, nh, x, &three, &svd);
      sink += three.energy + three.compliance.sum();
    }
    count = allocations.count();
  }
  EXPECT_TRUE(std::isfinite(sink));
  EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace alsim
