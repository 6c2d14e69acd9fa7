// The conic QP of Drumwright's solver (engine/solver/drumwright/conic_qp.h; issue 47, digest
// seed-003-drumwright.md section 12 tests H, K and L): the cone algebra and the Nesterov-Todd
// scaling, the paper's QP (83)-(85) against its closed forms, the friction cone as a projection,
// KKT residuals on random programs, CVXOPT's answers, an O(hB)-scaled program, no allocation
// once sized, nor once warm as the sizes change (grow-only storage, the same bits as a fresh
// solver's), and the grow-only LDL^T and LU against Eigen's.
#include "engine/solver/drumwright/conic_qp.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/solver/drumwright/nt_scaling.h"
#include "engine/solver/drumwright/symmetric_cone.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

ConeDimensions Cones(int linear, std::vector<int> second_order) {
  ConeDimensions cones;
  cones.linear = linear;
  cones.second_order = std::move(second_order);
  return cones;
}

// A random point of K's interior: orthant rows in [0.1, 2], cone blocks with u_0 > ||u_1||.
VectorXd InteriorPoint(const ConeDimensions& cones, std::mt19937* rng) {
  std::uniform_real_distribution<double> unit(-1, 1);
  VectorXd u(cones.rows());
  for (int i = 0; i < cones.linear; ++i) u[i] = 1.05 + 0.95 * unit(*rng);
  int offset = cones.linear;
  for (int m : cones.second_order) {
    double tail = 0;
    for (int i = 1; i < m; ++i) {
      u[offset + i] = unit(*rng);
      tail += u[offset + i] * u[offset + i];
    }
    u[offset] = std::sqrt(tail) + 0.01 + std::abs(unit(*rng));
    offset += m;
  }
  return u;
}

// -lambda_min over blocks: the least t with u + t e in K; <= 0 for u in K.
double ConeViolation(const ConeDimensions& cones, const VectorXd& u) {
  return IdentityShift(cones, u.data());
}

// ---------------------------------------------------------------------------------------------
// Cone algebra and scaling.

TEST(SymmetricConeTest, DivisionInvertsTheJordanProduct) {
  std::mt19937 rng(1);
  const ConeDimensions cones = Cones(3, {1, 2, 3, 5});
  const VectorXd u = InteriorPoint(cones, &rng);
  const VectorXd v = VectorXd::Random(cones.rows());
  VectorXd x(cones.rows()), back(cones.rows());
  JordanDivide(cones, u.data(), v.data(), x.data());
  JordanProduct(cones, u.data(), x.data(), back.data());
  EXPECT_LT((back - v).norm(), 1e-13);
}

TEST(SymmetricConeTest, MaxStepEndsOnTheBoundary) {
  std::mt19937 rng(2);
  const ConeDimensions cones = Cones(0, {3});
  for (int trial = 0; trial < 50; ++trial) {
    const VectorXd x = InteriorPoint(cones, &rng);
    const VectorXd d = VectorXd::Random(3) * 3;
    const double t = MaxStep(cones, x.data(), d.data());
    if (std::isinf(t)) {
      EXPECT_LE(ConeViolation(cones, x + 1e6 * d), 0);
      continue;
    }
    const VectorXd end = x + t * d;
    EXPECT_NEAR(end[0], end.tail(2).norm(), 1e-12 * (1 + end.norm())) << trial;
    EXPECT_LT(ConeViolation(cones, x + 0.999 * t * d), 0);
  }
  const ConeDimensions orthant = Cones(2, {});
  const VectorXd x = (VectorXd(2) << 1, 2).finished();
  const VectorXd d = (VectorXd(2) << -4, 1).finished();
  EXPECT_DOUBLE_EQ(MaxStep(orthant, x.data(), d.data()), 0.25);
}

TEST(NtScalingTest, MapsZAndSToTheSameLambda) {
  std::mt19937 rng(3);
  const ConeDimensions cones = Cones(2, {3, 4, 1});
  NtScaling scaling;
  scaling.Resize(cones);
  for (int trial = 0; trial < 20; ++trial) {
    const VectorXd s = InteriorPoint(cones, &rng);
    const VectorXd z = InteriorPoint(cones, &rng);
    ASSERT_TRUE(scaling.Compute(s.data(), z.data()));
    VectorXd wz(cones.rows()), winv_s(cones.rows()), back(cones.rows());
    scaling.Apply(z.data(), wz.data());
    scaling.ApplyInverse(s.data(), winv_s.data());
    EXPECT_LT((wz - scaling.lambda()).norm(), 1e-12 * scaling.lambda().norm());
    EXPECT_LT((winv_s - scaling.lambda()).norm(), 1e-12 * scaling.lambda().norm());
    EXPECT_NEAR(scaling.lambda().squaredNorm(), s.dot(z), 1e-12 * s.dot(z));
    scaling.ApplyInverse(wz.data(), back.data());
    EXPECT_LT((back - z).norm(), 1e-12 * z.norm());
    EXPECT_LT(ConeViolation(cones, scaling.lambda()), 0);
  }
  const VectorXd outside = (VectorXd(10) << 1, 1, 1, 2, 0, 1, 0, 0, 0, 1).finished();
  EXPECT_FALSE(scaling.Compute(outside.data(), outside.data()));
}

// ---------------------------------------------------------------------------------------------
// Test H: the unilateral QP (83)-(85), min 1/2 |lam|^2 s.t. A lam >= r, lam >= 0, as
// -A lam + s = -r and -lam + s = 0 in R+^{2n}.

struct UnilateralQp {
  MatrixXd P, G;
  VectorXd c, h;
  ConeDimensions cones;
};

UnilateralQp MakeUnilateral(const MatrixXd& A, const VectorXd& r) {
  const int n = static_cast<int>(A.rows());
  UnilateralQp qp;
  qp.P = MatrixXd::Identity(n, n);
  qp.c = VectorXd::Zero(n);
  qp.G.resize(2 * n, n);
  qp.G << -A, -MatrixXd::Identity(n, n);
  qp.h.resize(2 * n);
  qp.h << -r, VectorXd::Zero(n);
  qp.cones = Cones(2 * n, {});
  return qp;
}

ConicQpStatistics SolveUnilateral(const UnilateralQp& qp, ConicQpSolver* solver) {
  solver->Resize(static_cast<int>(qp.P.rows()), qp.cones);
  return solver->Solve(qp.P, qp.c, qp.G, qp.h);
}

TEST(ConicQpTest, OneUnilateralRowIsTheClampedSpringLaw) {
  // min 1/2 lam^2 s.t. (1 + w s) lam >= r, lam >= 0  =>  lam = max(0, r / (1 + w s)).
  ConicQpSolver solver;
  for (double ws : {0.0, 0.5, 3.0, 1e3, 1e6}) {
    for (double r : {-2.0, -1e-3, 1e-3, 0.7, 5.0, 1e4}) {
      const MatrixXd A = MatrixXd::Constant(1, 1, 1 + ws);
      const VectorXd rv = VectorXd::Constant(1, r);
      const ConicQpStatistics stats = SolveUnilateral(MakeUnilateral(A, rv), &solver);
      ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << ws << " " << r;
      const double expected = std::max(0.0, r / (1 + ws));
      if (expected == 0) {
        // Degenerate (the bound lam >= 0 and its multiplier both vanish, c = 0): the interior
        // point converges linearly, to lam ~ sqrt(gap), and the active-set polish makes it 0.
        EXPECT_TRUE(stats.polished) << ws << " " << r;
        EXPECT_NEAR(solver.x()[0], 0, 1e-15) << ws << " " << r;
      } else {
        // Not always polished (a multiplier of 1e-15 next to a slack of gap / 1e-15 reads as
        // inactive); then met to the gap: sqrt(gap_absolute) absolute, gap_relative relative.
        EXPECT_NEAR(solver.x()[0], expected, 1e-10 + 1e-9 * expected) << ws << " " << r;
      }
      EXPECT_LE(stats.iterations, 30);
    }
  }
}

