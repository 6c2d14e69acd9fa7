#include "engine/dynamics/theta_method.h"

#include <algorithm>

#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/velocity.h"
#include "engine/linalg/tree_ldl.h"

namespace alsim {
namespace {

void SolveAccelerationOfTrees(Data& d, const TreeRange& trees) {
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    double force = d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
    // Added only where nonzero: without external forces the bits are those of the sum without
    // the term (adding +0.0 would turn a -0.0 into +0.0).
    if (d.qfrc_applied[i] != 0) force += d.qfrc_applied[i];
    d.qacc[i] = force;
  }
  TreeLdlSolveRange(d.mass_layout, trees.dof_begin, trees.dof_end, d.qH.data(), d.qacc.data());
}

}  // namespace

void FactorStepMatrixOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  const double damping_scale = (1.0 - theta) * m.timestep;
  const TreeSparseLayout& layout = d.mass_layout;
  const int last = trees.dof_end - 1;
  std::copy(d.M.begin() + layout.row_adr[trees.dof_begin],
            d.M.begin() + layout.row_adr[last] + layout.row_nnz[last],
            d.qH.begin() + layout.row_adr[trees.dof_begin]);
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qH[layout.row_adr[i]] += damping_scale * m.dof_damping[i];
  }
  TreeLdlFactorRange(layout, trees.dof_begin, trees.dof_end, d.qH.data());
}

void AccelerationOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  SolveAccelerationOfTrees(d, trees);
  if (theta == 0) return;
  const double lead = theta * m.timestep;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qvel_start[i] = d.qvel[i];
    d.qvel[i] += lead * d.qacc[i];
  }
  VelocityOfTrees(m, d, trees);
  BiasForcesOfTrees(m, d, trees);
  std::copy(d.qvel_start.begin() + trees.dof_begin, d.qvel_start.begin() + trees.dof_end,
            d.qvel.begin() + trees.dof_begin);
  SolveAccelerationOfTrees(d, trees);
}

void SolverProblemOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  const double h = m.timestep;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.v_free[i] = d.qvel[i] + (1.0 - theta) * h * d.qacc[i];
  }
  if (!m.constraints_enabled) return;
  const double scale = 1.0 / (1.0 - theta);
  const double damping_scale = (1.0 - theta) * h;
  const TreeSparseLayout& layout = d.mass_layout;
  const int last = trees.dof_end - 1;
  const int nnz_begin = layout.row_adr[trees.dof_begin];
  const int nnz_end = layout.row_adr[last] + layout.row_nnz[last];
  // theta = 0 (the default) makes the scale 1: plain copies, the same bits.
  if (scale == 1.0) {
    std::copy(d.M.begin() + nnz_begin, d.M.begin() + nnz_end, d.qA.begin() + nnz_begin);
  } else {
    for (int k = nnz_begin; k < nnz_end; ++k) d.qA[k] = scale * d.M[k];
  }
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qA[layout.row_adr[i]] += scale * damping_scale * m.dof_damping[i];
  }
  std::copy(d.qH.begin() + nnz_begin, d.qH.begin() + nnz_end, d.qA_factor.begin() + nnz_begin);
  if (scale != 1.0) {
    for (int i = trees.dof_begin; i < trees.dof_end; ++i) d.qA_factor[layout.row_adr[i]] *= scale;
  }
  TreeSparseMultiplyRange(layout, trees.dof_begin, trees.dof_end, d.qA.data(), d.v_free.data(),
                          d.solver_rhs.data());
}

}  // namespace alsim
