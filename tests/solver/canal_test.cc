// CANAL (engine/solver/canal) against independent answers, digest seed-004-subadmm-canal.md
// section 11: the proximal cone projection's cases and identities (test 2), the Jacobians against
// finite differences (test 4), grad h = r and the Hessian (24) (test 6), one outer iteration
// against a dual projected-gradient solve of the regularized problem (test 7), the sliding outer
// rate mu^2 / (1 + mu^2) (test 10), the incline's analytic velocity (test 12), agreement with
// SubADMM, No Sub and PGS (test 14), and determinism across thread counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <oneapi/tbb/global_control.h>
#include <Eigen/Dense>

#include "engine/core/parallel.h"
#include "engine/linalg/tree_sparse_layout.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/canal/canal_solver.h"
#include "engine/solver/canal/cone_operators.h"
#include "engine/solver/impulse_update.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/solver.h"
#include "tests/solver/canal_scenes.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

using namespace canal_scenes;  // NOLINT(build/namespaces): the shared scenes

// ---- the proximal projection (digest 4.4, test 2), alsim's order (normal, t1, t2) -------------

// The closest point of C = {||y_t|| <= mu y_n} to x, by plane geometry written independently of
// the library: in the half-plane of the normal and x_t's direction, the boundary ray has unit
// direction (1, mu) / sqrt(1 + mu^2); a point outside C projects onto that ray (or onto the apex
// when its component along the ray is negative).
Vec3 ReferenceProjection(const Vec3& x, double mu) {
  const double s = std::hypot(x[1], x[2]);
  if (s <= mu * x[0]) return x;
  const double along = (x[0] + mu * s) / std::sqrt(1 + mu * mu);  // (x_n, s) . ray direction
  if (along <= 0) return Vec3::Zero();
  const double n = along / std::sqrt(1 + mu * mu), t = mu * n;
  if (s == 0) return Vec3(n, 0, 0);
  return Vec3(n, t * x[1] / s, t * x[2] / s);
}

// Three draws from `distribution`, x then y then z (into locals: the arguments of Vec3's
// constructor are evaluated in no set order, and g++ and clang differ).
template <typename Distribution>
Vec3 DrawVec3(Distribution& distribution, std::mt19937& rng) {
  const double x = distribution(rng);
  const double y = distribution(rng);
  const double z = distribution(rng);
  return Vec3(x, y, z);
}

TEST(ProximalConeTest, DigestCases) {
  const double mu = 0.5;
  // The digest's (t1, t2, n) cases, reordered to (n, t1, t2).
  const Vec3 a = ProximalConeProjection(Vec3(1, 2, 0), mu);
  EXPECT_NEAR((a - Vec3(1.6, 0.8, 0)).norm(), 0, 1e-15);
  const Vec3 b = ProximalConeProjection(Vec3(-0.5, 2, 0), mu);
  EXPECT_NEAR((b - Vec3(0.4, 0.2, 0)).norm(), 0, 1e-15);
  EXPECT_EQ(ProximalConeProjection(Vec3(-1, 0, 0), mu), Vec3::Zero());
  EXPECT_EQ(ProximalConeProjection(Vec3(1, 0.1, 0), mu), Vec3(1, 0.1, 0));
  // Where the strict operator differs (digest 4.4): (2, 0, 1) -> (0.5, 0, 1) strict, and
  // (2, 0, -0.5) opens under the strict operator but slips under the proximal one.
  EXPECT_NEAR((StrictConeProjection(Vec3(1, 2, 0), mu) - Vec3(1, 0.5, 0)).norm(), 0, 1e-15);
  EXPECT_EQ(StrictConeProjection(Vec3(-0.5, 2, 0), mu), Vec3::Zero());
}

TEST(ProximalConeTest, RandomizedMoreauIdentities) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::uniform_real_distribution<double> friction(0.05, 2);
  double worst_complementarity = 0, worst_moreau = 0, worst_reference = 0;
  int closer = 0;
  for (int k = 0; k < 20000; ++k) {
    const double mu = friction(rng);
    const double scale = std::pow(10.0, 2 * uniform(rng));
    const Vec3 x = scale * DrawVec3(uniform, rng);
    const Vec3 y = ProximalConeProjection(x, mu);
    const Vec3 w = y - x;
    // y in C, w in C* = {mu ||w_t|| <= w_n}, y perp w, and w = Pi_{C*}(-x) (Moreau): C* is the
    // cone of friction 1 / mu.
    EXPECT_LE(std::hypot(y[1], y[2]), mu * y[0] + 1e-13 * scale);
    EXPECT_LE(mu * std::hypot(w[1], w[2]), w[0] + 1e-13 * scale);
    worst_complementarity = std::max(worst_complementarity, std::abs(y.dot(w)) / (scale * scale));
    worst_moreau = std::max(worst_moreau, (w - ProximalConeProjection(-x, 1 / mu)).norm() / scale);
    worst_reference = std::max(worst_reference, (y - ReferenceProjection(x, mu)).norm() / scale);
    // No point of C sampled at random is closer to x.
    const Vec3 other = ProximalConeProjection(scale * DrawVec3(uniform, rng), mu);
    if ((other - x).norm() < (y - x).norm() - 1e-12 * scale) ++closer;
  }
  EXPECT_LT(worst_complementarity, 1e-13);
  EXPECT_LT(worst_moreau, 1e-13);
  EXPECT_LT(worst_reference, 1e-14);
  EXPECT_EQ(closer, 0);
}

// ---- Jacobians (digest 5.4, test 4) ------------------------------------------------------------

Mat3 CentralDifference(const std::function<Vec3(const Vec3&)>& f, const Vec3& x, double h) {
  Mat3 J;
  for (int k = 0; k < 3; ++k) {
    Vec3 e = Vec3::Zero();
    e[k] = h;
    J.col(k) = (f(x + e) - f(x - e)) / (2 * h);
  }
  return J;
}

