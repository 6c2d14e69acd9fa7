// The non-smooth Newton solver's linear solvers (engine/solver/nsn/conjugate_residual.h; issue 48,
// digest seed-002-nsn.md section 14 test 7 and section 5.3): Conjugate Residual's iterates equal
// MINRES's (Eigen's, and a minimal-residual reference over an explicit Krylov basis), with the
// Jacobi preconditioner in the norm ||r||_{P^-1} it minimizes; that norm is monotone on SPD and on
// a near-singular contact matrix; exact solves in n iterations; PCG's residual is not monotone
// where CR's is (Fig 11); the Jacobi and Gauss-Seidel ablations; no allocation once sized.
#include "engine/solver/nsn/conjugate_residual.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <unsupported/Eigen/IterativeSolvers>
#include <vector>

#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;

// A random SPD matrix Q diag(lambda) Q^T with eigenvalues log-spaced in [1, condition], its rows
// and columns then scaled by random factors in [0.1, 10] (so that Jacobi has something to do).
MatrixXd RandomSpd(int n, double condition, std::mt19937_64& rng, bool scale_rows = true) {
  std::normal_distribution<double> normal;
  MatrixXd g(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) g(i, j) = normal(rng);
  }
  const MatrixXd q = Eigen::HouseholderQR<MatrixXd>(g).householderQ();
  VectorXd eigenvalues(n);
  for (int i = 0; i < n; ++i) {
    eigenvalues[i] = std::pow(condition, n == 1 ? 0.0 : static_cast<double>(i) / (n - 1));
  }
  MatrixXd a = q * eigenvalues.asDiagonal() * q.transpose();
  if (scale_rows) {
    std::uniform_real_distribution<double> exponent(-1, 1);
    VectorXd s(n);
    for (int i = 0; i < n; ++i) s[i] = std::pow(10.0, exponent(rng));
    a = s.asDiagonal() * a * s.asDiagonal();
  }
  return 0.5 * (a + a.transpose());
}

VectorXd RandomVector(int n, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = normal(rng);
  return v;
}

// A box's contact matrix: 8 corner contacts with a normal and two tangent rows each (24 rows, 6
// dofs, so rank 6), A = J M^-1 J^T + eps I with eps = 1e-6 (digest 5.5): symmetric positive
// definite, but with 18 eigenvalues at eps, as the redundant rows of a box on a plane make it.
// With `compliance` > 0 each tangent row gets a random C entry in [0, compliance] times the
// normal rows' diagonal (the W / h of sliding contacts), which spreads the clustered spectrum.
MatrixXd ContactMatrix(double mass, double eps, double compliance = 0, std::uint64_t seed = 0) {
  const Eigen::Vector3d half(0.3, 0.2, 0.1);
  const Eigen::Vector3d inertia(mass / 3 * (half.y() * half.y() + half.z() * half.z()),
                                mass / 3 * (half.x() * half.x() + half.z() * half.z()),
                                mass / 3 * (half.x() * half.x() + half.y() * half.y()));
  MatrixXd j(24, 6);
  const Eigen::Vector3d axes[3] = {Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitX(),
                                   Eigen::Vector3d::UnitY()};
  int row = 0;
  for (int corner = 0; corner < 8; ++corner) {
    const Eigen::Vector3d p((corner & 1 ? 1 : -1) * half.x(), (corner & 2 ? 1 : -1) * half.y(),
                            (corner & 4 ? 1 : -1) * half.z());
    for (const Eigen::Vector3d& axis : axes) {
      j.block<1, 3>(row, 0) = axis.transpose();           // linear velocity
      j.block<1, 3>(row, 3) = p.cross(axis).transpose();  // angular velocity
      ++row;
    }
  }
  VectorXd inverse_mass(6);
  inverse_mass << 1 / mass, 1 / mass, 1 / mass, 1 / inertia.x(), 1 / inertia.y(), 1 / inertia.z();
  MatrixXd a = j * inverse_mass.asDiagonal() * j.transpose() + eps * MatrixXd::Identity(24, 24);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < 24; ++i) {
    if (i % 3 != 0) a(i, i) += compliance * a(0, 0) * unit(rng);
  }
  return 0.5 * (a + a.transpose());
}

