// The Newton solvers' sparse island Hessian (engine/solver/newton/island_hessian.h) against a
// dense H = A + sum_i J_i^T W_i J_i built here from the mass matrix's tree storage and the
// constraints' Jacobians, on an island of three bodies (two free boxes and a branched free body:
// A's branch entries, contacts between subsystems): the pattern holds every nonzero, both ways of
// assembly give H (and the same bits), the factor solves H x = y, and a second Build of the same
// pattern keeps CHOLMOD's symbolic analysis.
#include "engine/solver/newton/island_hessian.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include <Eigen/Dense>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/joint_space_jacobian.h"

namespace alsim {
namespace {

constexpr char kScene[] = R"(
<mujoco>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body pos="0 0 0.1"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0.02 0.01 0.3"><freejoint/><geom type="box" size="0.1 0.1 0.1"/></body>
    <body pos="0 0 0.45">
      <freejoint/>
      <geom type="capsule" fromto="-0.05 0 0 0.05 0 0" size="0.03"/>
      <body pos="0.05 0 0">
        <joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.15 0 0" size="0.03"/>
      </body>
      <body pos="-0.05 0 0">
        <joint type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 -0.15 0 0" size="0.03"/>
      </body>
    </body>
  </worldbody>
</mujoco>)";

TEST(IslandHessianTest, AssemblesFactorsAndKeepsTheAnalysisOfAnIsland) {
  const ModelImport imported = ImportModelFromString(kScene, {}, "island_hessian.xml");
  ASSERT_TRUE(imported) << imported.error;
  const Model& m = *imported.model;
  Data d(m);
  // Settle the three bodies into one island.
  int island = -1;
  for (int step = 0; step < 400 && island < 0; ++step) {
    ASSERT_EQ(Step(m, d, StepOptions()), StepStatus::kOk);
    for (int k = 0; k < d.islands.num; ++k) {
      if (d.islands.subsystem_adr[k + 1] - d.islands.subsystem_adr[k] == 3) island = k;
    }
  }
  ASSERT_GE(island, 0) << "the bodies never formed one island";

  const size_t max_constraints = 256;
  JointSpaceJacobian jacobian;
  jacobian.Reserve(m, max_constraints);
  jacobian.Layout(m, d);
  const Islands& islands = d.islands;
  std::vector<int> constraints;
  for (int s = islands.constraint_adr[island]; s < islands.constraint_adr[island + 1]; ++s) {
    constraints.push_back(islands.constraints[s]);
    jacobian.Fill(m, d, islands.constraints[s]);
  }
  IslandHessian hessian;
  hessian.Reserve(m, max_constraints);
  hessian.LayOut(m, d, islands, jacobian);
  hessian.Build(m, d, islands, jacobian, island);
  const IslandSparsePattern& pattern = hessian.pattern();
  const int n = pattern.dofs(island);
  ASSERT_EQ(n, 6 + 6 + 8);
  const int* local = pattern.local_dofs();

  // The dense reference: A from its tree storage (row i: i, then its ancestors), W_i = B B^T.
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
  for (int k = 0; k < n; ++k) {
    const int i = pattern.global_dofs(island)[k];
    int e = d.mass_layout.row_adr[i];
    for (int p = i; p >= 0; p = d.mass_layout.parent[p], ++e) {
      dense(local[i], local[p]) = dense(local[p], local[i]) = d.qA[e];
    }
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (const int c : constraints) {
    const int dim = std::min(d.constraints.constraints[c].dim, 3);
    Eigen::MatrixXd b(dim, dim);
    for (int r = 0; r < dim; ++r) {
      for (int q = 0; q < dim; ++q) b(r, q) = uniform(rng);
    }
    const Eigen::MatrixXd w = b * b.transpose();
    const int first = jacobian.entry_adr[c], count = jacobian.entry_num[c];
    Eigen::MatrixXd rows = Eigen::MatrixXd::Zero(dim, n);  // J_c over the island's dofs
    for (int e = first; e < first + count; ++e) {
      for (int r = 0; r < dim; ++r) rows(r, local[jacobian.dof[e]]) = jacobian.At(e, r);
    }
    dense += rows.transpose() * w * rows;
    double* pair = hessian.pair_values(c);
    for (int bb = 0; bb < count; ++bb) {
      for (int a = 0; a <= bb; ++a) {
        const int column = local[jacobian.dof[first + bb]], row = local[jacobian.dof[first + a]];
        *pair++ = rows.col(row).dot(w * rows.col(column));
      }
    }
  }

  // By blocks: every stored entry is H's, and H has no nonzero outside the pattern.
  hessian.AssembleBlocks(island, constraints.data(), static_cast<int>(constraints.size()));
  const int nnz = pattern.nnz(island);
  const std::vector<double> blocks(hessian.values(island), hessian.values(island) + nnz);
  const int* columns = pattern.column_start(island);
  const int* row_index = pattern.row_index(island);
  Eigen::MatrixXd stored = Eigen::MatrixXd::Zero(n, n);
  for (int column = 0; column < n; ++column) {
    for (int e = columns[column]; e < columns[column + 1]; ++e) {
      ASSERT_LE(row_index[e], column);
      stored(row_index[e], column) = stored(column, row_index[e]) = blocks[e];
    }
  }
  EXPECT_LT((stored - dense).cwiseAbs().maxCoeff(), 1e-12 * dense.cwiseAbs().maxCoeff());

  // Directly: A, then each pair added at its position, in constraint order: the same bits.
  hessian.SetToMass(island);
  double* values = hessian.values(island);
  for (const int c : constraints) {
    const size_t pairs = IslandHessian::PairCount(jacobian.entry_num[c]);
    for (size_t p = 0; p < pairs; ++p) {
      values[hessian.pair_positions(c)[p]] += hessian.pair_values(c)[p];
    }
  }
  EXPECT_TRUE(std::equal(blocks.begin(), blocks.end(), values));

  // The factor solves H x = y.
  ASSERT_TRUE(hessian.Factor(island));
  Eigen::VectorXd y(n);
  for (int k = 0; k < n; ++k) y[k] = uniform(rng);
  Eigen::VectorXd x = y;
  hessian.Solve(island, x.data());
  EXPECT_LT((dense * x - y).norm(), 1e-10 * y.norm() * dense.norm());
  EXPECT_EQ(hessian.analyses(island), 1);

  // The same pattern again: numeric factorization only.
  hessian.Build(m, d, islands, jacobian, island);
  hessian.AssembleBlocks(island, constraints.data(), static_cast<int>(constraints.size()));
  ASSERT_TRUE(hessian.Factor(island));
  EXPECT_EQ(hessian.analyses(island), 1);
}

}  // namespace
}  // namespace alsim