TEST(ProximalConeTest, JacobianMatchesFiniteDifferencesIsSymmetricWithEigenvaluesInZeroOne) {
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> uniform(0.1, 10);
  std::uniform_real_distribution<double> friction(0.05, 2);
  int counts[3] = {0, 0, 0};  // stick, slip, open
  double worst = 0, worst_strict = 0, asymmetry = 0;
  int strict_asymmetric = 0;
  for (int k = 0; k < 20000; ++k) {
    const double mu = friction(rng);
    const double magnitude = uniform(rng);
    const Vec3 x = magnitude * DrawVec3(normal, rng);
    const double s = std::hypot(x[1], x[2]);
    // Skip the kinks (the digest's 1e-3 margin) for the proximal operator.
    if (std::min(std::abs(s - mu * x[0]), std::abs(mu * s + x[0])) < 1e-3) continue;
    Mat3 D;
    ProximalConeProjection(x, mu, &D);
    const Mat3 fd =
        CentralDifference([&](const Vec3& p) { return ProximalConeProjection(p, mu); }, x, 1e-6);
    worst =
        std::max(worst, (D - fd).cwiseAbs().maxCoeff() / std::max(1.0, fd.cwiseAbs().maxCoeff()));
    asymmetry = std::max(asymmetry, (D - D.transpose()).cwiseAbs().maxCoeff());
    const Eigen::Vector3d eigenvalues = Eigen::SelfAdjointEigenSolver<Mat3>(D).eigenvalues();
    EXPECT_GE(eigenvalues.minCoeff(), -1e-14);
    EXPECT_LE(eigenvalues.maxCoeff(), 1 + 1e-14);
    const bool stick = s <= mu * x[0], open = mu * s <= -x[0];
    ++counts[stick ? 0 : open ? 2 : 1];
    // The strict operator's Jacobian (kinks: x_n = 0 and s = mu x_n).
    if (std::abs(x[0]) > 1e-3 && std::abs(s - mu * x[0]) > 1e-3) {
      const Mat3 strict = StrictConeJacobian(x, mu);
      const Mat3 strict_fd =
          CentralDifference([&](const Vec3& p) { return StrictConeProjection(p, mu); }, x, 1e-6);
      worst_strict = std::max(worst_strict, (strict - strict_fd).cwiseAbs().maxCoeff() /
                                                std::max(1.0, strict_fd.cwiseAbs().maxCoeff()));
      if (x[0] > 0 && s > mu * x[0] && (strict - strict.transpose()).norm() > 1e-3) {
        ++strict_asymmetric;
      }
    }
  }
  EXPECT_LT(worst, 1e-8);
  EXPECT_EQ(asymmetry, 0.0);
  EXPECT_LT(worst_strict, 1e-8);
  EXPECT_GT(strict_asymmetric, 1000);  // the strict slip Jacobian is not symmetric
  EXPECT_GT(counts[0], 1000);
  EXPECT_GT(counts[1], 5000);
  EXPECT_GT(counts[2], 1000);
  std::printf("[ jacobian ] stick %d slip %d open %d: prox vs FD %.1e, strict vs FD %.1e\n",
              counts[0], counts[1], counts[2], worst, worst_strict);
}

Constraint MakeRow(ConstraintType type, int dim) {
  Constraint c;
  c.type = type;
  c.dim = dim;
  return c;
}

// Hard, soft (with its clamp), dry friction (its box) and equality rows: D of each against finite
// differences of T, and T against finite differences of the potential psi.
TEST(CanalRowOperatorTest, DerivativesAndPotentialsOfHardSoftAndEqualityRows) {
  const double beta = 50;
  Constraint limit = MakeRow(ConstraintType::kLimit, 1);
  Constraint soft = MakeRow(ConstraintType::kSoft, 1);
  soft.soft_bias = 0.3;
  soft.soft_damping = 2.0;
  soft.lambda_lower = -0.5;
  soft.lambda_upper = 0.8;
  Constraint equality = MakeRow(ConstraintType::kEquality, 3);
  Constraint contact = MakeRow(ConstraintType::kContact, 3);
  contact.friction = 0.7;
  Constraint friction = MakeRow(ConstraintType::kFriction, 1);
  friction.lambda_lower = -1.5;
  friction.lambda_upper = 1.5;
  const double h = 1e-6;
  for (const Constraint* c : {&limit, &soft, &friction, &equality, &contact}) {
    for (const double x0 : {-40.0, -3.0, -0.2, 0.3, 2.0, 7.0, 40.0}) {
      double x[3] = {x0, 0.37 * x0 + 0.5, -0.61 * x0 + 0.2};
      double lambda[3], D[9];
      CanalConstraintImpulse(*c, beta, x, lambda, D);
      for (int k = 0; k < c->dim; ++k) {
        double plus[3] = {x[0], x[1], x[2]}, minus[3] = {x[0], x[1], x[2]};
        plus[k] += h;
        minus[k] -= h;
        double lp[3], lm[3];
        CanalConstraintImpulse(*c, beta, plus, lp, nullptr);
        CanalConstraintImpulse(*c, beta, minus, lm, nullptr);
        for (int r = 0; r < c->dim; ++r) {
          EXPECT_NEAR(D[c->dim * r + k], (lp[r] - lm[r]) / (2 * h), 1e-7)
              << static_cast<int>(c->type) << " x0 " << x0;
        }
        const double gradient =
            (CanalConstraintPotential(*c, beta, plus) - CanalConstraintPotential(*c, beta, minus)) /
            (2 * h);
        EXPECT_NEAR(gradient, lambda[k], 1e-6 * std::max(1.0, std::abs(lambda[k])))
            << static_cast<int>(c->type) << " x0 " << x0;
      }
    }
  }
  // The soft row, eq. (15) with u = -lambda^l (x = lambda^l - beta J v): inside the range
  // lambda = (b x - beta k e) / (b + beta), D = b / (b + beta); clamped: D = 0.
  double x = 10, lambda, D;
  CanalConstraintImpulse(soft, beta, &x, &lambda, &D);
  EXPECT_NEAR(lambda, (2.0 * 10 - 50 * 0.3) / 52, 1e-15);
  EXPECT_NEAR(D, 2.0 / 52, 1e-15);
  x = 100;
  CanalConstraintImpulse(soft, beta, &x, &lambda, &D);
  EXPECT_EQ(lambda, 0.8);
  EXPECT_EQ(D, 0.0);
  // Its fixed point lambda = lambda^l is eq. (4): lambda = -k e - b J v.
  const double jv = 0.1, fixed = -0.3 - 2.0 * 0.1;
  x = fixed - beta * jv;
  CanalConstraintImpulse(soft, beta, &x, &lambda, &D);
  EXPECT_NEAR(lambda, fixed, 1e-15);
  // The friction row projects onto its box: the identity inside, the nearer end outside. Its
  // potential is 1/2 x^2 inside and continues linearly (slope at the end) outside.
  x = 0.7;
  CanalConstraintImpulse(friction, beta, &x, &lambda, &D);
  EXPECT_EQ(lambda, 0.7);
  EXPECT_EQ(D, 1.0);
  EXPECT_EQ(CanalConstraintPotential(friction, beta, &x), 0.5 * 0.7 * 0.7);
  x = -4;
  CanalConstraintImpulse(friction, beta, &x, &lambda, &D);
  EXPECT_EQ(lambda, -1.5);
  EXPECT_EQ(D, 0.0);
  EXPECT_NEAR(CanalConstraintPotential(friction, beta, &x), 0.5 * 1.5 * 1.5 + 1.5 * (4 - 1.5),
              1e-15);
}