// y = A x over a dense matrix, in index order (no Eigen kernel: nothing allocated, same bits).
struct DenseOperator {
  const MatrixXd* a;
  void operator()(const double* x, double* y) const {
    const int n = static_cast<int>(a->rows());
    for (int i = 0; i < n; ++i) {
      double sum = 0;
      for (int j = 0; j < n; ++j) sum += (*a)(i, j) * x[j];
      y[i] = sum;
    }
  }
};

struct DenseRows {
  const MatrixXd* a;
  double operator()(int i, const double* x) const {
    const int n = static_cast<int>(a->rows());
    double sum = 0;
    for (int j = 0; j < n; ++j) sum += (*a)(i, j) * x[j];
    return sum;
  }
};

enum class Method { kConjugateResidual, kConjugateGradient, kJacobi, kGaussSeidel };

// One solve of A x = b by `method` from x0 = 0.
KrylovResult Solve(Method method, const MatrixXd& a, const VectorXd& b, bool precondition,
                   const KrylovOptions& options, KrylovWorkspace* workspace, VectorXd* x,
                   ResidualHistory* history = nullptr) {
  const int n = static_cast<int>(a.rows());
  x->resize(n);
  const VectorXd diagonal = a.diagonal();
  const double* d = precondition ? diagonal.data() : nullptr;
  DenseOperator op{&a};
  DenseRows rows{&a};
  switch (method) {
    case Method::kConjugateResidual:
      return JacobiConjugateResidual(op, d, b.data(), n, options, workspace, x->data(), history);
    case Method::kConjugateGradient:
      return JacobiConjugateGradient(op, d, b.data(), n, options, workspace, x->data(), history);
    case Method::kJacobi:
      return JacobiIteration(op, diagonal.data(), b.data(), n, options, workspace, x->data(),
                             history);
    case Method::kGaussSeidel:
      return GaussSeidelIteration(rows, diagonal.data(), b.data(), n, options, workspace, x->data(),
                                  history);
  }
  return {};
}

// ||v||_{P^-1} with P = diag(A) (or I).
double PreconditionedNorm(const MatrixXd& a, const VectorXd& v, bool precondition) {
  return precondition ? std::sqrt(v.dot(a.diagonal().cwiseInverse().asDiagonal() * v)) : v.norm();
}

// The minimal-residual reference: argmin ||b - A x||_{P^-1} over x in K_k(P^-1 A, P^-1 b), from
// an orthonormal basis of the Krylov space (Gram-Schmidt, twice) and a least-squares solve.
VectorXd MinimalResidualIterate(const MatrixXd& a, const VectorXd& b, int k, bool precondition) {
  const int n = static_cast<int>(a.rows());
  const VectorXd p_inverse =
      precondition ? VectorXd(a.diagonal().cwiseInverse()) : VectorXd::Ones(n);
  MatrixXd basis(n, k);
  VectorXd v = p_inverse.asDiagonal() * b;
  for (int j = 0; j < k; ++j) {
    for (int pass = 0; pass < 2; ++pass) {
      for (int i = 0; i < j; ++i) v -= basis.col(i).dot(v) * basis.col(i);
    }
    basis.col(j) = v / v.norm();
    v = p_inverse.asDiagonal() * (a * basis.col(j));
  }
  const VectorXd weight = p_inverse.cwiseSqrt();
  const MatrixXd ls = weight.asDiagonal() * (a * basis);
  const VectorXd y = ls.colPivHouseholderQr().solve(weight.asDiagonal() * b);
  return basis * y;
}