TEST(ConicQpTest, CoupledUnilateralRowsGiveTheMinimumNormPointNotTheLcp) {
  // A = [[3, 1], [1, 3]], r = (1, 0.2). KKT with row 1 alone active: lam = y (3, 1), 10 y = 1,
  // lam = (0.3, 0.1): row 2 holds with slack 0.4 > 0 while lam_2 > 0, so this is not the LCP's
  // complementary (1/3, 0), whose norm^2 1/9 exceeds 0.1 (digest section 5).
  const MatrixXd A = (MatrixXd(2, 2) << 3, 1, 1, 3).finished();
  const VectorXd r = (VectorXd(2) << 1, 0.2).finished();
  ConicQpSolver solver;
  const ConicQpStatistics stats = SolveUnilateral(MakeUnilateral(A, r), &solver);
  ASSERT_EQ(stats.status, ConicQpStatus::kSolved);
  EXPECT_NEAR(solver.x()[0], 0.3, 1e-15);
  EXPECT_NEAR(solver.x()[1], 0.1, 1e-15);
  // The dual: row 1's multiplier 0.1, the rest 0.
  EXPECT_NEAR(solver.z()[0], 0.1, 1e-15);
  EXPECT_NEAR(solver.z()[1], 0, 1e-15);
  EXPECT_NEAR(stats.primal_objective, 0.05, 1e-10);
}

// ---------------------------------------------------------------------------------------------
// Test K: the friction cone is the true cone. min 1/2 |x - p|^2 s.t. s = (mu x_0, x_1, x_2) in
// Q^3 (G = -diag(mu, 1, 1), h = 0) is the Euclidean projection onto {||x_t|| <= mu x_0}:
//   inside (||p_t|| <= mu p_0):  p;   polar (mu ||p_t|| <= -p_0):  0;
//   otherwise x_0 = (p_0 + mu ||p_t||) / (1 + mu^2), x_t = mu x_0 p_t / ||p_t||.

Eigen::Vector3d ConeProjection(const Eigen::Vector3d& p, double mu) {
  const double t = p.tail<2>().norm();
  if (t <= mu * p[0]) return p;
  if (mu * t <= -p[0]) return Eigen::Vector3d::Zero();
  const double x0 = (p[0] + mu * t) / (1 + mu * mu);
  Eigen::Vector3d x;
  x << x0, mu * x0 * p.tail<2>() / t;
  return x;
}