// ---- the potential h, its gradient r and Hessian (24) (test 6) ---------------------------------

// A random problem: SPD A (9 dofs), two contacts, a limit, a soft row, a friction row and an
// equality with random
// Jacobians, multipliers lambda^l and biases e~. h, r and H are written out here from the row
// operators, and compared with finite differences.
TEST(CanalPotentialTest, GradientIsTheResidualAndHessianIsItsJacobian) {
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0, 1);
  const int n = 9;
  const double beta = 30;
  std::vector<Constraint> rows;
  Constraint contact = MakeRow(ConstraintType::kContact, 3);
  contact.friction = 0.4;
  rows.push_back(contact);
  contact.friction = 1.2;
  rows.push_back(contact);
  rows.push_back(MakeRow(ConstraintType::kLimit, 1));
  Constraint soft = MakeRow(ConstraintType::kSoft, 1);
  soft.soft_bias = -0.2;
  soft.soft_damping = 5;
  soft.lambda_lower = -1;
  soft.lambda_upper = 1;
  rows.push_back(soft);
  Constraint friction = MakeRow(ConstraintType::kFriction, 1);
  friction.lambda_lower = -0.8;
  friction.lambda_upper = 0.8;
  rows.push_back(friction);
  rows.push_back(MakeRow(ConstraintType::kEquality, 3));
  int num_rows = 0;
  for (Constraint& c : rows) {
    c.row_adr = num_rows;
    num_rows += c.dim;
  }
  Eigen::MatrixXd G(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) G(i, j) = normal(rng);
  const Eigen::MatrixXd A = G * G.transpose() + Eigen::MatrixXd::Identity(n, n);
  Eigen::VectorXd b(n);
  for (int i = 0; i < n; ++i) b[i] = normal(rng);
  Eigen::MatrixXd J(num_rows, n);
  Eigen::VectorXd lambda_outer(num_rows), shifted(num_rows);
  for (int r = 0; r < num_rows; ++r) {
    for (int i = 0; i < n; ++i) J(r, i) = normal(rng);
    lambda_outer[r] = normal(rng);
    shifted[r] = 0.1 * normal(rng);
  }
  auto argument = [&](const Constraint& c, const Eigen::VectorXd& v, double* x) {
    for (int k = 0; k < c.dim; ++k) {
      const int r = c.row_adr + k;
      x[k] = lambda_outer[r] - beta * (J.row(r).dot(v) + shifted[r]);
    }
  };
  auto h = [&](const Eigen::VectorXd& v) {
    double value = 0.5 * v.dot(A * v) - b.dot(v);
    for (const Constraint& c : rows) {
      double x[3];
      argument(c, v, x);
      value += CanalConstraintPotential(c, beta, x) / beta;
    }
    return value;
  };
  auto r_and_H = [&](const Eigen::VectorXd& v, Eigen::MatrixXd* H) {
    Eigen::VectorXd r = A * v - b;
    if (H != nullptr) *H = A;
    for (const Constraint& c : rows) {
      double x[3], lambda[3], D[9];
      argument(c, v, x);
      CanalConstraintImpulse(c, beta, x, lambda, D);
      const Eigen::MatrixXd Jc = J.middleRows(c.row_adr, c.dim);
      const Eigen::Map<const Eigen::VectorXd> l(lambda, c.dim);
      r -= Jc.transpose() * l;
      if (H != nullptr) {
        const Eigen::Map<
            const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>
            Dc(D, c.dim, c.dim);
        *H += beta * Jc.transpose() * Dc * Jc;
      }
    }
    return r;
  };
  int trials = 0;
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::VectorXd v(n);
    for (int i = 0; i < n; ++i) v[i] = 0.05 * normal(rng);
    Eigen::MatrixXd H;
    const Eigen::VectorXd r = r_and_H(v, &H);
    Eigen::VectorXd gradient(n);
    Eigen::MatrixXd jacobian(n, n);
    const double step = 1e-7;
    for (int i = 0; i < n; ++i) {
      Eigen::VectorXd plus = v, minus = v;
      plus[i] += step;
      minus[i] -= step;
      gradient[i] = (h(plus) - h(minus)) / (2 * step);
      jacobian.col(i) = (r_and_H(plus, nullptr) - r_and_H(minus, nullptr)) / (2 * step);
    }
    // Skip a sample whose finite-difference stencil crosses a kink of some T_i.
    if ((jacobian - H).cwiseAbs().maxCoeff() > 1e-3 * H.cwiseAbs().maxCoeff()) continue;
    ++trials;
    EXPECT_LT((gradient - r).norm() / std::max(1.0, r.norm()), 1e-7) << trial;
    EXPECT_LT((jacobian - H).cwiseAbs().maxCoeff() / H.cwiseAbs().maxCoeff(), 1e-6) << trial;
    EXPECT_LT((H - H.transpose()).cwiseAbs().maxCoeff(), 1e-14 * H.cwiseAbs().maxCoeff());
    EXPECT_EQ(Eigen::LLT<Eigen::MatrixXd>(H).info(), Eigen::Success);
    EXPECT_GE(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(H - A).eigenvalues().minCoeff(),
              -1e-9 * H.norm());  // beta sum J^T D J is PSD
  }
  EXPECT_GE(trials, 40);
}

