// Tree LDL^T (and the tree-sparse product) against a known factorization and Eigen's dense
// LDL^T.
#include "engine/linalg/tree_ldl.h"

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

// A matrix M = L^T D L with a known factor: L unit lower triangular with the tree's sparsity and
// D positive, random. M has the tree's sparsity too (no fill-in), so the layout holds it.
struct KnownFactorMatrix {
  std::vector<double> factor;  // L off the diagonal, D on it, as TreeLdlFactor leaves it
  Eigen::MatrixXd dense;       // M
  std::vector<double> stored;  // M in layout storage
};

KnownFactorMatrix RandomKnownFactorMatrix(const TreeSparseLayout& layout, std::mt19937& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  KnownFactorMatrix out;
  out.factor.resize(layout.nnz);
  for (double& x : out.factor) x = uniform(rng);
  for (int i = 0; i < layout.size; ++i)
    out.factor[layout.row_adr[i]] = 0.5 + std::abs(uniform(rng));
  Eigen::MatrixXd l = TreeSparseToDense(layout, out.factor.data()).triangularView<Eigen::Lower>();
  const Eigen::VectorXd diag = l.diagonal();
  l.diagonal().setOnes();
  out.dense = l.transpose() * diag.asDiagonal() * l;
  out.stored.resize(layout.nnz);
  for (int i = 0; i < layout.size; ++i) {
    int k = 0;
    for (int j = i; j >= 0; j = layout.parent[j], ++k)
      out.stored[layout.row_adr[i] + k] = out.dense(i, j);
  }
  return out;
}

TEST(TreeLdlTest, RecoversAKnownFactorAndSolves) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 1 + trial * 7;
    const TreeSparseLayout layout = TreeSparseLayout::FromParents(RandomParents(n, rng));
    const KnownFactorMatrix known = RandomKnownFactorMatrix(layout, rng);
    const Eigen::MatrixXd& matrix = known.dense;
    std::vector<double> stored = known.stored;
    ASSERT_LE((TreeSparseToDense(layout, stored.data()) - matrix).norm(), 1e-12 * matrix.norm());

    TreeLdlFactor(layout, stored.data());
    for (int e = 0; e < layout.nnz; ++e) EXPECT_NEAR(stored[e], known.factor[e], 1e-10) << e;

    const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    Eigen::VectorXd product(n);
    TreeSparseMultiplyRange(layout, 0, n, known.stored.data(), b.data(), product.data());
    EXPECT_LE((product - matrix * b).norm(), 1e-12 * std::max(1.0, (matrix * b).norm()));

    Eigen::VectorXd x = b;
    TreeLdlSolve(layout, stored.data(), x.data());
    const Eigen::VectorXd expected = DenseSolve(matrix, b);
    EXPECT_LE((x - expected).norm(), 1e-10 * std::max(1.0, expected.norm())) << "n = " << n;
  }
}

// A random forest on n dofs in depth-first order (MuJoCo's): each dof's parent is the previous
// dof or one of its ancestors, or none (a new tree).
std::vector<int> RandomDepthFirstParents(int n, std::mt19937& rng) {
  std::vector<int> parent(n, -1);
  for (int i = 1; i < n; ++i) {
    int candidate = i - 1;  // walk up from the previous dof a random number of levels
    for (int up = std::uniform_int_distribution<int>(0, 3)(rng); up > 0 && candidate >= 0; --up)
      candidate = parent[candidate];
    parent[i] = candidate;
  }
  return parent;
}