TEST(ConicQpTest, ProjectionOntoTheFrictionConeHasItsThreeCases) {
  ConicQpSolver solver;
  solver.Resize(3, Cones(0, {3}));
  const MatrixXd P = MatrixXd::Identity(3, 3);
  const VectorXd h = VectorXd::Zero(3);
  for (double mu : {0.1, 0.5, 1.0, 2.0}) {
    MatrixXd G = MatrixXd::Zero(3, 3);
    G.diagonal() << -mu, -1, -1;
    for (double angle : {0.0, 0.7, 2.0, 4.0}) {
      const Eigen::Vector2d dir(std::cos(angle), std::sin(angle));
      // inside, polar, and two on the boundary (above and below the normal plane)
      for (const Eigen::Vector3d& p : {Eigen::Vector3d(1, 0.5 * mu * dir[0], 0.5 * mu * dir[1]),
                                       Eigen::Vector3d(-1, 0.5 / mu * dir[0], 0.5 / mu * dir[1]),
                                       Eigen::Vector3d(1, 3 * mu * dir[0], 3 * mu * dir[1]),
                                       Eigen::Vector3d(-0.1, 2 * dir[0], 2 * dir[1])}) {
        const ConicQpStatistics stats = solver.Solve(P, -p, G, h);
        ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << mu << " " << p.transpose();
        const Eigen::Vector3d expected = ConeProjection(p, mu);
        EXPECT_LT((solver.x() - expected).norm(), 1e-10 + 1e-9 * expected.norm())
            << mu << " p " << p.transpose() << " x " << solver.x().transpose();
        // the friction magnitude on the boundary is mu x_0 whatever the direction (test K)
        if (expected.norm() > 0 && expected.tail<2>().norm() > mu * expected[0] * (1 - 1e-12)) {
          EXPECT_NEAR(solver.x().tail<2>().norm(), mu * solver.x()[0], 1e-8 * expected.norm());
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Test L: random feasible programs, P SPD, KKT residuals below 1e-9, the same answer from a
// caller's start.

struct RandomProgram {
  MatrixXd P, G;
  VectorXd c, h, x_feasible;
  ConeDimensions cones;
};

RandomProgram MakeRandomProgram(std::mt19937* rng, int n, const ConeDimensions& cones) {
  std::normal_distribution<double> normal;
  RandomProgram pr;
  pr.cones = cones;
  const int m = cones.rows();
  MatrixXd B(n, n);
  for (int i = 0; i < n * n; ++i) B.data()[i] = normal(*rng);
  pr.P = B * B.transpose() + 0.1 * MatrixXd::Identity(n, n);
  pr.c.resize(n);
  for (int i = 0; i < n; ++i) pr.c[i] = normal(*rng);
  pr.G.resize(m, n);
  for (int i = 0; i < m * n; ++i) pr.G.data()[i] = normal(*rng);
  pr.x_feasible.resize(n);
  for (int i = 0; i < n; ++i) pr.x_feasible[i] = normal(*rng);
  pr.h = pr.G * pr.x_feasible + InteriorPoint(cones, rng);
  return pr;
}

// A random program of 1-8 variables, 0-7 orthant rows and up to 4 second-order blocks of 1-5.
RandomProgram MakeRandomlySizedProgram(std::mt19937* rng) {
  std::uniform_int_distribution<int> size(1, 8);
  std::uniform_int_distribution<int> cone_size(1, 5);
  const int n = size(*rng);
  ConeDimensions cones;
  cones.linear = size(*rng) - 1;
  for (int k = size(*rng) / 2; k > 0; --k) cones.second_order.push_back(cone_size(*rng));
  if (cones.rows() == 0) cones.linear = 1;
  return MakeRandomProgram(rng, n, cones);
}

struct Kkt {
  double stationarity, primal, gap, primal_cone, dual_cone;
};

Kkt KktResiduals(const RandomProgram& pr, const ConicQpSolver& solver) {
  const VectorXd& x = solver.x();
  const VectorXd& s = solver.s();
  const VectorXd& z = solver.z();
  Kkt k;
  k.stationarity = (pr.P * x + pr.c + pr.G.transpose() * z).lpNorm<Eigen::Infinity>();
  k.primal = (pr.G * x + s - pr.h).lpNorm<Eigen::Infinity>();
  k.gap = std::abs(s.dot(z));
  k.primal_cone = ConeViolation(pr.cones, s);
  k.dual_cone = ConeViolation(pr.cones, z);
  return k;
}

TEST(ConicQpTest, RandomProgramsMeetKktToBelow1e9) {
  std::mt19937 rng(47);
  ConicQpSolver solver;
  int most_iterations = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const RandomProgram pr = MakeRandomlySizedProgram(&rng);
    const int n = static_cast<int>(pr.P.rows());
    const ConeDimensions& cones = pr.cones;
    ASSERT_EQ(Eigen::LLT<MatrixXd>(pr.P).info(), Eigen::Success);  // P SPD
    solver.Resize(n, cones);
    const ConicQpStatistics stats = solver.Solve(pr.P, pr.c, pr.G, pr.h);
    ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << trial;
    most_iterations = std::max(most_iterations, stats.iterations);
    const Kkt k = KktResiduals(pr, solver);
    EXPECT_LT(k.stationarity, 1e-9) << trial;
    EXPECT_LT(k.primal, 1e-9) << trial;
    EXPECT_LT(k.gap, 1e-9) << trial;
    EXPECT_LT(k.primal_cone, 1e-12) << trial;
    EXPECT_LT(k.dual_cone, 1e-12) << trial;
    EXPECT_LT(stats.kkt_residual, 1e-9) << trial;

    // Uniqueness (P SPD): the caller's feasible start reaches the same x.
    const VectorXd x = solver.x();
    ASSERT_EQ(solver.Solve(pr.P, pr.c, pr.G, pr.h, &pr.x_feasible).status, ConicQpStatus::kSolved);
    EXPECT_LT((solver.x() - x).norm(), 1e-6 * (1 + x.norm())) << trial;
  }
  EXPECT_LE(most_iterations, 30);
}

// The fallback (SolveConicQpByAdmm) reaches the interior point's answer on the random programs of
// the test above.
TEST(ConicQpTest, AdmmReachesTheInteriorPointsAnswer) {
  std::mt19937 rng(48);
  ConicQpSolver solver;
  for (int trial = 0; trial < 100; ++trial) {
    const RandomProgram pr = MakeRandomlySizedProgram(&rng);
    const int n = static_cast<int>(pr.P.rows());
    const ConeDimensions& cones = pr.cones;
    solver.Resize(n, cones);
    ASSERT_EQ(solver.Solve(pr.P, pr.c, pr.G, pr.h).status, ConicQpStatus::kSolved) << trial;
    VectorXd x;
    int iterations = 0;
    ASSERT_TRUE(SolveConicQpByAdmm(pr.P, pr.c, pr.G, pr.h, cones, 100000, 1e-11, &x, &iterations))
        << trial;
    EXPECT_LT((x - solver.x()).norm(), 1e-6 * (1 + solver.x().norm())) << trial;
  }
}

// A program an engine island met (two joint limits, K 1e8 N m/rad on light links; the step's
// equilibrated form): the interior point stops short of it as given; with unit rows it solves,
// and ADMM on the unit rows and an O(1) answer finds the same x (first_order_step.cc's retries).
TEST(ConicQpTest, AStiffLimitsProgramSolvesWithUnitRowsAndByAdmm) {
  MatrixXd P = MatrixXd::Identity(2, 2), G(4, 2);
  G << -0.99772338231416213, 0.067439249577587956, 0.026246887725963987, -0.99965549109915885,
      -7.0710678118654754e-05, 0, 0, -7.0710678118654754e-05;
  VectorXd c = VectorXd::Zero(2), h(4);
  h << 1906426.8531480383, -2286339.8035634602, 0, 0;
  ConeDimensions cones;
  cones.linear = 4;
  ConicQpSolver solver;
  solver.Resize(2, cones);
  EXPECT_NE(solver.Solve(P, c, G, h).status, ConicQpStatus::kSolved);
  for (int i = 0; i < 4; ++i) {
    const double norm = G.row(i).norm();
    G.row(i) /= norm;
    h[i] /= norm;
  }
  ASSERT_EQ(solver.Solve(P, c, G, h).status, ConicQpStatus::kSolved);
  // The answer by hand: raising x0 only raises the x1 that row 1 needs (its x0 coefficient is
  // positive), so x0 sits at its bound 0 and row 1 binds, x1 = h1 / G11.
  const double x1 = h[1] / G(1, 1);
  EXPECT_NEAR(solver.x()[0], 0, 1e-9 * x1);
  EXPECT_NEAR(solver.x()[1], x1, 1e-9 * x1);
  const double scale = h.lpNorm<Eigen::Infinity>();
  VectorXd x;
  int iterations = 0;
  ASSERT_TRUE(SolveConicQpByAdmm(P, c / scale, G, h / scale, cones, 20000, 1e-10, &x, &iterations));
  EXPECT_LT((scale * x - solver.x()).norm(), 1e-6 * solver.x().norm());
  EXPECT_LT(iterations, 1000);
}

TEST(ConicQpTest, SolvesAreBitIdentical) {
  std::mt19937 rng(5);
  const RandomProgram pr = MakeRandomProgram(&rng, 7, Cones(4, {3, 3, 2}));
  ConicQpSolver a, b;
  a.Resize(7, pr.cones);
  b.Resize(7, pr.cones);
  a.Solve(pr.P, pr.c, pr.G, pr.h);
  b.Solve(pr.P, pr.c, pr.G, pr.h);
  const VectorXd first = b.x();
  b.Solve(pr.P, pr.c, pr.G, pr.h);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(a.x()[i], b.x()[i]);
    EXPECT_EQ(first[i], b.x()[i]);
  }
}

TEST(ConicQpTest, MismatchedSizesAreRejected) {
  ConicQpSolver solver;
  solver.Resize(2, Cones(2, {}));
  const ConicQpStatistics stats = solver.Solve(MatrixXd::Identity(3, 3), VectorXd::Zero(3),
                                               MatrixXd::Zero(2, 3), VectorXd::Zero(2));
  EXPECT_EQ(stats.status, ConicQpStatus::kInvalidInput);
}

// ---------------------------------------------------------------------------------------------
// CVXOPT coneqp's answers (tests/solver/data/conic_qp_cvxopt.txt, from
// scripts/generate_conic_qp_reference.py, CVXOPT 1.3.0 at 1e-10 tolerances).

struct Reference {
  std::string name;
  int n = 0;
  ConeDimensions cones;
  MatrixXd P, G;
  VectorXd c, h, x, z;
  double objective = 0;
};

std::vector<double> ReadNumbers(std::istringstream* line) {
  std::vector<double> v;
  double value;
  while (*line >> value) v.push_back(value);
  return v;
}

std::vector<Reference> ReadReferences(const std::string& path) {
  std::ifstream file(path);
  std::vector<Reference> out;
  std::string text;
  Reference r;
  while (std::getline(file, text)) {
    std::istringstream line(text);
    std::string key;
    line >> key;
    if (key == "problem") {
      r = Reference();
      line >> r.name;
    } else if (key == "n") {
      int k = 0;
      std::string word;
      line >> r.n >> word >> r.cones.linear >> word >> k;
      r.cones.second_order.resize(k);
      for (int& m : r.cones.second_order) line >> m;
    } else if (key == "P" || key == "G") {
      const std::vector<double> v = ReadNumbers(&line);
      const int rows = static_cast<int>(v.size()) / r.n;
      MatrixXd& target = key == "P" ? r.P : r.G;
      target =
          Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(v.data(), rows, r.n);
    } else if (key == "c" || key == "h" || key == "x" || key == "z") {
      const std::vector<double> v = ReadNumbers(&line);
      VectorXd& target = key == "c" ? r.c : key == "h" ? r.h : key == "x" ? r.x : r.z;
      target = Eigen::Map<const VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
    } else if (key == "objective") {
      line >> r.objective;
    } else if (key == "end") {
      out.push_back(r);
    }
  }
  return out;
}

TEST(ConicQpTest, AgreesWithCvxopt) {
  const std::vector<Reference> references = ReadReferences(ALSIM_CONIC_QP_REFERENCE);
  ASSERT_EQ(references.size(), 15u);
  ConicQpSolver solver;
  for (const Reference& r : references) {
    ASSERT_EQ(r.G.rows(), r.cones.rows()) << r.name;
    solver.Resize(r.n, r.cones);
    const ConicQpStatistics stats = solver.Solve(r.P, r.c, r.G, r.h);
    ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << r.name;
    // CVXOPT stops at 1e-10: its x carries about sqrt(1e-10) where a bound is degenerate.
    EXPECT_LT((solver.x() - r.x).lpNorm<Eigen::Infinity>(), 2e-5 * (1 + r.x.norm())) << r.name;
    EXPECT_NEAR(stats.primal_objective, r.objective, 1e-8 * (1 + std::abs(r.objective))) << r.name;
    EXPECT_LT((solver.z() - r.z).lpNorm<Eigen::Infinity>(), 2e-5 * (1 + r.z.norm())) << r.name;
  }
}

// ---------------------------------------------------------------------------------------------
// O(hB) conditioning (Sec. 8.4: "the number of digits of precision required is O(hB)").

// The unit program in y, scaled to x = D^-1 y with D spanning 1e3-1e4: P_x = D Q D has entries
// ~1e6-1e8, c_x = D c_y, G_x = G_y D. Both must stop at the relative tolerance on the same point.
TEST(ConicQpTest, DiagonalScalingTo1e8StillSolvesToTheRelativeTolerance) {
  std::mt19937 rng(11);
  const ConeDimensions cones = Cones(3, {3, 3});
  const RandomProgram unit = MakeRandomProgram(&rng, 6, cones);
  VectorXd d(6);
  d << 1e3, 2e3, 5e3, 1e4, 3e3, 7e3;
  const MatrixXd P = d.asDiagonal() * unit.P * d.asDiagonal();
  const VectorXd c = d.asDiagonal() * unit.c;
  const MatrixXd G = unit.G * d.asDiagonal();
  ConicQpSolver solver;
  solver.Resize(6, cones);
  ASSERT_EQ(solver.Solve(unit.P, unit.c, unit.G, unit.h).status, ConicQpStatus::kSolved);
  const VectorXd y = solver.x();
  const ConicQpStatistics stats = solver.Solve(P, c, G, unit.h);
  ASSERT_EQ(stats.status, ConicQpStatus::kSolved);
  const VectorXd y_from_x = d.asDiagonal() * solver.x();
  // The stopping rule bounds the gap, so x is met to sqrt(gap / lambda_min(P / sigma)).
  EXPECT_LT((y_from_x - y).norm(), 1e-5 * (1 + y.norm()));
  const double unit_objective = 0.5 * y.dot(unit.P * y) + unit.c.dot(y);
  EXPECT_NEAR(stats.primal_objective, unit_objective, 1e-10 * std::abs(unit_objective));
  EXPECT_LT(stats.kkt_residual, 1e-9);
}

// The master problem (181)-(189) of a body with nv dofs and nc contacts, no bilateral or
// unilateral rows, with the paper's settings: h = 1e-3, zeta = 1/h, K_r = K_s = 0,
// B_r = B_s = 1e6/h, B_n = 1, K_n = 1e6. Variables (lam_n, lam_r, lam_s) blockwise.
struct MasterProgram {
  MatrixXd P, G;
  MatrixXd Gstar;  // [G_n; G_r; G_s]: the generalized impulse is G*^T x
  VectorXd c, h;
  ConeDimensions cones;
};

MasterProgram MakeMasterProgram(std::mt19937* rng, int nv, int nc) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0, 1);
  const double h = 1e-3, zeta = 1 / h, B_t = 1e6 / h, B_n = 1, K_n = 1e6;
  MatrixXd Minv = MatrixXd::Zero(nv, nv);
  for (int i = 0; i < nv; ++i) Minv(i, i) = 1 / (0.5 + uniform(*rng));
  MatrixXd Gn(nc, nv), Gr(nc, nv), Gs(nc, nv);
  for (MatrixXd* g : {&Gn, &Gr, &Gs}) {
    for (int i = 0; i < nc * nv; ++i) g->data()[i] = normal(*rng);
  }
  MatrixXd Gstar(3 * nc, nv);
  Gstar << Gn, Gr, Gs;
  VectorXd f(nv), v0(nv), phi_n(nc);
  for (int i = 0; i < nv; ++i) f[i] = normal(*rng), v0[i] = normal(*rng);
  for (int i = 0; i < nc; ++i) phi_n[i] = -1e-4 * uniform(*rng);
  const int n = 3 * nc;
  // E, F (195)-(196) and d, e (197)-(198) with phid = G v0, Gd v0 = 0, K_r = K_s = 0.
  const MatrixXd E = (h * B_t) * Gr * Minv * Gstar.transpose();
  const MatrixXd F = (h * B_t) * Gs * Minv * Gstar.transpose();
  const VectorXd dr = B_t * (Gr * v0 + h * Gr * Minv * f);
  const VectorXd ds = B_t * (Gs * v0 + h * Gs * Minv * f);
  MatrixXd Sr = MatrixXd::Zero(nc, n), Ss = MatrixXd::Zero(nc, n);
  Sr.middleCols(nc, nc).setIdentity();
  Ss.middleCols(2 * nc, nc).setIdentity();
  MasterProgram pr;
  pr.Gstar = Gstar;
  pr.P = MatrixXd::Identity(n, n);
  pr.P.topLeftCorner(nc, nc) *= zeta;
  pr.P += (Sr + E).transpose() * (Sr + E) + (Ss + F).transpose() * (Ss + F);  // (183)
  pr.P = 0.5 * (pr.P + pr.P.transpose()).eval();
  pr.c = (Sr + E).transpose() * dr + (Ss + F).transpose() * ds;  // (184)
  // A x >= q (185)-(188) on the normals: A = [I + chi Gn Lam Gn^T, chi Gn Lam Gr^T, ...].
  const double chi = h * h * K_n + h * B_n;
  MatrixXd A = chi * Gn * Minv * Gstar.transpose();
  A.leftCols(nc) += MatrixXd::Identity(nc, nc);
  const VectorXd q = -K_n * phi_n - (h * K_n + B_n) * (Gn * v0 + h * Gn * Minv * f);
  pr.cones.linear = nc;
  pr.cones.second_order.assign(nc, 3);
  pr.G = MatrixXd::Zero(4 * nc, n);
  pr.h = VectorXd::Zero(4 * nc);
  pr.G.topRows(nc) = -A;
  pr.h.head(nc) = -q;
  for (int i = 0; i < nc; ++i) {
    const double mu = 0.2 + 0.8 * uniform(*rng);
    pr.G(nc + 3 * i, i) = -mu;
    pr.G(nc + 3 * i + 1, nc + i) = -1;
    pr.G(nc + 3 * i + 2, 2 * nc + i) = -1;
  }
  return pr;
}

// H's eigenvalues span zeta, 1 and (h B)^2 |G M^-1 G^T|^2 ~ 1e12: a gap met to the relative
// tolerance fixes x only to sqrt(gap / lambda_min) along H's weak directions, the impulse
// distributions G*^T x barely sees (internal forces). So the checks are the KKT measure, the
// objective, the H-norm distance between answers and the generalized impulse G*^T x that moves
// the bodies, across three routes to the same minimizer: the data as formed, the objective
// divided by 1e12, and the paper's feasible start.
TEST(ConicQpTest, MasterProblemWithBOf1e6OverHSolves) {
  std::mt19937 rng(13);
  for (const auto& [dofs, contacts] : {std::pair{6, 1}, {6, 4}, {6, 8}, {12, 3}}) {
    const int nv = dofs, nc = contacts;  // named for the lambda below (C++17)
    const MasterProgram pr = MakeMasterProgram(&rng, nv, nc);
    const int n = 3 * nc;
    ASSERT_EQ(Eigen::LLT<MatrixXd>(pr.P).info(), Eigen::Success);  // H SPD (180)
    ConicQpSolver solver;
    solver.Resize(n, pr.cones);
    const ConicQpStatistics stats = solver.Solve(pr.P, pr.c, pr.G, pr.h);
    ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << nv << " " << nc;
    EXPECT_LT(stats.kkt_residual, 1e-9);
    EXPECT_LE(stats.iterations, 30);
    const VectorXd x = solver.x();
    const VectorXd impulse = pr.Gstar.transpose() * x;
    const double objective = stats.primal_objective;
    const auto expect_same = [&](const ConicQpStatistics& other, const char* route) {
      ASSERT_EQ(other.status, ConicQpStatus::kSolved) << route << " " << nv << " " << nc;
      EXPECT_LE(other.iterations, 30) << route;
      const VectorXd dx = solver.x() - x;
      EXPECT_LT(dx.dot(pr.P * dx), 1e-11 * std::abs(objective)) << route << " " << nv << " " << nc;
      EXPECT_LT((pr.Gstar.transpose() * solver.x() - impulse).norm(), 1e-7 * impulse.norm())
          << route << " " << nv << " " << nc;
    };
    // The same program with the objective divided by 1e12 has the same minimizer.
    const MatrixXd P_small = pr.P * 1e-12;
    const VectorXd c_small = pr.c * 1e-12;
    const ConicQpStatistics small = solver.Solve(P_small, c_small, pr.G, pr.h);
    expect_same(small, "scaled");
    EXPECT_NEAR(small.primal_objective * 1e12, objective, 1e-11 * std::abs(objective));
    // And a feasible start (normals large, tangents zero; Appendix 0.A) reaches it too.
    VectorXd start = VectorXd::Zero(n);
    start.head(nc).setConstant(10 * (1 + pr.h.head(nc).cwiseAbs().maxCoeff()));
    const ConicQpStatistics started = solver.Solve(pr.P, pr.c, pr.G, pr.h, &start);
    expect_same(started, "start");
    EXPECT_NEAR(started.primal_objective, objective, 1e-11 * std::abs(objective));
  }
}

// ---------------------------------------------------------------------------------------------
// No allocation once sized: small programs, the "900 elements, 6 dofs" shape, and one large
// enough for Eigen's blocked Cholesky.

TEST(ConicQpTest, AWarmSolveAllocatesNothing) {
  std::mt19937 rng(17);
  for (const auto& [n, cones] : {std::pair{5, Cones(4, {3, 3})},
                                 {6, Cones(900, {})},
                                 {12, Cones(4, {3, 3, 3, 3})},
                                 {240, Cones(240, std::vector<int>(80, 3))}}) {
    const RandomProgram pr = MakeRandomProgram(&rng, n, cones);
    ConicQpSolver solver;
    solver.Resize(n, cones);
    ASSERT_EQ(solver.Solve(pr.P, pr.c, pr.G, pr.h).status, ConicQpStatus::kSolved);
    long count = 0;
    {
      const testing::AllocationCounter allocations;
      solver.Solve(pr.P, pr.c, pr.G, pr.h);
      solver.Solve(pr.P, pr.c, pr.G, pr.h, &pr.x_feasible);
      count = allocations.count();
    }
    EXPECT_EQ(count, 0) << n << " " << cones.rows();
  }
}

// ---------------------------------------------------------------------------------------------
// The diagonal-plus-low-rank path (SolveDiagonalLowRank): the QP (83)-(85) with
// A = I + W S = I + (W G M^-1) G^T, i.e. a = 1, U = W G M^-1, V = G (n x nv), never forming A.

// The structured program's data (DiagonalLowRankQp's fields, owned); view() is the solver's
// DiagonalLowRankQp over them.
struct LowRankData {
  VectorXd p, c, a_diagonal;
  MatrixXd u, v;
  VectorXd b;
  bool nonnegative = true;
  DiagonalLowRankQp view() const { return {p, c, a_diagonal, u, v, b, nonnegative}; }
};

struct LowRankUnilateral {
  LowRankData qp;
  MatrixXd A;  // I + U V^T, for the dense path and the checks
};

LowRankUnilateral MakeLowRankUnilateral(const MatrixXd& G, const VectorXd& minv, const VectorXd& w,
                                        const VectorXd& r) {
  const int n = static_cast<int>(G.rows());
  LowRankUnilateral out;
  out.qp.p = VectorXd::Ones(n);
  out.qp.c = VectorXd::Zero(n);
  out.qp.a_diagonal = VectorXd::Ones(n);
  out.qp.u = w.asDiagonal() * G * minv.asDiagonal();
  out.qp.v = G;
  out.qp.b = r;
  out.A = MatrixXd::Identity(n, n) + out.qp.u * out.qp.v.transpose();
  return out;
}

// Random rows over nv = 6 dofs, W_ii in [0.5, 1.5] w_level (h^2 K + h B, one material per
// instance; the tests take w_level over [1, 1e6], the O(hB) range), r of both signs
// so that some rows are active and some are not, scaled with W as (83)'s r = W (phi / h^2 + ...)
// is.
LowRankUnilateral MakeRandomLowRank(std::mt19937* rng, int n, double w_level,
                                    bool divided_by_w = false) {
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0, 1);
  // Contact rows G_i = [n_i^T, (p_i x n_i)^T] of a body of mass 1-2 and inertia 0.1-0.3: points
  // p_i on a face, normals n_i tilted up to ~0.3 rad from the face's.
  MatrixXd G(n, 6);
  for (int i = 0; i < n; ++i) {
    const Eigen::Vector3d p(uniform(*rng) - 0.5, uniform(*rng) - 0.5, -0.5);
    const Eigen::Vector3d normal_i =
        Eigen::Vector3d(0.3 * normal(*rng), 0.3 * normal(*rng), 1).normalized();
    G.row(i).head<3>() = normal_i.transpose();
    G.row(i).tail<3>() = p.cross(normal_i).transpose();
  }
  VectorXd minv(6), w(n), r(n);
  for (int i = 0; i < 3; ++i) minv[i] = 1 / (1 + uniform(*rng));
  for (int i = 3; i < 6; ++i) minv[i] = 1 / (0.1 + 0.2 * uniform(*rng));
  for (int i = 0; i < n; ++i) w[i] = w_level * (0.5 + uniform(*rng));
  for (int i = 0; i < n; ++i) r[i] = w[i] * normal(*rng);
  if (!divided_by_w) return MakeLowRankUnilateral(G, minv, w, r);
  // (84) divided by W: (W^-1 + S) lam >= W^-1 r, the same lam.
  LowRankUnilateral out = MakeLowRankUnilateral(G, minv, VectorXd::Ones(n), r);
  out.qp.a_diagonal = w.cwiseInverse();
  out.qp.b = r.cwiseQuotient(w);
  out.A = MatrixXd(out.qp.a_diagonal.asDiagonal()) + out.qp.u * out.qp.v.transpose();
  return out;
}

