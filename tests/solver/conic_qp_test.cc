// The conic QP of Drumwright's solver (engine/solver/drumwright/conic_qp.h; issue 47, digest
// seed-003-drumwright.md section 12 tests H, K and L): the cone algebra and the Nesterov-Todd
// scaling, the paper's QP (83)-(85) against its closed forms, the friction cone as a projection,
// KKT residuals on random programs, CVXOPT's answers, an O(hB)-scaled program and no allocation
// once sized.
#include "engine/solver/drumwright/conic_qp.h"

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
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
  std::uniform_int_distribution<int> size(1, 8);
  std::uniform_int_distribution<int> cone_size(1, 5);
  ConicQpSolver solver;
  int most_iterations = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const int n = size(rng);
    ConeDimensions cones;
    cones.linear = size(rng) - 1;
    for (int k = size(rng) / 2; k > 0; --k) cones.second_order.push_back(cone_size(rng));
    if (cones.rows() == 0) cones.linear = 1;
    const RandomProgram pr = MakeRandomProgram(&rng, n, cones);
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

}  // namespace
}  // namespace alsim