// CR's k-th iterate (k = 1 .. n) is MINRES's: unpreconditioned against Eigen's MINRES and the
// reference, Jacobi-preconditioned against Eigen's MINRES with its diagonal preconditioner and
// the reference in the P^-1 norm, to 1e-8 relative.
TEST(NsnConjugateResidualTest, IteratesEqualMinres) {
  std::mt19937_64 rng(4801);
  KrylovWorkspace workspace;
  for (int trial = 0; trial < 4; ++trial) {
    const int n = 8 + 3 * trial;
    const VectorXd b = RandomVector(n, rng);
    for (bool precondition : {false, true}) {
      // Unpreconditioned: condition 10. Preconditioned: the same spectrum with rows and columns
      // scaled by up to 10^+-1, which Jacobi undoes (its condition alone would be ~1e5, where
      // the last iterates of any two Krylov codes differ by rounding).
      const MatrixXd a = RandomSpd(n, 10, rng, precondition);
      for (int k = 1; k <= n; ++k) {
        KrylovOptions options;
        options.max_iterations = k;
        VectorXd x;
        const KrylovResult result =
            Solve(Method::kConjugateResidual, a, b, precondition, options, &workspace, &x);
        EXPECT_EQ(result.iterations, k);
        EXPECT_FALSE(result.breakdown);
        const VectorXd reference = MinimalResidualIterate(a, b, k, precondition);
        EXPECT_LE((x - reference).norm(), 1e-8 * reference.norm())
            << "n " << n << " k " << k << " preconditioned " << precondition;
        VectorXd minres_x;
        if (precondition) {
          Eigen::MINRES<MatrixXd, Eigen::Lower | Eigen::Upper,
                        Eigen::DiagonalPreconditioner<double>>
              minres(a);
          minres.setMaxIterations(k);
          minres.setTolerance(0);
          minres_x = minres.solve(b);
        } else {
          Eigen::MINRES<MatrixXd, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner>
              minres(a);
          minres.setMaxIterations(k);
          minres.setTolerance(0);
          minres_x = minres.solve(b);
        }
        EXPECT_LE((x - minres_x).norm(), 1e-8 * minres_x.norm())
            << "n " << n << " k " << k << " preconditioned " << precondition;
        // The reported residual is ||b - A x||_{P^-1} of the returned x.
        EXPECT_NEAR(result.residual, PreconditionedNorm(a, b - a * x, precondition),
                    1e-8 * result.initial_residual);
      }
    }
  }
}

// The history's entries are non-increasing (up to rounding), for the norm CR minimizes.
void ExpectMonotone(const std::vector<double>& history, int size, const char* label) {
  for (int k = 1; k < size; ++k) {
    EXPECT_LE(history[k], history[k - 1] * (1 + 1e-12)) << label << " k " << k;
  }
}

// ||r_k||_{P^-1} is monotone non-increasing on SPD matrices, with and without Jacobi, and on the
// near-singular contact matrix (redundant rows plus eps I) at masses from 1 to 1e4 kg; the history
// records the true residual of each iterate.
TEST(NsnConjugateResidualTest, PreconditionedResidualIsMonotone) {
  std::mt19937_64 rng(4802);
  KrylovWorkspace workspace;
  KrylovOptions options;
  options.max_iterations = 60;
  std::vector<double> values(options.max_iterations + 1);
  for (int trial = 0; trial < 10; ++trial) {
    const MatrixXd a = RandomSpd(30, trial < 5 ? 1e3 : 1e8, rng);
    const VectorXd b = RandomVector(30, rng);
    for (bool precondition : {false, true}) {
      ResidualHistory history{values.data(), static_cast<int>(values.size())};
      VectorXd x;
      const KrylovResult result =
          Solve(Method::kConjugateResidual, a, b, precondition, options, &workspace, &x, &history);
      EXPECT_EQ(history.size, result.iterations + 1);
      EXPECT_EQ(values[0], result.initial_residual);
      ExpectMonotone(values, history.size, "SPD");
    }
  }
  for (double mass : {1.0, 100.0, 1e4}) {
    for (double compliance : {0.0, 1e-3}) {
      const MatrixXd a = ContactMatrix(mass, 1e-6, compliance, 7);
      const VectorXd b = RandomVector(24, rng);
      for (bool precondition : {false, true}) {
        ResidualHistory history{values.data(), static_cast<int>(values.size())};
        VectorXd x;
        const KrylovResult result = Solve(Method::kConjugateResidual, a, b, precondition, options,
                                          &workspace, &x, &history);
        ASSERT_GE(history.size, 2) << "mass " << mass;
        ExpectMonotone(values, history.size, "contact");
        // The recursive residual is the true one, to rounding.
        EXPECT_NEAR(result.residual, PreconditionedNorm(a, b - a * x, precondition),
                    1e-6 * result.initial_residual)
            << "mass " << mass << " compliance " << compliance;
        // Solved within the 60 iterations, singular J M^-1 J^T and all (Sec 8.2's claim).
        EXPECT_LE(result.residual, 1e-8 * result.initial_residual)
            << "mass " << mass << " compliance " << compliance;
      }
    }
  }
}