// The cube on the Winkler foundation (digest 9.4): side 1, mass 8, a k x k grid of elements
// under the bottom face, E = 1e11 (K = E / k^2 per element, depth 1), B = 1, h = 0.01, tilted
// (penetration varying across the face) under gravity and the 50 N load, so that part of the
// face separates. Rows G_i = [e_z^T, (p_i x e_z)^T] over (v, omega).
LowRankUnilateral MakeCube(int k) {
  const int n = k * k;
  const double h = 0.01, mass = 8, inertia = mass / 6, K = 1e11 / n, B = 1, g = 9.8;
  MatrixXd G = MatrixXd::Zero(n, 6);
  VectorXd phi(n);
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const double x = (i + 0.5) / k - 0.5, y = (j + 0.5) / k - 0.5;
      const int row = i * k + j;
      G(row, 2) = 1;
      G(row, 3) = y;   // (p x e_z)_x = p_y
      G(row, 4) = -x;  // (p x e_z)_y = -p_x
      phi[row] = 1e-2 * x + 2e-3 * y;
    }
  }
  VectorXd minv(6);
  minv << 1 / mass, 1 / mass, 1 / mass, 1 / inertia, 1 / inertia, 1 / inertia;
  // Gravity and 50 N down at (0.5, 0, 0.5) from the center: torque p x f = (0, 25, 0).
  VectorXd f = VectorXd::Zero(6);
  f[2] = -mass * g - 50;
  f[4] = 25;
  const VectorXd w = VectorXd::Constant(n, h * h * K + h * B);
  const VectorXd r = -K * phi - (h * K + B) * (h * G * minv.asDiagonal() * f);
  return MakeLowRankUnilateral(G, minv, w, r);
}