// ---- one box on an incline (tests 7, 10, 12) ---------------------------------------------------

StepOptions CanalOptions(int max_iterations, double tolerance,
                         const CanalParameters& parameters = CanalParameters()) {
  StepOptions options;
  options.solver.canal = parameters;
  options.solver.type = SolverType::kCanal;
  options.solver.max_iterations = max_iterations;
  options.solver.tolerance = tolerance;
  return options;
}

CanalSolver& InstallCanal(const Model& m, Data& d) {
  EXPECT_TRUE(EnsureSolver(m, d, SolverType::kCanal));
  return static_cast<CanalSolver&>(*d.solver);
}

// The regularized Anitescu problem with compliance R = diag(1 / beta_i) (digest 5.9):
//   min_{lambda in C} 1/2 lambda^T (W + R) lambda + lambda^T (J v_free + e),
//   W = J A^{-1} J^T, v_hat = v_free + A^{-1} J^T lambda,
// beta_i = beta (CanalPenalty::kUniform) or beta m_i, m_i = 3 / trace(W_ii) from the dense W
// (kEffectiveMass),
// solved by accelerated projected gradient (FISTA with adaptive restart) on the dual, with the
// projection ReferenceProjection above. Contacts only.
Eigen::VectorXd RegularizedDualSolve(const Model& m, const Data& d, double beta,
                                     CanalPenalty penalty) {
  const ConstraintSet& set = d.constraints;
  const int nc = static_cast<int>(set.constraints.size());
  JointSpaceJacobian jacobian;
  jacobian.Reserve(m, nc);
  jacobian.Layout(m, d);
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(set.num_rows, m.nv);
  for (int i = 0; i < nc; ++i) {
    jacobian.Fill(m, d, i);
    const Constraint& c = set.constraints[i];
    EXPECT_EQ(c.type, ConstraintType::kContact);
    for (int e = jacobian.entry_adr[i]; e < jacobian.entry_adr[i] + jacobian.entry_num[i]; ++e)
      for (int r = 0; r < c.dim; ++r) J(c.row_adr + r, jacobian.dof[e]) = jacobian.value[e][r];
  }
  const Eigen::MatrixXd A = TreeSparseToDense(d.mass_layout, d.qA.data());
  const Eigen::LLT<Eigen::MatrixXd> llt(A);
  const Eigen::VectorXd v_free = Eigen::Map<const Eigen::VectorXd>(d.v_free.data(), m.nv);
  const Eigen::VectorXd e = Eigen::Map<const Eigen::VectorXd>(set.bias.data(), set.num_rows);
  Eigen::MatrixXd M = J * llt.solve(J.transpose());
  for (const Constraint& c : set.constraints) {
    const double scale =
        penalty == CanalPenalty::kUniform ? 1.0 : 3.0 / M.block<3, 3>(c.row_adr, c.row_adr).trace();
    for (int r = 0; r < 3; ++r) M(c.row_adr + r, c.row_adr + r) += 1.0 / (beta * scale);
  }
  const Eigen::VectorXd q = J * v_free + e;
  const double L = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M).eigenvalues().maxCoeff();
  auto project = [&](const Eigen::VectorXd& y) {
    Eigen::VectorXd p(y.size());
    for (const Constraint& c : set.constraints) {
      p.segment<3>(c.row_adr) = ReferenceProjection(y.segment<3>(c.row_adr), c.friction);
    }
    return p;
  };
  Eigen::VectorXd lambda = Eigen::VectorXd::Zero(set.num_rows), previous = lambda, y = lambda;
  double t = 1;
  for (int k = 0; k < 200000; ++k) {
    const Eigen::VectorXd next = project(y - (M * y + q) / L);
    if ((y - next).dot(next - lambda) > 0) {  // restart when the momentum points uphill
      t = 1;
      y = lambda;
      continue;
    }
    const double t_next = 0.5 * (1 + std::sqrt(1 + 4 * t * t));
    previous = lambda;
    lambda = next;
    y = lambda + (t - 1) / t_next * (lambda - previous);
    t = t_next;
    if ((lambda - previous).norm() < 1e-17) break;
  }
  const Eigen::VectorXd residual = lambda - project(lambda - (M * lambda + q) / L);
  EXPECT_LT(residual.norm(), 1e-15);
  return v_free + llt.solve(J.transpose() * lambda);
}