// On SPD systems CR and CG solve exactly within n iterations (to rounding), preconditioned or not;
// with a relative tolerance they stop as soon as it is met.
TEST(NsnConjugateResidualTest, ExactWithinNIterations) {
  std::mt19937_64 rng(4803);
  KrylovWorkspace workspace;
  for (int n : {1, 2, 5, 12}) {
    const VectorXd b = RandomVector(n, rng);
    for (Method method : {Method::kConjugateResidual, Method::kConjugateGradient}) {
      for (bool precondition : {false, true}) {
        // Condition 100; rows and columns scaled by up to 10^+-1 where Jacobi undoes it.
        const MatrixXd a = RandomSpd(n, 100, rng, precondition);
        const VectorXd exact = a.llt().solve(b);
        KrylovOptions options;
        options.max_iterations = n;
        VectorXd x;
        Solve(method, a, b, precondition, options, &workspace, &x);
        EXPECT_LE((x - exact).norm(), 1e-8 * exact.norm()) << "n " << n;
        options.max_iterations = 10 * n;
        options.relative_tolerance = 1e-6;
        const KrylovResult result = Solve(method, a, b, precondition, options, &workspace, &x);
        EXPECT_TRUE(result.converged) << "n " << n;
        EXPECT_LE(result.iterations, n) << "n " << n;
        EXPECT_LE(result.residual, 1e-6 * result.initial_residual);
      }
    }
  }
}

// Fig 11's qualitative claim: on the same system PCG's ||r||_{P^-1} rises at some iteration while
// PCR's never does (a 20 x 20 SPD matrix of condition 1e4, rows scaled; a search over seeds 1-300
// found PCG rising 3 to 13 times over at 7 to 11 of the 20 iterations for every one of them, with
// PCR monotone: seed 1 rises at 8, by up to 5.8 times).
constexpr std::uint64_t kNonMonotoneSeed = 1;

TEST(NsnConjugateResidualTest, ConjugateGradientResidualIsNotMonotone) {
  std::mt19937_64 rng(kNonMonotoneSeed);
  const MatrixXd a = RandomSpd(20, 1e4, rng);
  const VectorXd b = RandomVector(20, rng);
  KrylovWorkspace workspace;
  KrylovOptions options;
  options.max_iterations = 20;
  std::vector<double> cg(21), cr(21);
  ResidualHistory cg_history{cg.data(), 21}, cr_history{cr.data(), 21};
  VectorXd x;
  Solve(Method::kConjugateGradient, a, b, true, options, &workspace, &x, &cg_history);
  Solve(Method::kConjugateResidual, a, b, true, options, &workspace, &x, &cr_history);
  ASSERT_EQ(cg_history.size, 21);
  ASSERT_EQ(cr_history.size, 21);
  int rises = 0;
  double largest_rise = 0;
  for (int k = 1; k < 21; ++k) {
    rises += cg[k] > cg[k - 1] * 1.01;
    largest_rise = std::max(largest_rise, cg[k] / cg[k - 1]);
  }
  EXPECT_GE(rises, 5);
  EXPECT_GT(largest_rise, 2);
  ExpectMonotone(cr, 21, "CR");
  // CR's residual is never above CG's (it minimizes the norm over the same Krylov space).
  for (int k = 0; k < 21; ++k) EXPECT_LE(cr[k], cg[k] * (1 + 1e-10)) << "k " << k;
}

