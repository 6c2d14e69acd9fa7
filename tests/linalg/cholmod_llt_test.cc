// The CHOLMOD wrapper against dense Eigen: solutions, analysis only on a new pattern, refusal of
// an indefinite matrix.
#include "engine/linalg/cholmod_llt.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <vector>

namespace alsim {
namespace {

// Upper triangle of `dense` (entries with |value| > 0, plus the diagonal) in compressed columns.
struct UpperPattern {
  std::vector<int> column_start;
  std::vector<int> row_index;
  std::vector<double> value;
};

UpperPattern Upper(const Eigen::MatrixXd& dense) {
  UpperPattern p;
  p.column_start.push_back(0);
  for (int c = 0; c < dense.cols(); ++c) {
    for (int r = 0; r <= c; ++r) {
      if (r == c || dense(r, c) != 0) {
        p.row_index.push_back(r);
        p.value.push_back(dense(r, c));
      }
    }
    p.column_start.push_back(static_cast<int>(p.row_index.size()));
  }
  return p;
}

// A sparse SPD matrix: a path graph Laplacian plus `shift` on the diagonal and one long edge.
Eigen::MatrixXd Matrix(int n, double shift) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < n; ++i) a(i, i) = 2 + shift + 0.1 * i;
  for (int i = 0; i + 1 < n; ++i) a(i, i + 1) = a(i + 1, i) = -1;
  a(0, n - 1) = a(n - 1, 0) = 0.5;
  return a;
}

void ExpectSolves(CholmodLlt& llt, const Eigen::MatrixXd& a) {
  const UpperPattern p = Upper(a);
  std::copy(p.value.begin(), p.value.end(), llt.values());
  ASSERT_TRUE(llt.Factor());
  Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(a.rows(), -1, 2);
  const Eigen::VectorXd b = x;
  llt.Solve(x.data());
  EXPECT_LT((a * x - b).norm(), 1e-12 * b.norm());
}

TEST(CholmodLltTest, SolvesAndAnalyzesOnlyNewPatterns) {
  CholmodLlt llt;
  const Eigen::MatrixXd a = Matrix(40, 0.5);
  UpperPattern p = Upper(a);
  EXPECT_TRUE(llt.SetPattern(40, p.column_start.data(), p.row_index.data()));
  ExpectSolves(llt, a);
  EXPECT_EQ(llt.analyses(), 1);
  // Same pattern, new values (a beta change): numeric factorization only.
  const Eigen::MatrixXd b = Matrix(40, 3.0);
  EXPECT_FALSE(llt.SetPattern(40, p.column_start.data(), p.row_index.data()));
  ExpectSolves(llt, b);
  EXPECT_EQ(llt.analyses(), 1);
  // A new entry: analyzed again.
  Eigen::MatrixXd c = b;
  c(3, 20) = c(20, 3) = 0.25;
  p = Upper(c);
  EXPECT_TRUE(llt.SetPattern(40, p.column_start.data(), p.row_index.data()));
  ExpectSolves(llt, c);
  EXPECT_EQ(llt.analyses(), 2);
}

TEST(CholmodLltTest, RefusesAnIndefiniteMatrix) {
  CholmodLlt llt;
  Eigen::MatrixXd a = Matrix(10, 0.5);
  a(4, 4) = -3;
  const UpperPattern p = Upper(a);
  llt.SetPattern(10, p.column_start.data(), p.row_index.data());
  std::copy(p.value.begin(), p.value.end(), llt.values());
  EXPECT_FALSE(llt.Factor());
}

}  // namespace
}  // namespace alsim