TEST(CanalTest, OneOuterIterationFromZeroIsTheRegularizedConvexProblem) {
  const auto model = Load(BoxOnIncline(30, 0.3));
  const struct {
    CanalPenalty penalty;
    double beta;
  } cases[] = {{CanalPenalty::kUniform, 1e2},
               {CanalPenalty::kUniform, 1e4},
               {CanalPenalty::kEffectiveMass, 1},
               {CanalPenalty::kEffectiveMass, 1e2}};
  for (const auto& [penalty, beta] : cases) {
    Data d(*model);  // from rest, no warm start: u^0 = z^0 = 0
    CanalParameters parameters;
    parameters.penalty = penalty;
    parameters.beta0 = parameters.relative_beta0 = beta;
    parameters.newton_tolerance = 1e-14;
    InstallCanal(*model, d);
    ASSERT_EQ(Step(*model, d, CanalOptions(1, 0, parameters)), StepStatus::kOk);
    ASSERT_EQ(d.constraints.num_contacts, 4);
    EXPECT_EQ(d.solver_statistics.max_iterations, 1);
    const Eigen::VectorXd reference = RegularizedDualSolve(*model, d, beta, penalty);
    double difference = 0;
    for (int i = 0; i < model->nv; ++i) {
      difference = std::max(difference, std::abs(d.v_hat[i] - reference[i]));
    }
    const char* name = CanalPenaltyName(penalty);
    EXPECT_LT(difference, 1e-12) << name << " beta " << beta;
    // The Anitescu "hover" of one outer iteration: the sliding box leaves the incline's surface
    // with a normal speed near mu ||v_t||, once the compliance 1 / beta_i is small beside W
    // (not at beta_i = m_i, where the soft contacts let the box sink).
    const Vec3 normal(std::sin(kPi / 6), 0, std::cos(kPi / 6));
    const Vec3 v(d.v_hat[0], d.v_hat[1], d.v_hat[2]);
    const double normal_speed = v.dot(normal), tangent_speed = (v - normal_speed * normal).norm();
    if (beta >= 100) {
      EXPECT_GT(normal_speed, 0.5 * 0.3 * tangent_speed);
    }
    std::printf(
        "[ one outer ] %s beta %.0e: |v_hat - dual solve| %.1e, hover %.3e m/s (mu |v_t| "
        "%.3e)\n",
        name, beta, difference, normal_speed, 0.3 * tangent_speed);
  }
}

TEST(CanalTest, SlidingBoxConvergesAtTheRateMuSquaredOverOnePlusMuSquared) {
  // Inclines steep enough for each mu to slide (tan a > mu).
  // (mu = 1 has the rate 0.5 = zeta, where the schedule (27) raises beta on rounding noise.)
  // The rate holds once beta_i is large beside the effective mass: the paper's beta0 = 1e4 kg on
  // this 1 kg box, or 1e4 effective masses.
  const double cases[][2] = {{0.3, 30}, {0.6, 45}};
  // Plain outer iterations (no Anderson extrapolation), as the paper's.
  CanalParameters relative;
  relative.relative_beta0 = 1e4;
  relative.anderson_memory = 0;
  CanalParameters uniform = relative;
  uniform.penalty = CanalPenalty::kUniform;
  for (const CanalParameters& parameters : {relative, uniform}) {
    for (const auto& [mu, degrees] : cases) {
      const auto model = Load(BoxOnIncline(degrees, mu));
      Data d(*model);
      CanalSolver& solver = InstallCanal(*model, d);
      solver.set_record_history(true);
      ASSERT_EQ(Step(*model, d, CanalOptions(30, 1e-13, parameters)), StepStatus::kOk);
      const std::vector<CanalOuterRecord>& history = solver.history();
      const double expected = mu * mu / (1 + mu * mu);
      int checked = 0;
      // ||lambda^{l+1} - lambda^l|| = beta ||J v - z||: the AL residual divided by beta, which the
      // schedule (27) raises at mu = 1 (ratio 0.5 = zeta), without changing the impulses' rate.
      auto impulse_change = [&](size_t l) { return history[l].al_residual * history[l].beta; };
      for (size_t l = 2; l < history.size(); ++l) {
        if (history[l].al_residual < 1e-10) break;
        const double ratio = impulse_change(l) / impulse_change(l - 1);
        EXPECT_NEAR(ratio, expected, 0.01 * expected) << "mu " << mu << " iteration " << l;
        ++checked;
      }
      EXPECT_GE(checked, 2);
      EXPECT_TRUE(solver.island_statistics()[0].converged);
      // Converged, the box slides on the surface (no hover).
      const double a = degrees * kPi / 180;
      const Vec3 normal(std::sin(a), 0, std::cos(a));
      EXPECT_LT(std::abs(Vec3(d.v_hat[0], d.v_hat[1], d.v_hat[2]).dot(normal)), 1e-12);
      std::printf("[ outer rate ] %s penalty, mu %.1f: expected %.4f, residuals",
                  CanalPenaltyName(parameters.penalty), mu, expected);
      for (const CanalOuterRecord& record : history) {
        std::printf(" %.2e+%.2e", record.al_residual, record.desaxce_change);
      }
      std::printf("\n              ratios");
      for (size_t l = 1; l < history.size(); ++l) {
        std::printf(" %.4f", impulse_change(l) / impulse_change(l - 1));
      }
      std::printf("\n              Newton steps per outer iteration:");
      for (const CanalOuterRecord& record : history) std::printf(" %d", record.newton_steps);
      std::printf("\n");
    }
  }
}

// Anderson acceleration (CanalParameters::anderson_memory) extrapolates the outer iterates: the
// sliding box's cascade is linear at the rate mu^2 / (1 + mu^2), so a short history finds its
// fixed point in far fewer outer iterations, at the same velocity.
TEST(CanalTest, AndersonAccelerationReachesTheSameVelocityInFewerOuterIterations) {
  const auto model = Load(BoxOnIncline(45, 0.6));
  std::vector<double> plain_v;
  int plain_outer = 0;
  for (const int memory : {0, 3}) {
    Data d(*model);
    CanalParameters parameters;
    parameters.anderson_memory = memory;
    CanalSolver& solver = InstallCanal(*model, d);
    ASSERT_EQ(Step(*model, d, CanalOptions(100, 1e-12, parameters)), StepStatus::kOk);
    EXPECT_TRUE(solver.island_statistics()[0].converged) << memory;
    const int outer = solver.statistics().outer_iterations;
    std::printf("[ anderson ] memory %d: %d outer iterations\n", memory, outer);
    if (memory == 0) {
      plain_v = d.v_hat;
      plain_outer = outer;
      continue;
    }
    EXPECT_LT(2 * outer, plain_outer);
    for (int i = 0; i < model->nv; ++i) EXPECT_NEAR(d.v_hat[i], plain_v[i], 1e-11) << i;
  }
}