// The Jacobi and Gauss-Seidel ablations: their first iterates by hand (omega D^-1 b; forward
// substitution with the lower triangle), convergence on a diagonally dominant matrix, and, at
// Fig 18's 40 iterations on the contact matrix, a residual well above PCR's.
TEST(NsnConjugateResidualTest, JacobiAndGaussSeidelAblations) {
  std::mt19937_64 rng(4805);
  const int n = 15;
  MatrixXd a = RandomSpd(n, 10, rng, false);
  a.diagonal().array() += a.cwiseAbs().rowwise().sum().array();  // diagonally dominant
  const VectorXd b = RandomVector(n, rng);
  KrylovWorkspace workspace;
  KrylovOptions options;
  options.max_iterations = 1;
  options.relaxation = 0.8;
  VectorXd x;
  Solve(Method::kJacobi, a, b, true, options, &workspace, &x);
  EXPECT_LE((x - 0.8 * a.diagonal().cwiseInverse().cwiseProduct(b)).norm(), 1e-14 * b.norm());
  options.relaxation = 1;
  Solve(Method::kGaussSeidel, a, b, true, options, &workspace, &x);
  const VectorXd forward = a.triangularView<Eigen::Lower>().solve(b);
  EXPECT_LE((x - forward).norm(), 1e-12 * forward.norm());

  const VectorXd exact = a.llt().solve(b);
  options.max_iterations = 200;
  for (Method method : {Method::kJacobi, Method::kGaussSeidel}) {
    const KrylovResult result = Solve(method, a, b, true, options, &workspace, &x);
    EXPECT_LE((x - exact).norm(), 1e-10 * exact.norm());
    EXPECT_EQ(result.iterations, 200);
    EXPECT_NEAR(result.residual, PreconditionedNorm(a, b - a * x, true),
                1e-12 * result.initial_residual);
  }
  // A relative tolerance stops them early; Gauss-Seidel needs fewer sweeps than Jacobi.
  options.relative_tolerance = 1e-8;
  const KrylovResult jacobi = Solve(Method::kJacobi, a, b, true, options, &workspace, &x);
  const KrylovResult gauss_seidel =
      Solve(Method::kGaussSeidel, a, b, true, options, &workspace, &x);
  EXPECT_TRUE(jacobi.converged);
  EXPECT_TRUE(gauss_seidel.converged);
  EXPECT_LT(gauss_seidel.iterations, jacobi.iterations);

  // Fig 11/18: 40 iterations on the contact matrix of a 10 kg box, b in A's dominant range.
  const MatrixXd contact = ContactMatrix(10, 1e-6);
  const VectorXd rhs = contact * RandomVector(24, rng);
  KrylovOptions fixed;
  fixed.max_iterations = 40;
  const double pcr =
      Solve(Method::kConjugateResidual, contact, rhs, true, fixed, &workspace, &x).residual;
  const double gs = Solve(Method::kGaussSeidel, contact, rhs, true, fixed, &workspace, &x).residual;
  fixed.relaxation = 0.1;
  const double jac = Solve(Method::kJacobi, contact, rhs, true, fixed, &workspace, &x).residual;
  EXPECT_LT(10 * pcr, gs);
  EXPECT_LT(10 * pcr, jac);
}