// KKT of min 1/2 |lam|^2 s.t. A lam >= b, lam >= 0 for (x, s, z) in the cone form's rows.
double UnilateralKkt(const LowRankUnilateral& pr, const ConicQpSolver& solver) {
  const int n = static_cast<int>(pr.A.rows());
  const VectorXd& x = solver.x();
  const VectorXd& s = solver.s();
  const VectorXd& z = solver.z();
  const VectorXd stationarity = x - pr.A.transpose() * z.head(n) - z.tail(n);
  const VectorXd primal_a = -pr.A * x + s.head(n) + pr.qp.b;
  const VectorXd primal_x = -x + s.tail(n);
  const double scale = 1 + std::max({x.norm(), z.norm(), pr.qp.b.norm()});
  return std::max({stationarity.norm() / (1 + (pr.A.transpose() * z.head(n)).norm()),
                   primal_a.norm() / (1 + (pr.A * x).norm() + pr.qp.b.norm()),
                   primal_x.norm() / scale, std::abs(s.dot(z)) / scale,
                   -std::min(0.0, s.minCoeff()), -std::min(0.0, z.minCoeff())});
}

// sqrt(2 gap): what the stopping rule fixes x to when P >= I (a polished point's gap may read
// a rounding below 0).
double Root2Gap(const ConicQpStatistics& stats) { return std::sqrt(2 * std::max(0.0, stats.gap)); }