// Table III's 27 quadrupeds dropped on the floor, 27 islands of feet and bodies whose contacts
// differ in effective mass, stepped by CANAL with its defaults to tolerance 1e-8: every step meets
// the Sec. VII metric at 1e-8. (With the paper's single beta, 16% of the steps do not and one
// island's De Saxce cascade diverges near step 296 without the damping.)
TEST(CanalTest, EveryStepOfTheQuadrupedDropMeetsTheTolerance) {
  const ModelImport imported = ImportModelFromFile(ALSIM_SCENES_DIR "/quadruped_drop_27.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  const StepOptions options = CanalOptions(100, 1e-8);
  int contact_steps = 0;
  double worst = 0;
  for (int k = 0; k < 300; ++k) {
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << k;
    if (d.solver_statistics.contacts == 0) continue;
    ++contact_steps;
    worst = std::max(worst, d.solver_statistics.contact_residual);
    EXPECT_LE(d.solver_statistics.contact_residual, 1e-8) << "step " << k;
  }
  EXPECT_GE(contact_steps, 250);
  std::printf("[ quadrupeds ] %d steps with contacts, largest residual %.1e\n", contact_steps,
              worst);
}

// A pile of 100 spheres (scenes/ball_pile.xml) after 110 SubADMM steps, stepped on by CANAL: at
// the 18th step a sliding contact's speed grows with its own De Saxce term, so the cascade stalls
// above 1e-6 however long it runs (canal_parameters.h); SubADMM then finishes the island from
// CANAL's impulses and every step of the window meets the Sec. VII metric at 1e-8.
TEST(CanalTest, AStalledDeSaxceCascadeIsFinishedBySubAdmm) {
  const ModelImport imported = ImportModelFromFile(ALSIM_SCENES_DIR "/ball_pile.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  StepOptions settle;
  settle.solver.type = SolverType::kSubAdmm;
  settle.solver.max_iterations = 2000;
  settle.solver.tolerance = 1e-10;
  for (int k = 0; k < 110; ++k) ASSERT_EQ(Step(m, d, settle), StepStatus::kOk) << k;
  CanalSolver& solver = InstallCanal(m, d);
  const StepOptions options = CanalOptions(100, 1e-8);
  for (int k = 0; k < 17; ++k) {
    ASSERT_EQ(Step(m, d, options), StepStatus::kOk) << k;
    EXPECT_LE(d.solver_statistics.contact_residual, 1e-8) << "step " << k;
  }
  const std::string before = SaveStateSnapshot(m, d);
  // Without the fallback the loop runs to its cap and stops short.
  CanalParameters plain;
  plain.subadmm_fallback_iterations = 0;
  ASSERT_EQ(Step(m, d, CanalOptions(100, 1e-8, plain)), StepStatus::kOk);
  const double stalled = d.solver_statistics.contact_residual;
  EXPECT_GT(stalled, 1e-6);
  EXPECT_EQ(solver.statistics().subadmm_fallbacks, 0);
  EXPECT_EQ(solver.statistics().max_outer_iterations, 100);
  std::string error;
  ASSERT_TRUE(RestoreStateSnapshot(m, before, d, &error)) << error;
  ASSERT_EQ(Step(m, d, options), StepStatus::kOk);
  EXPECT_LE(d.solver_statistics.contact_residual, 1e-8);
  EXPECT_EQ(solver.statistics().subadmm_fallbacks, 1);
  EXPECT_TRUE(solver.island_statistics()[0].stalled);
  EXPECT_GT(solver.island_statistics()[0].subadmm_iterations, 0);
  EXPECT_LT(solver.statistics().max_outer_iterations, 100);
  std::printf(
      "[ stalled cascade ] step 17: %.1e at CANAL's cap; %.1e after %d outer iterations "
      "and %d of SubADMM\n",
      stalled, d.solver_statistics.contact_residual, solver.island_statistics()[0].outer_iterations,
      solver.island_statistics()[0].subadmm_iterations);
}

TEST(CanalTest, BoxOnInclineSlidesWithTheCoulombVelocity) {
  // mu = 0.3 < tan 30: from rest, one step gives h g (sin 30 - mu cos 30) = 0.0098179 m/s down
  // the incline (the digest's 0.0098177, truncated), the normal impulse m g cos 30 h and a
  // friction impulse of mu times it.
  const double mu = 0.3;
  const double expected = kStep * kGravity * (std::sin(kPi / 6) - mu * std::cos(kPi / 6));
  EXPECT_NEAR(expected, 0.0098179, 1e-7);
  const auto model = Load(BoxOnIncline(30, mu));
  Data d(*model);
  ASSERT_EQ(Step(*model, d, CanalOptions(100, 1e-12)), StepStatus::kOk);
  ASSERT_EQ(d.constraints.num_contacts, 4);
  const Vec3 downhill(std::cos(kPi / 6), 0, -std::sin(kPi / 6));
  const Vec3 velocity(d.qvel[0], d.qvel[1], d.qvel[2]);
  EXPECT_NEAR(velocity.dot(downhill), expected, 1e-10);
  EXPECT_LT((velocity - downhill * velocity.dot(downhill)).norm(), 1e-10);
  EXPECT_LT(Vec3(d.qvel[3], d.qvel[4], d.qvel[5]).norm(), 1e-9);
  double normal_impulse = 0;
  Vec3 friction = Vec3::Zero();
  for (const Constraint& c : d.constraints.constraints) {
    const double* lambda = d.constraints.lambda.data() + c.row_adr;
    const Mat3& frame = d.contact[c.contact].frame;
    normal_impulse += lambda[0];
    friction += frame.col(1) * lambda[1] + frame.col(2) * lambda[2];
  }
  EXPECT_NEAR(normal_impulse, kGravity * std::cos(kPi / 6) * kStep, 1e-10);
  EXPECT_NEAR(friction.norm(), mu * normal_impulse, 1e-10);
  EXPECT_LT(d.solver_statistics.contact_residual, 1e-10);
}

TEST(CanalTest, StickingBoxConvergesInAtMostThreeOuterIterations) {
  // The paper's beta0 = 1e4 kg on this 1 kg box, or 1e4 effective masses.
  // Plain outer iterations (no Anderson extrapolation), as the paper's.
  CanalParameters relative;
  relative.relative_beta0 = 1e4;
  relative.anderson_memory = 0;
  CanalParameters uniform = relative;
  uniform.penalty = CanalPenalty::kUniform;
  for (const CanalParameters& parameters : {relative, uniform}) {
    for (const double degrees : {0.0, 30.0}) {
      const auto model = Load(BoxOnIncline(degrees, 0.8));
      Data d(*model);
      CanalSolver& solver = InstallCanal(*model, d);
      ASSERT_EQ(Step(*model, d, CanalOptions(30, 1e-11, parameters)), StepStatus::kOk);
      const char* name = CanalPenaltyName(parameters.penalty);
      EXPECT_LE(solver.statistics().max_outer_iterations, 3) << name << " " << degrees;
      EXPECT_LT(solver.statistics().al_residual, 1e-11) << name << " " << degrees;
      EXPECT_LT(Vec3(d.qvel[0], d.qvel[1], d.qvel[2]).norm(), 1e-10) << name << " " << degrees;
    }
  }
}

// ---- agreement with the other solvers (test 14) ------------------------------------------------

std::vector<double> ConvergedVelocity(const Model& m, const Data& settled, SolverType type,
                                      SolverStatistics* stats) {
  Data d(m);
  d.qpos = settled.qpos;
  d.qvel = settled.qvel;
  StepOptions options;
  options.solver.type = type;
  options.solver.tolerance = type == SolverType::kCanal ? 1e-13 : 1e-14;
  options.solver.max_iterations = type == SolverType::kCanal ? 100 : 100000;
  EXPECT_EQ(Step(m, d, options), StepStatus::kOk) << SolverName(type);
  *stats = d.solver_statistics;
  return d.v_hat;
}

TEST(CanalTest, AgreesWithSubAdmmNoSubAndPgsOnAThreePointStack) {
  const auto model = Load(kThreePointStack);
  const Model& m = *model;
  Data settled(m);
  for (int k = 0; k < 60; ++k) ASSERT_EQ(Step(m, settled), StepStatus::kOk);
  // The upper box slides and spins over the lower one, which sticks to the floor: slip and stick
  // contacts together. (With both boxes sliding, heavy over light, the lagged De Saxce term's
  // outer loop does not contract: digest 5.9 warns that mu^2 / (1 + mu^2) is a one-contact rate.)
  const double lower[6] = {0, 0, 0, 0, 0, 0};
  const double upper[6] = {-0.2, 0.3, 0.0, 0.0, 0.0, -1.0};
  for (int k = 0; k < 6; ++k) {
    settled.qvel[k] = lower[k];
    settled.qvel[6 + k] = upper[k];
  }
  SolverStatistics canal_stats;
  const std::vector<double> canal = ConvergedVelocity(m, settled, SolverType::kCanal, &canal_stats);
  EXPECT_EQ(canal_stats.contacts, 6);
  // The Sec. VII metric reads v_hat back from the impulses, A^{-1} (b + J^T lambda), so it also
  // sees the Newton residual (1e-10 N s) through the 0.1 kg box.
  EXPECT_LT(canal_stats.contact_residual, 1e-8);
  for (const SolverType type : {SolverType::kSubAdmm, SolverType::kAdmmNoSub, SolverType::kPgs}) {
    SolverStatistics stats;
    const std::vector<double> other = ConvergedVelocity(m, settled, type, &stats);
    double difference = 0;
    for (int i = 0; i < m.nv; ++i) difference = std::max(difference, std::abs(other[i] - canal[i]));
    EXPECT_LT(difference, 1e-10) << SolverName(type);
    std::printf("[ agree ] %-11s |v_hat - canal| %.1e, residual %.1e, %d iterations\n",
                SolverName(type), difference, stats.contact_residual, stats.max_iterations);
  }
  std::printf("[ agree ] canal residual %.1e, %d outer iterations\n", canal_stats.contact_residual,
              canal_stats.max_iterations);
}

TEST(CanalTest, AgreesWithSubAdmmOnEveryRowType) {
  const auto model = Load(kEveryRowType);
  const Model& m = *model;
  Data settled(m);
  settled.qvel[1] = 0.5;   // elbow
  settled.qvel[2] = -0.3;  // wrist
  SolverStatistics canal_stats, subadmm_stats;
  const std::vector<double> canal = ConvergedVelocity(m, settled, SolverType::kCanal, &canal_stats);
  const std::vector<double> subadmm =
      ConvergedVelocity(m, settled, SolverType::kSubAdmm, &subadmm_stats);
  Data probe(m);
  probe.qvel = settled.qvel;
  ASSERT_EQ(Step(m, probe, CanalOptions(100, 1e-13)), StepStatus::kOk);
  int types[4] = {0, 0, 0, 0};
  for (const Constraint& c : probe.constraints.constraints) ++types[static_cast<int>(c.type)];
  EXPECT_GE(types[static_cast<int>(ConstraintType::kContact)], 2);
  EXPECT_EQ(types[static_cast<int>(ConstraintType::kLimit)], 1);
  EXPECT_EQ(types[static_cast<int>(ConstraintType::kSoft)], 2);
  EXPECT_EQ(types[static_cast<int>(ConstraintType::kEquality)], 1);
  // The wrist servo's range clamps.
  bool clamped = false;
  for (const Constraint& c : probe.constraints.constraints) {
    if (c.type == ConstraintType::kSoft) {
      const double lambda = probe.constraints.lambda[c.row_adr];
      clamped |= lambda == c.lambda_lower || lambda == c.lambda_upper;
    }
  }
  EXPECT_TRUE(clamped);
  double difference = 0;
  for (int i = 0; i < m.nv; ++i) difference = std::max(difference, std::abs(subadmm[i] - canal[i]));
  EXPECT_LT(difference, 1e-9);
  EXPECT_LT(canal_stats.contact_residual, 1e-10);
  std::printf("[ rows ] |v_hat - subadmm| %.1e, residuals canal %.1e subadmm %.1e\n", difference,
              canal_stats.contact_residual, subadmm_stats.contact_residual);
}

// ---- determinism, statistics, allocations ------------------------------------------------------

std::vector<double> QposAfterFortySteps(const Model& m, int threads) {
  Data d(m);
  for (int k = 0; k < m.nv; ++k) d.qvel[k] = 0.1 * std::sin(1.0 + k);
  RunWithThreads(threads, [&] {
    for (int n = 0; n < 40; ++n) EXPECT_EQ(Step(m, d, CanalOptions(30, 1e-10)), StepStatus::kOk);
  });
  EXPECT_GE(d.islands.num, 3);
  return d.qpos;
}

TEST(CanalTest, BitIdenticalForOneAndTwoThreads) {
  const auto model = Load(SeveralIslands());
  const std::vector<double> one = QposAfterFortySteps(*model, 1);
  const std::vector<double> two = QposAfterFortySteps(*model, 2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0);
}

TEST(CanalTest, StatisticsCountTheWork) {
  const auto model = Load(kThreePointStack);
  Data d(*model);
  CanalSolver& solver = InstallCanal(*model, d);
  for (int k = 0; k < 60; ++k) ASSERT_EQ(Step(*model, d, CanalOptions(30, 1e-10)), StepStatus::kOk);
  d.qvel[6] = 0.2;  // the upper box slides
  solver.set_record_history(true);
  ASSERT_EQ(Step(*model, d, CanalOptions(30, 1e-10)), StepStatus::kOk);
  const CanalStatistics& stats = solver.statistics();
  EXPECT_EQ(stats.islands, d.islands.num);
  EXPECT_GE(stats.outer_iterations, 1);
  EXPECT_EQ(stats.max_outer_iterations, d.solver_statistics.max_iterations);
  EXPECT_EQ(stats.factorizations, stats.newton_steps);  // one numeric factorization per step
  EXPECT_GE(stats.line_search_iterations, 2 * stats.newton_steps);
  int steps = 0;
  for (const CanalOuterRecord& record : solver.history()) steps += record.newton_steps;
  EXPECT_EQ(steps, stats.newton_steps);
  EXPECT_EQ(stats.failed_factorizations, 0);
  EXPECT_LT(stats.al_residual + stats.desaxce_change, 1e-10);
  EXPECT_EQ(d.solver_statistics.primal_residual, stats.al_residual + stats.desaxce_change);
  EXPECT_EQ(d.solver_statistics.dual_residual, stats.newton_residual);
  EXPECT_GE(d.solver_statistics.contacts, 6);
}

TEST(CanalTest, IterationCapDeadlineAndInterruptStopTheOuterLoop) {
  const auto model = Load(kThreePointStack);
  Data settled(*model);
  for (int k = 0; k < 60; ++k) ASSERT_EQ(Step(*model, settled), StepStatus::kOk);
  settled.qvel[6] = 0.2;  // the upper box slides: several outer iterations
  Data capped(*model);
  capped.qpos = settled.qpos;
  capped.qvel = settled.qvel;
  ASSERT_EQ(Step(*model, capped, CanalOptions(2, 0)), StepStatus::kOk);
  EXPECT_EQ(capped.solver_statistics.max_iterations, 2);
  Data late(*model);
  late.qpos = settled.qpos;
  late.qvel = settled.qvel;
  StepOptions options = CanalOptions(100, 0);
  options.solver.time_budget_us = 1e-3;
  ASSERT_EQ(Step(*model, late, options), StepStatus::kOk);
  EXPECT_EQ(late.solver_statistics.max_iterations, 1);
  // A budget shorter than the setup still takes one Newton step: the contacts push back on the
  // boxes, which are not left at v_free (free fall, v_z = -g h).
  for (const int dof : {2, 8}) {
    EXPECT_GT(late.v_hat[dof], late.v_free[dof] + 0.1 * 9.81 * model->timestep) << dof;
  }
  Data interrupted(*model);
  interrupted.qpos = settled.qpos;
  interrupted.qvel = settled.qvel;
  const std::atomic<bool> stop(true);
  options = CanalOptions(100, 0);
  options.solver.interrupt = &stop;
  ASSERT_EQ(Step(*model, interrupted, options), StepStatus::kOk);
  EXPECT_EQ(interrupted.solver_statistics.max_iterations, 1);
}

// Once warm, CANAL's own storage allocates nothing (counted on the calling thread with TBB held to
// one thread; CHOLMOD allocates with malloc, which is not counted: cholmod_llt.h).
TEST(CanalTest, AWarmStepAllocatesNothingOfItsOwn) {
  const auto model = Load(SeveralIslands());
  const tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, 1);
  Data d(*model);
  const StepOptions options = CanalOptions(30, 1e-8);
  for (int n = 0; n < 20; ++n) Step(*model, d, options);
  const testing::AllocationCounter allocations;
  for (int n = 0; n < 20; ++n) Step(*model, d, options);
  EXPECT_EQ(allocations.count(), 0);
}

TEST(CanalTest, NameParsesAndMakesTheSolver) {
  SolverType type = SolverType::kSubAdmm;
  ASSERT_TRUE(ParseSolverName("canal", &type));
  EXPECT_EQ(type, SolverType::kCanal);
  EXPECT_STREQ(SolverName(SolverType::kCanal), "canal");
  const auto model = Load(kThreePointStack);
  const auto solver = CreateSolver(SolverType::kCanal, *model);
  ASSERT_NE(dynamic_cast<CanalSolver*>(solver.get()), nullptr);
}

}  // namespace
}  // namespace alsim
