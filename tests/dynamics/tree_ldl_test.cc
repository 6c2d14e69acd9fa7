// Tree LDL^T against a known factorization and against Eigen's dense LDL^T.
#include "engine/dynamics/tree_ldl.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include <Eigen/Cholesky>

#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

// A random forest on n dofs, each parent preceding its child; a few roots.
std::vector<int> RandomParents(int n, std::mt19937& rng) {
  std::vector<int> parent(n, -1);
  for (int i = 1; i < n; ++i) {
    if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) continue;  // a new tree
    // Mostly chains, sometimes branches.
    parent[i] = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                    ? std::uniform_int_distribution<int>(0, i - 1)(rng)
                    : i - 1;
  }
  return parent;
}

// Dense solution of M x = b with Eigen, for comparison.
Eigen::VectorXd DenseSolve(const Eigen::MatrixXd& matrix, const Eigen::VectorXd& b) {
  return matrix.ldlt().solve(b);
}

TEST(TreeLdlTest, RecoversAKnownFactorAndSolves) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 1 + trial * 7;
    const TreeSparseLayout layout = TreeSparseLayout::FromParents(RandomParents(n, rng));
    // Known factor: unit-lower L with the tree's sparsity and positive D, stored as the factor
    // layout expects (L off the diagonal, D on it).
    std::vector<double> factor(layout.nnz);
    for (double& x : factor) x = uniform(rng);
    for (int i = 0; i < n; ++i) factor[layout.row_adr[i]] = 0.5 + std::abs(uniform(rng));
    Eigen::MatrixXd l = TreeSparseToDense(layout, factor.data()).triangularView<Eigen::Lower>();
    const Eigen::VectorXd diag = l.diagonal();
    l.diagonal().setOnes();
    const Eigen::MatrixXd matrix = l.transpose() * diag.asDiagonal() * l;  // M = L^T D L

    // M has the tree's sparsity (no fill-in), so the layout can hold it.
    std::vector<double> stored(layout.nnz);
    for (int i = 0; i < n; ++i) {
      int k = 0;
      for (int j = i; j >= 0; j = layout.parent[j], ++k)
        stored[layout.row_adr[i] + k] = matrix(i, j);
    }
    ASSERT_LE((TreeSparseToDense(layout, stored.data()) - matrix).norm(), 1e-12 * matrix.norm());

    TreeLdlFactor(layout, stored.data());
    for (int e = 0; e < layout.nnz; ++e) EXPECT_NEAR(stored[e], factor[e], 1e-10) << e;

    const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    Eigen::VectorXd x = b;
    TreeLdlSolve(layout, stored.data(), x.data());
    const Eigen::VectorXd expected = DenseSolve(matrix, b);
    EXPECT_LE((x - expected).norm(), 1e-10 * std::max(1.0, expected.norm())) << "n = " << n;
  }
}

// The mass matrices of real robots at random configurations: factor + solve vs dense LDL^T.
class TreeLdlMassMatrixTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TreeLdlMassMatrixTest, SolveMatchesEigenDenseLdlt) {
  testing::OracleScene scene(testing::kMujocoSamples + GetParam());
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  std::mt19937 rng(11);
  double worst = 0;
  for (int state = 0; state < 20; ++state) {
    scene.SetRandomState(rng);
    Kinematics(m, d);
    MassMatrix(m, d);
    FactorMassMatrix(m, d);
    const Eigen::MatrixXd dense = MassMatrixToDense(d);
    const Eigen::VectorXd b = Eigen::VectorXd::Random(m.nv);
    Eigen::VectorXd x = b;
    SolveMassMatrix(d, x.data());
    const Eigen::VectorXd expected = DenseSolve(dense, b);
    const double error = (x - expected).norm() / std::max(1.0, expected.norm());
    EXPECT_LE(error, 1e-10);
    EXPECT_LE((dense * x - b).norm(), 1e-10 * std::max(1.0, b.norm()));
    worst = std::max(worst, error);
  }
  std::cout << GetParam() << ": worst relative solve error vs Eigen LDLT " << worst << "\n";
}

INSTANTIATE_TEST_SUITE_P(Samples, TreeLdlMassMatrixTest,
                         ::testing::Values("humanoid/humanoid.xml", "humanoid/22_humanoids.xml"));

}  // namespace
}  // namespace alsim