// (84) as the paper writes it, A = I + W S, has rows of size W |S| next to P = I: once
// (W |S|)^2 nears 1 / eps the dense path's P + G~^T G~ holds P below its rounding (its factor
// fails at the first iteration) and Woodbury's forward error grows with the same condition
// number. Divided by W, (W^-1 + S) lam >= W^-1 r has the same lam and rows of size |S|: both
// paths are compared on that form over W in [1, 1e6], and on the paper's form up to W = 1e4.
TEST(ConicQpTest, DiagonalLowRankPathEqualsTheDensePath) {
  std::mt19937 rng(83);
  std::uniform_int_distribution<int> size(30, 200);
  ConicQpSolver dense, structured, dense_unpolished;
  dense_unpolished.mutable_parameters().polish = false;
  int compared = 0, equal = 0, polished = 0;
  for (int trial = 0; trial < 28; ++trial) {
    const int n = size(rng);
    const double w_level = std::pow(10.0, trial % 7);
    const std::uint32_t seed = rng();
    for (bool divided_by_w : {false, true}) {
      if (!divided_by_w && w_level > 1e4) continue;
      std::mt19937 instance_rng(seed);
      const LowRankUnilateral pr = MakeRandomLowRank(&instance_rng, n, w_level, divided_by_w);
      const UnilateralQp qp = MakeUnilateral(pr.A, pr.qp.b);
      const std::string label = "trial " + std::to_string(trial) + " n " + std::to_string(n) +
                                " W " + std::to_string(w_level) + (divided_by_w ? " /W" : "");
      structured.ResizeDiagonalLowRank(n, 6, true);
      const ConicQpStatistics s_stats = structured.SolveDiagonalLowRank(pr.qp.view());
      dense_unpolished.Resize(n, qp.cones);
      const ConicQpStatistics u_stats = dense_unpolished.Solve(qp.P, qp.c, qp.G, qp.h);
      dense.Resize(n, qp.cones);
      const ConicQpStatistics d_stats = dense.Solve(qp.P, qp.c, qp.G, qp.h);
      ASSERT_EQ(s_stats.status, ConicQpStatus::kSolved) << label;
      ASSERT_EQ(u_stats.status, s_stats.status) << label;
      ASSERT_EQ(d_stats.status, s_stats.status) << label;
      ++compared;
      if (s_stats.polished) ++polished;
      EXPECT_LT(s_stats.kkt_residual, 1e-9) << label;
      EXPECT_LT(UnilateralKkt(pr, structured), 1e-9) << label;
      // The same iteration as the unpolished dense path: the same count (to one, where the two
      // roundings cross the stopping rule at different iterations) and the same point, to 1e-9
      // relative, or where the roundings part at the last iterations, to what the stopping rule
      // fixes: 1/2 |x - x*|^2 <= gap (P = I).
      EXPECT_LE(std::abs(s_stats.iterations - u_stats.iterations), 1) << label;
      const double scale = dense.x().norm();
      const double difference = (structured.x() - dense_unpolished.x()).norm();
      EXPECT_LT(difference, 1e-9 * scale + Root2Gap(s_stats) + Root2Gap(u_stats)) << label;
      if (difference < 1e-9 * scale) ++equal;
      // And the polished dense answer, which moves the degenerate rows by O(sqrt(gap)).
      EXPECT_LT((structured.x() - dense.x()).norm(),
                1e-9 * scale + Root2Gap(s_stats) + Root2Gap(d_stats))
          << label;
      EXPECT_NEAR(s_stats.primal_objective, d_stats.primal_objective,
                  1e-9 * std::abs(d_stats.primal_objective))
          << label;
    }
  }
  EXPECT_EQ(compared, 48);
  // Nearly all instances meet the dense answer to 1e-9 (both polished on the same active set,
  // or the same iterates to the last one).
  EXPECT_GE(equal, 46);
  // The structured polish is kept where it is no worse than the interior point by the KKT
  // measure, as the dense path's.
  EXPECT_GE(polished, 40);
  std::printf(
      "structured x within 1e-9 relative of the dense path's on %d of %d instances, %d "
      "polished\n",
      equal, compared, polished);
}

TEST(ConicQpTest, DiagonalLowRankPathWithoutNonnegativityEqualsTheDensePath) {
  // min 1/2 x^T diag(p) x + c^T x s.t. (diag(a) + U V^T) x >= b alone.
  std::mt19937 rng(84);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform(0, 1);
  ConicQpSolver dense, structured;
  dense.mutable_parameters().polish = false;
  int same_status = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const int n = 20 + 10 * trial, r = 1 + trial % 4;
    LowRankData qp;
    qp.nonnegative = false;
    qp.p.resize(n);
    qp.c.resize(n);
    qp.a_diagonal.resize(n);
    qp.b.resize(n);
    qp.u.resize(n, r);
    qp.v.resize(n, r);
    for (int i = 0; i < n; ++i) {
      qp.p[i] = 1 + uniform(rng);
      qp.c[i] = normal(rng);
      qp.a_diagonal[i] = 0.5 + uniform(rng);
      for (int k = 0; k < r; ++k) qp.u(i, k) = normal(rng), qp.v(i, k) = normal(rng);
    }
    const MatrixXd A = MatrixXd(qp.a_diagonal.asDiagonal()) + qp.u * qp.v.transpose();
    // Strictly feasible: b = A x0 - slack with slacks in [0.1, 1.1].
    VectorXd x0(n);
    for (int i = 0; i < n; ++i) x0[i] = normal(rng);
    qp.b = A * x0;
    for (int i = 0; i < n; ++i) qp.b[i] -= 0.1 + uniform(rng);
    const MatrixXd P = qp.p.asDiagonal();
    const MatrixXd G = -A;
    const VectorXd h = -qp.b;
    dense.Resize(n, Cones(n, {}));
    const ConicQpStatistics d_stats = dense.Solve(P, qp.c, G, h);
    structured.ResizeDiagonalLowRank(n, r, false);
    const ConicQpStatistics s_stats = structured.SolveDiagonalLowRank(qp.view());
    ASSERT_EQ(d_stats.status, ConicQpStatus::kSolved) << trial;
    // These programs end at the floor on both paths (at_floor, a gap of 1e-12-1e-9); the
    // structured path's floor may lie a little higher, past acceptable_kkt_residual.
    if (s_stats.status == ConicQpStatus::kSolved) ++same_status;
    EXPECT_LT(s_stats.kkt_residual, 1e-8) << trial;
    // 1/2 (x - x*)^T P (x - x*) <= gap with P >= I.
    EXPECT_LT((structured.x() - dense.x()).norm(),
              1e-9 * dense.x().norm() + Root2Gap(s_stats) + Root2Gap(d_stats))
        << trial;
    // A caller's start reaches the same point.
    const VectorXd x = structured.x();
    const VectorXd start = VectorXd::Zero(n);
    const ConicQpStatistics started = structured.SolveDiagonalLowRank(qp.view(), &start);
    EXPECT_LT(started.kkt_residual, 1e-8) << trial;
    EXPECT_LT((structured.x() - x).norm(), 1e-6 * (1 + x.norm())) << trial;
  }
  EXPECT_GE(same_status, 9);
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "900 elements, 6 dofs": the cube on 30 x 30 elements through Woodbury, and the 10 x 10 cube and
// a 300-row one through both paths (the wall times are printed, not checked).
TEST(ConicQpTest, DiagonalLowRankPathSolvesTheNineHundredElementCube) {
  for (int k : {10, 30}) {
    const LowRankUnilateral pr = MakeCube(k);
    const int n = k * k;
    ConicQpSolver structured;
    structured.ResizeDiagonalLowRank(n, 6, true);
    ASSERT_EQ(structured.SolveDiagonalLowRank(pr.qp.view()).status, ConicQpStatus::kSolved);
    const auto start = std::chrono::steady_clock::now();
    const ConicQpStatistics stats = structured.SolveDiagonalLowRank(pr.qp.view());
    const double seconds = Seconds(start);
    ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << k;
    EXPECT_LT(stats.kkt_residual, 1e-9) << k;
    EXPECT_LT(UnilateralKkt(pr, structured), 1e-9) << k;
    // Many rows over a rank-3 G (the face's rows see v_z, omega_x, omega_y only) and a face
    // partly lifting off: a degenerate program on which the dense path takes as many iterations.
    EXPECT_LE(stats.iterations, 45) << k;
    int active = 0, separated = 0;
    for (int i = 0; i < n; ++i) {
      if (structured.x()[i] > 0) ++active;
      if (structured.s()[i] > 1e-6 * pr.qp.b.cwiseAbs().maxCoeff()) ++separated;
    }
    EXPECT_GT(active, 0) << k;
    EXPECT_GT(separated, 0) << k;  // part of the face lifts off
    std::printf("cube %d elements: %d iterations, kkt %.2e, structured %.4f s\n", n,
                stats.iterations, stats.kkt_residual, seconds);
    if (k > 10) continue;
    const UnilateralQp qp = MakeUnilateral(pr.A, pr.qp.b);
    ConicQpSolver dense;
    dense.mutable_parameters().polish = false;
    dense.Resize(n, qp.cones);
    const ConicQpStatistics d_stats = dense.Solve(qp.P, qp.c, qp.G, qp.h);
    ASSERT_EQ(d_stats.status, ConicQpStatus::kSolved);
    EXPECT_LT((structured.x() - dense.x()).norm(),
              1e-9 * dense.x().norm() + Root2Gap(stats) + Root2Gap(d_stats));
    std::printf("cube %d elements, dense: %d iterations, kkt %.2e, |x - x_dense| / |x| %.1e\n", n,
                d_stats.iterations, d_stats.kkt_residual,
                (structured.x() - dense.x()).norm() / dense.x().norm());
  }
  std::mt19937 rng(300);
  const LowRankUnilateral pr = MakeRandomLowRank(&rng, 300, 1e4);
  const UnilateralQp qp = MakeUnilateral(pr.A, pr.qp.b);
  ConicQpSolver dense, structured;
  dense.mutable_parameters().polish = false;
  dense.Resize(300, qp.cones);
  structured.ResizeDiagonalLowRank(300, 6, true);
  auto start = std::chrono::steady_clock::now();
  const ConicQpStatistics d_stats = dense.Solve(qp.P, qp.c, qp.G, qp.h);
  const double dense_seconds = Seconds(start);
  start = std::chrono::steady_clock::now();
  const ConicQpStatistics s_stats = structured.SolveDiagonalLowRank(pr.qp.view());
  const double structured_seconds = Seconds(start);
  ASSERT_EQ(d_stats.status, ConicQpStatus::kSolved);
  ASSERT_EQ(s_stats.status, ConicQpStatus::kSolved);
  EXPECT_LT((structured.x() - dense.x()).norm(), 1e-9 * dense.x().norm());
  std::printf("n = 300, r = 6: dense %.4f s (%d iterations), structured %.4f s (%d iterations)\n",
              dense_seconds, d_stats.iterations, structured_seconds, s_stats.iterations);
}