// In depth-first order every subtree is the range after its root, and the L^T substitution
// gathers each dof's descendants instead of scattering to ancestors: the same operations in the
// same order, so the same bits as the scatter (which a layout without subtree ranges takes). The
// same for the product TreeSparseMultiplyRange.
// Orders that are not depth-first keep no subtree ranges.
// A rank-1 update (and the downdate back) on one chain gives the factor of M + sigma w w^T that
// a fresh factorization gives, and leaves w zero.
TEST(TreeLdlTest, RankOneUpdateAndDowndateMatchAFreshFactor) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 2 + trial * 3;
    const TreeSparseLayout layout = TreeSparseLayout::FromParents(RandomParents(n, rng));
    const KnownFactorMatrix known = RandomKnownFactorMatrix(layout, rng);
    const int deepest = std::uniform_int_distribution<int>(0, n - 1)(rng);
    Eigen::VectorXd w = Eigen::VectorXd::Zero(n);
    for (int k = deepest; k >= 0; k = layout.parent[k]) w[k] = uniform(rng);
    const double sigma = 0.1 + 2 * std::abs(uniform(rng));
    // M + sigma w w^T in layout storage, factored afresh.
    std::vector<double> updated_matrix = known.stored;
    for (int i = 0; i < n; ++i) {
      int k = 0;
      for (int j = i; j >= 0; j = layout.parent[j], ++k)
        updated_matrix[layout.row_adr[i] + k] += sigma * w[i] * w[j];
    }
    std::vector<double> fresh = updated_matrix;
    TreeLdlFactor(layout, fresh.data());

    std::vector<double> factor = known.factor;
    std::vector<double> scratch(w.data(), w.data() + n);
    ASSERT_TRUE(TreeLdlRankOneUpdate(layout, deepest, sigma, scratch.data(), factor.data()));
    for (int e = 0; e < layout.nnz; ++e) EXPECT_NEAR(factor[e], fresh[e], 1e-10) << e;
    for (int i = 0; i < n; ++i) EXPECT_EQ(scratch[i], 0.0);

    scratch.assign(w.data(), w.data() + n);
    ASSERT_TRUE(TreeLdlRankOneUpdate(layout, deepest, -sigma, scratch.data(), factor.data()));
    for (int e = 0; e < layout.nnz; ++e) EXPECT_NEAR(factor[e], known.factor[e], 1e-9) << e;
  }
  // A downdate that leaves an indefinite matrix reports it.
  const TreeSparseLayout chain = TreeSparseLayout::FromParents({-1, 0});
  std::vector<double> factor = {1.0, 1.0, 0.0};  // M = I: D = (1, 1), L_10 = 0
  std::vector<double> w = {0.0, 2.0};
  EXPECT_FALSE(TreeLdlRankOneUpdate(chain, 1, -1.0, w.data(), factor.data()));
}

TEST(TreeLdlTest, DepthFirstGatherMatchesTheScatterBitForBit) {
  std::mt19937 rng(11);
  int branched = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 2 + trial * 3;
    const std::vector<int> parent = RandomDepthFirstParents(n, rng);
    const TreeSparseLayout gather = TreeSparseLayout::FromParents(parent);
    ASSERT_TRUE(gather.subtrees_contiguous()) << "n = " << n;
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < gather.subtree_end[i]; ++j) {
        int a = j;
        while (a > i) a = parent[a];
        ASSERT_EQ(a, i) << "dof " << j << " in the range of " << i << " is not its descendant";
      }
    }
    for (int i = 1; i < n; ++i) branched += parent[i] != i - 1 && parent[i] >= 0;
    TreeSparseLayout scatter = gather;
    scatter.subtree_end.clear();
    ASSERT_FALSE(scatter.subtrees_contiguous());
    std::vector<double> factor = RandomKnownFactorMatrix(gather, rng).stored;
    TreeLdlFactor(gather, factor.data());
    const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    Eigen::VectorXd x_gather = b, x_scatter = b;
    TreeLdlSolve(gather, factor.data(), x_gather.data());
    TreeLdlSolve(scatter, factor.data(), x_scatter.data());
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(x_gather[i], x_scatter[i]) << "n = " << n << ", dof " << i;
    // The product sums row i and then column i in the scatter's order too.
    const std::vector<double> matrix = RandomKnownFactorMatrix(gather, rng).stored;
    Eigen::VectorXd y_gather(n), y_scatter(n);
    TreeSparseMultiplyRange(gather, 0, n, matrix.data(), b.data(), y_gather.data());
    TreeSparseMultiplyRange(scatter, 0, n, matrix.data(), b.data(), y_scatter.data());
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(y_gather[i], y_scatter[i]) << "n = " << n << ", dof " << i;
  }
  EXPECT_GT(branched, 20);  // the trees branch, so subtrees end before the tree does
  // Dof 4 is a child of 2 but comes after dof 3, a child of 0, so the range after dof 1 would
  // hold dof 3; and dof 3 (a child of 1) comes after dof 2 (a child of 0).
  EXPECT_FALSE(TreeSparseLayout::FromParents({-1, 0, 1, 0, 2}).subtrees_contiguous());
  EXPECT_FALSE(TreeSparseLayout::FromParents({-1, 0, 0, 1}).subtrees_contiguous());
  EXPECT_TRUE(TreeSparseLayout::FromParents({-1, 0, 1, 0, 3}).subtrees_contiguous());
}