// Degenerate inputs: b = 0 gives x = 0 in no iteration; a singular A (b outside its range) ends in
// a breakdown with a finite x; n = 0 is a no-op.
TEST(NsnConjugateResidualTest, DegenerateSystems) {
  KrylovWorkspace workspace;
  KrylovOptions options;
  VectorXd x;
  const MatrixXd a = MatrixXd::Identity(3, 3);
  for (Method method : {Method::kConjugateResidual, Method::kConjugateGradient, Method::kJacobi,
                        Method::kGaussSeidel}) {
    const KrylovResult result = Solve(method, a, VectorXd::Zero(3), true, options, &workspace, &x);
    EXPECT_TRUE(result.converged);
    EXPECT_EQ(result.iterations, 0);
    EXPECT_EQ(x, VectorXd::Zero(3));
  }
  MatrixXd singular = MatrixXd::Zero(2, 2);
  singular(0, 0) = 1;
  for (Method method : {Method::kConjugateResidual, Method::kConjugateGradient}) {
    const KrylovResult result =
        Solve(method, singular, VectorXd::Ones(2), true, options, &workspace, &x);
    EXPECT_TRUE(result.breakdown);
    EXPECT_TRUE(x.allFinite());
    if (method == Method::kConjugateResidual) {
      // The least-squares solution in K_1 = span{(1, 1)}: x = (1, 1), residual (0, 1).
      EXPECT_EQ(x, VectorXd::Ones(2));
      EXPECT_EQ(result.residual, 1);
      EXPECT_EQ(result.iterations, 1);
    }
  }
  const KrylovResult empty = JacobiConjugateResidual([](const double*, double*) {}, nullptr,
                                                     nullptr, 0, options, &workspace, nullptr);
  EXPECT_EQ(empty.iterations, 0);
  EXPECT_TRUE(empty.converged);
}

// Once sized, solves of every method at sizes up to the capacity allocate nothing, and give the
// same bits as a fresh workspace's.
TEST(NsnConjugateResidualTest, ASizedSolveAllocatesNothing) {
  std::mt19937_64 rng(4806);
  const int capacity = 40;
  std::vector<MatrixXd> matrices;
  std::vector<VectorXd> rhs, diagonals, solutions;
  for (int n : {40, 7, 23, 1, 40, 16}) {
    matrices.push_back(RandomSpd(n, 1e3, rng));
    rhs.push_back(RandomVector(n, rng));
    diagonals.push_back(matrices.back().diagonal());
    solutions.push_back(VectorXd::Zero(n));
  }
  std::vector<double> values(41);
  KrylovWorkspace workspace;
  {
    const testing::AllocationCounter allocations;  // the counter sees the first sizing
    workspace.Resize(capacity);
    EXPECT_GT(allocations.count(), 0);
  }
  EXPECT_EQ(workspace.capacity(), capacity);
  workspace.Resize(10);  // grow-only
  EXPECT_EQ(workspace.capacity(), capacity);
  KrylovOptions options;
  options.max_iterations = 30;
  for (int method = 0; method < 4; ++method) {
    for (size_t s = 0; s < matrices.size(); ++s) {
      const int n = static_cast<int>(matrices[s].rows());
      DenseOperator op{&matrices[s]};
      DenseRows rows{&matrices[s]};
      ResidualHistory history{values.data(), static_cast<int>(values.size())};
      long count = 0;
      {
        const testing::AllocationCounter allocations;
        const double* d = diagonals[s].data();
        const double* b = rhs[s].data();
        double* x = solutions[s].data();
        if (method == 0) JacobiConjugateResidual(op, d, b, n, options, &workspace, x, &history);
        if (method == 1) JacobiConjugateGradient(op, d, b, n, options, &workspace, x, &history);
        if (method == 2) JacobiIteration(op, d, b, n, options, &workspace, x, &history);
        if (method == 3) GaussSeidelIteration(rows, d, b, n, options, &workspace, x, &history);
        count = allocations.count();
      }
      EXPECT_EQ(count, 0) << "method " << method << " n " << n;
      // The same bits as a fresh workspace's solve.
      KrylovWorkspace fresh;
      VectorXd y;
      Solve(static_cast<Method>(method), matrices[s], rhs[s], true, options, &fresh, &y);
      EXPECT_EQ(std::memcmp(y.data(), solutions[s].data(), sizeof(double) * n), 0)
          << "method " << method << " n " << n;
    }
  }
  EXPECT_EQ(workspace.capacity(), capacity);
}

}  // namespace
}  // namespace alsim