TEST(ConicQpTest, DiagonalLowRankPathIsDeterministicAndChecksItsSizes) {
  std::mt19937 rng(85);
  const LowRankUnilateral pr = MakeRandomLowRank(&rng, 50, 1e3);
  ConicQpSolver a, b;
  a.ResizeDiagonalLowRank(50, 6, true);
  b.ResizeDiagonalLowRank(50, 6, true);
  a.SolveDiagonalLowRank(pr.qp.view());
  b.SolveDiagonalLowRank(pr.qp.view());
  const VectorXd first = b.x();
  b.SolveDiagonalLowRank(pr.qp.view());
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(a.x()[i], b.x()[i]);
    EXPECT_EQ(first[i], b.x()[i]);
  }
  // The wrong rank, the wrong layout, a missing x >= 0 block.
  ConicQpSolver c;
  c.ResizeDiagonalLowRank(50, 5, true);
  EXPECT_EQ(c.SolveDiagonalLowRank(pr.qp.view()).status, ConicQpStatus::kInvalidInput);
  c.ResizeDiagonalLowRank(50, 6, false);
  EXPECT_EQ(c.SolveDiagonalLowRank(pr.qp.view()).status, ConicQpStatus::kInvalidInput);
  c.Resize(50, Cones(100, {}));
  EXPECT_EQ(c.SolveDiagonalLowRank(pr.qp.view()).status, ConicQpStatus::kInvalidInput);
  const UnilateralQp qp = MakeUnilateral(pr.A, pr.qp.b);
  a.ResizeDiagonalLowRank(50, 6, true);
  EXPECT_EQ(a.Solve(qp.P, qp.c, qp.G, qp.h).status, ConicQpStatus::kInvalidInput);
}

TEST(ConicQpTest, AWarmDiagonalLowRankSolveAllocatesNothing) {
  std::mt19937 rng(86);
  LowRankUnilateral without = MakeRandomLowRank(&rng, 60, 1e3, true);
  without.qp.nonnegative = false;  // (W^-1 + S) x >= W^-1 r alone
  for (const LowRankUnilateral& pr :
       {MakeRandomLowRank(&rng, 40, 1e5, true), MakeCube(30), without}) {
    const int n = static_cast<int>(pr.qp.p.size());
    ConicQpSolver solver;
    solver.ResizeDiagonalLowRank(n, 6, pr.qp.nonnegative);
    ASSERT_EQ(solver.SolveDiagonalLowRank(pr.qp.view()).status, ConicQpStatus::kSolved);
    const VectorXd start = VectorXd::Constant(n, 1.0);
    long count = 0;
    {
      const testing::AllocationCounter allocations;
      solver.SolveDiagonalLowRank(pr.qp.view());
      solver.SolveDiagonalLowRank(pr.qp.view(), &start);
      count = allocations.count();
    }
    EXPECT_EQ(count, 0) << n;
  }
}

// ---------------------------------------------------------------------------------------------
// Grow-only storage: an island's program changes size every step (contacts come and go), and a
// solver warmed on the largest shapes allocates nothing for the smaller and different ones.

// x, s, z and the statistics of two solves, bit for bit.
void ExpectSameAnswer(const ConicQpSolver& solver, const ConicQpStatistics& stats,
                      const ConicQpSolver& fresh, const ConicQpStatistics& fresh_stats,
                      const std::string& label) {
  EXPECT_EQ(stats.status, fresh_stats.status) << label;
  EXPECT_EQ(stats.iterations, fresh_stats.iterations) << label;
  EXPECT_EQ(stats.kkt_residual, fresh_stats.kkt_residual) << label;
  EXPECT_EQ(stats.polished, fresh_stats.polished) << label;
  ASSERT_EQ(solver.x().size(), fresh.x().size()) << label;
  ASSERT_EQ(solver.s().size(), fresh.s().size()) << label;
  for (Eigen::Index i = 0; i < fresh.x().size(); ++i)
    EXPECT_EQ(solver.x()[i], fresh.x()[i]) << label;
  for (Eigen::Index i = 0; i < fresh.s().size(); ++i) {
    EXPECT_EQ(solver.s()[i], fresh.s()[i]) << label;
    EXPECT_EQ(solver.z()[i], fresh.z()[i]) << label;
  }
}

TEST(ConicQpTest, AWarmSolveOfChangingSizesAllocatesNothing) {
  std::mt19937 rng(18);
  // Warm-up: the largest dense shape (the test above's) and the "900 elements, 6 dofs" cube.
  const RandomProgram largest = MakeRandomProgram(&rng, 240, Cones(240, std::vector<int>(80, 3)));
  const LowRankUnilateral cube = MakeCube(30);
  // Then, in turn: fewer variables, rows and blocks; more blocks in fewer rows; an orthant alone;
  // the cube again and a smaller structured program with and without x >= 0; dense after the
  // structured path; and the largest again.
  std::vector<RandomProgram> dense;
  for (const auto& [n, cones] : {std::pair{12, Cones(4, {3, 3, 3, 3})},
                                 {30, Cones(10, std::vector<int>(40, 3))},
                                 {5, Cones(4, {3, 3})},
                                 {100, Cones(200, {})},
                                 {7, Cones(2, {5, 1, 2})}}) {
    dense.push_back(MakeRandomProgram(&rng, n, cones));
  }
  LowRankUnilateral without = MakeRandomLowRank(&rng, 60, 1e3, true);
  without.qp.nonnegative = false;
  const std::vector<LowRankUnilateral> structured = {cube, MakeRandomLowRank(&rng, 40, 1e5, true),
                                                     without};

  ConicQpSolver solver;
  solver.Resize(240, largest.cones);
  ASSERT_EQ(solver.Solve(largest.P, largest.c, largest.G, largest.h).status,
            ConicQpStatus::kSolved);
  solver.ResizeDiagonalLowRank(900, 6, true);
  ASSERT_EQ(solver.SolveDiagonalLowRank(cube.qp.view()).status, ConicQpStatus::kSolved);

  long total = 0;
  const auto dense_solve = [&](const RandomProgram& pr, const std::string& label) {
    const int n = static_cast<int>(pr.P.rows());
    ConicQpSolver fresh;
    fresh.Resize(n, pr.cones);
    const ConicQpStatistics fresh_stats = fresh.Solve(pr.P, pr.c, pr.G, pr.h);
    ConicQpStatistics stats;
    {
      const testing::AllocationCounter allocations;
      solver.Resize(n, pr.cones);
      stats = solver.Solve(pr.P, pr.c, pr.G, pr.h);
      total += allocations.count();
      EXPECT_EQ(allocations.count(), 0) << label;
    }
    ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << label;
    ExpectSameAnswer(solver, stats, fresh, fresh_stats, label);
  };
  const auto structured_solve = [&](const LowRankUnilateral& pr, const std::string& label) {
    const int n = static_cast<int>(pr.qp.p.size());
    const DiagonalLowRankQp qp = pr.qp.view();
    ConicQpSolver fresh;
    fresh.ResizeDiagonalLowRank(n, 6, pr.qp.nonnegative);
    const ConicQpStatistics fresh_stats = fresh.SolveDiagonalLowRank(qp);
    ConicQpStatistics stats;
    {
      const testing::AllocationCounter allocations;
      solver.ResizeDiagonalLowRank(n, 6, pr.qp.nonnegative);
      stats = solver.SolveDiagonalLowRank(qp);
      total += allocations.count();
      EXPECT_EQ(allocations.count(), 0) << label;
    }
    ASSERT_EQ(stats.status, ConicQpStatus::kSolved) << label;
    ExpectSameAnswer(solver, stats, fresh, fresh_stats, label);
  };
  for (size_t k = 0; k < dense.size(); ++k) dense_solve(dense[k], "dense " + std::to_string(k));
  for (size_t k = 0; k < structured.size(); ++k) {
    structured_solve(structured[k], "structured " + std::to_string(k));
  }
  dense_solve(dense[0], "dense after structured");
  dense_solve(largest, "largest again");
  EXPECT_EQ(total, 0);
}