// A range that is one serial chain of up to 6 dofs (a free body) takes fixed-size kernels; they
// must give the general loops' results bit for bit. Two chains of n dofs: factored and solved as
// one range (two trees: the general loops) and chain by chain (the kernels).
TEST(TreeLdlTest, ShortChainsMatchTheGeneralLoopsExactly) {
  std::mt19937 rng(3);
  for (int n = 1; n <= 8; ++n) {
    std::vector<int> parent(2 * n);
    for (int i = 0; i < 2 * n; ++i) parent[i] = i % n == 0 ? -1 : i - 1;
    const TreeSparseLayout layout = TreeSparseLayout::FromParents(parent);
    const KnownFactorMatrix known = RandomKnownFactorMatrix(layout, rng);

    std::vector<double> general = known.stored, by_chain = known.stored;
    TreeLdlFactorRange(layout, 0, 2 * n, general.data());
    TreeLdlFactorRange(layout, 0, n, by_chain.data());
    TreeLdlFactorRange(layout, n, 2 * n, by_chain.data());
    for (int e = 0; e < layout.nnz; ++e) {
      EXPECT_EQ(by_chain[e], general[e]) << "n = " << n << ", entry " << e;
      EXPECT_NEAR(by_chain[e], known.factor[e], 1e-10) << "n = " << n << ", entry " << e;
    }

    const Eigen::VectorXd b = Eigen::VectorXd::Random(2 * n);
    Eigen::VectorXd x_general = b, x_by_chain = b;
    TreeLdlSolveRange(layout, 0, 2 * n, general.data(), x_general.data());
    TreeLdlSolveRange(layout, 0, n, by_chain.data(), x_by_chain.data());
    TreeLdlSolveRange(layout, n, 2 * n, by_chain.data(), x_by_chain.data());
    for (int i = 0; i < 2 * n; ++i) EXPECT_EQ(x_by_chain[i], x_general[i]) << "n = " << n;

    Eigen::VectorXd y_general(2 * n), y_by_chain(2 * n);
    TreeSparseMultiplyRange(layout, 0, 2 * n, known.stored.data(), b.data(), y_general.data());
    TreeSparseMultiplyRange(layout, 0, n, known.stored.data(), b.data(), y_by_chain.data());
    TreeSparseMultiplyRange(layout, n, 2 * n, known.stored.data(), b.data(), y_by_chain.data());
    for (int i = 0; i < 2 * n; ++i) EXPECT_EQ(y_by_chain[i], y_general[i]) << "n = " << n;
    EXPECT_LE((y_by_chain - known.dense * b).norm(), 1e-12 * std::max(1.0, b.norm()));
    const Eigen::VectorXd expected = DenseSolve(known.dense, b);
    EXPECT_LE((x_by_chain - expected).norm(), 1e-10 * std::max(1.0, expected.norm()));
  }
}

// humanoid100's subsystems: a humanoid and 100 free bodies (6-dof chains), each factored and
// solved on its own range, against Eigen on the dense block.
TEST(TreeLdlTest, SubsystemRangesOfAFreeBodySceneSolve) {
  testing::OracleScene scene(testing::kMujocoSamples + "humanoid100/humanoid100.xml");
  ASSERT_TRUE(scene.ok());
  const Model& m = scene.model();
  Data& d = scene.data();
  std::mt19937 rng(5);
  scene.SetRandomState(rng);
  Kinematics(m, d);
  MassMatrix(m, d);
  const Eigen::MatrixXd dense = MassMatrixToDense(d);
  std::vector<double> factor = d.M;
  int chains = 0;
  for (int j = 0; j < m.nsubsystem; ++j) {
    const int begin = m.subsystem_dof_adr[j], n = m.subsystem_dof_num[j];
    chains += n == 6 && d.mass_layout.row_nnz[begin + 5] == 6;
    TreeLdlFactorRange(d.mass_layout, begin, begin + n, factor.data());
    const Eigen::VectorXd b = Eigen::VectorXd::Random(n);
    Eigen::VectorXd x = Eigen::VectorXd::Zero(m.nv);
    x.segment(begin, n) = b;
    TreeLdlSolveRange(d.mass_layout, begin, begin + n, factor.data(), x.data());
    const Eigen::VectorXd expected = DenseSolve(dense.block(begin, begin, n, n), b);
    EXPECT_LE((x.segment(begin, n) - expected).norm(), 1e-10 * std::max(1.0, expected.norm()))
        << "subsystem " << j;
  }
  EXPECT_EQ(chains, 100);
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