TEST(ConicQpAdmmTest, AWarmSolveOfChangingSizesAllocatesNothingAndMatchesTheFreeFunction) {
  std::mt19937 rng(19);
  std::vector<RandomProgram> programs;
  for (const auto& [n, cones] : {std::pair{60, Cones(60, std::vector<int>(20, 3))},
                                 {12, Cones(4, {3, 3, 3, 3})},
                                 {20, Cones(2, std::vector<int>(10, 3))},
                                 {5, Cones(4, {3, 3})},
                                 {30, Cones(60, {})}}) {
    programs.push_back(MakeRandomProgram(&rng, n, cones));
  }
  ConicQpAdmm admm;
  admm.Resize(60, programs[0].cones);
  int iterations = 0;
  admm.Solve(programs[0].P, programs[0].c, programs[0].G, programs[0].h, 2000, 1e-10, &iterations);
  long total = 0;
  for (size_t k = 0; k < programs.size(); ++k) {
    const RandomProgram& pr = programs[k];
    const int n = static_cast<int>(pr.P.rows());
    VectorXd x;
    int free_iterations = 0;
    const bool free_converged =
        SolveConicQpByAdmm(pr.P, pr.c, pr.G, pr.h, pr.cones, 2000, 1e-10, &x, &free_iterations);
    bool converged = false;
    {
      const testing::AllocationCounter allocations;
      admm.Resize(n, pr.cones);
      converged = admm.Solve(pr.P, pr.c, pr.G, pr.h, 2000, 1e-10, &iterations);
      total += allocations.count();
      EXPECT_EQ(allocations.count(), 0) << k;
    }
    EXPECT_EQ(converged, free_converged) << k;
    EXPECT_EQ(iterations, free_iterations) << k;
    ASSERT_EQ(admm.x().size(), n) << k;
    for (int i = 0; i < n; ++i) EXPECT_EQ(admm.x()[i], x[i]) << k;
  }
  EXPECT_EQ(total, 0);
  // Sizes other than Resize's are refused.
  admm.Resize(5, programs[3].cones);
  EXPECT_FALSE(admm.Solve(programs[1].P, programs[1].c, programs[1].G, programs[1].h, 10, 1e-10,
                          &iterations));
}

// Dense data in blocks of larger matrices (outer strides) and segments: no copy, no allocation,
// and the answer of the same program in plain matrices.
TEST(ConicQpTest, BlocksOfLargerMatricesSolveWithoutCopies) {
  std::mt19937 rng(20);
  const RandomProgram pr = MakeRandomProgram(&rng, 9, Cones(5, {3, 4}));
  MatrixXd P_big = MatrixXd::Random(14, 11), G_big = MatrixXd::Random(20, 12);
  VectorXd c_big = VectorXd::Random(15), h_big = VectorXd::Random(18);
  P_big.topLeftCorner(9, 9) = pr.P;
  G_big.topLeftCorner(12, 9) = pr.G;
  c_big.head(9) = pr.c;
  h_big.head(12) = pr.h;
  ConicQpSolver plain, blocks;
  plain.Resize(9, pr.cones);
  blocks.Resize(9, pr.cones);
  const ConicQpStatistics plain_stats = plain.Solve(pr.P, pr.c, pr.G, pr.h);
  ConicQpStatistics stats;
  long count = 0;
  {
    const testing::AllocationCounter allocations;
    stats = blocks.Solve(P_big.topLeftCorner(9, 9), c_big.head(9), G_big.topLeftCorner(12, 9),
                         h_big.head(12));
    count = allocations.count();
  }
  EXPECT_EQ(count, 0);
  ASSERT_EQ(stats.status, ConicQpStatus::kSolved);
  ExpectSameAnswer(blocks, stats, plain, plain_stats, "blocks");
}

// GrowOnlyLdlt and GrowOnlyLu are Eigen's LDLT and PartialPivLU over grow-only storage: the same
// bits on SPD, indefinite and singular matrices, sizes up and down on one object (the LU is
// blocked beyond 16 x 16), and no allocation within capacity.
TEST(GrowOnlyFactorizationTest, LdltAndLuAreEigensBitForBit) {
  std::mt19937 rng(21);
  std::normal_distribution<double> normal;
  GrowOnlyLdlt ldlt;
  GrowOnlyLu lu;
  ldlt.Resize(40);
  lu.Resize(40);
  long count = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 1 + (trial * 7) % 40;
    MatrixXd B(n, n);
    for (int i = 0; i < n * n; ++i) B.data()[i] = normal(rng);
    MatrixXd A;
    switch (trial % 4) {
      case 0:  // SPD
        A = B * B.transpose() + 1e-3 * MatrixXd::Identity(n, n);
        break;
      case 1:  // indefinite
        A = B + B.transpose();
        break;
      case 2:  // singular: rank n / 2
        A = B.leftCols((n + 1) / 2) * B.leftCols((n + 1) / 2).transpose();
        A.row(0) *= -1;
        A.col(0) *= -1;
        break;
      default:  // a scaled, nearly singular KKT-like matrix
        A = B * B.transpose();
        A.topLeftCorner(1, 1) *= 1e12;
        break;
    }
    VectorXd b(n);
    for (int i = 0; i < n; ++i) b[i] = normal(rng);
    const Eigen::LDLT<MatrixXd> eigen_ldlt(A);
    const Eigen::PartialPivLU<MatrixXd> eigen_lu(A);
    VectorXd ldlt_x = b;
    eigen_ldlt.solveInPlace(ldlt_x);
    const VectorXd lu_x = eigen_lu.solve(b);
    VectorXd x = b, y(n);
    bool ok = false;
    {
      const testing::AllocationCounter allocations;
      ldlt.Resize(n);
      ok = ldlt.Compute(A);
      ldlt.SolveInPlace(x);
      lu.Resize(n);
      lu.Compute(A);
      lu.Solve(b, y);
      count += allocations.count();
    }
    EXPECT_EQ(ok, eigen_ldlt.info() == Eigen::Success) << trial;
    // Bit for bit, NaN included (a singular LU's solve divides by its zero pivot, as Eigen's).
    const auto bits = [](double value) {
      std::uint64_t word;
      std::memcpy(&word, &value, sizeof(word));
      return word;
    };
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(bits(x[i]), bits(ldlt_x[i])) << trial << " " << i;
      EXPECT_EQ(bits(y[i]), bits(lu_x[i])) << trial << " " << i;
    }
    if (trial % 4 < 2) {  // and they solve
      EXPECT_LT((A * x - b).norm(), 1e-8 * (1 + A.norm() * x.norm())) << trial;
      EXPECT_LT((A * y - b).norm(), 1e-8 * (1 + A.norm() * y.norm())) << trial;
    }
  }
  EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace alsim
