#include "engine/dynamics/theta_method.h"

#include <algorithm>

#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/velocity.h"
#include "engine/linalg/tree_ldl.h"

namespace alsim {
namespace {

// f(dof, K) for every hinge and slide joint of `trees` with a spring (the joints whose K enters
// A: N = I there).
template <class F>
void ForEachLinearSpring(const Model& m, const TreeRange& trees, const F& f) {
  for (int b = trees.body_begin; b < trees.body_end; ++b) {
    for (int j = m.body_jnt_adr[b]; j < m.body_jnt_adr[b] + m.body_jnt_num[b]; ++j) {
      const JointType type = m.jnt_type[j];
      if (m.jnt_stiffness[j] == 0 || (type != JointType::kHinge && type != JointType::kSlide)) {
        continue;
      }
      f(m.jnt_dof_adr[j], m.jnt_stiffness[j]);
    }
  }
}

// Adds (1 - theta) h theta_v D + h^2 theta_q theta_vq K, times `scale`, to the diagonal of
// `matrix` (in the mass matrix's layout).
void AddImplicitPassive(const Model& m, const TreeSparseLayout& layout, const ThetaWeights& w,
                        double scale, const TreeRange& trees, double* matrix) {
  const double h = m.timestep;
  const double damping_scale = (1.0 - w.theta) * h * w.theta_v;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    matrix[layout.row_adr[i]] += scale * damping_scale * m.dof_damping[i];
  }
  const double stiffness_scale = h * h * w.theta_q * w.theta_vq;
  if (stiffness_scale == 0) return;
  ForEachLinearSpring(m, trees, [&](int dof, double stiffness) {
    matrix[layout.row_adr[dof]] += scale * stiffness_scale * stiffness;
  });
}

void SolveAccelerationOfTrees(const Model& m, Data& d, const ThetaWeights& w,
                              const TreeRange& trees) {
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    double force = d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
    // Added only where nonzero: without external forces the bits are those of the sum without
    // the term (adding +0.0 would turn a -0.0 into +0.0).
    if (d.qfrc_applied[i] != 0) force += d.qfrc_applied[i];
    d.qacc[i] = force;
  }
  // -theta_q h K v0: the springs' stretch over the step (the file comment of the header).
  if (w.theta_q != 0) {
    const double lead = w.theta_q * m.timestep;
    ForEachLinearSpring(m, trees, [&](int dof, double stiffness) {
      d.qacc[dof] -= lead * stiffness * d.qvel[dof];
    });
  }
  TreeLdlSolveRange(d.mass_layout, trees.dof_begin, trees.dof_end, d.qH.data(), d.qacc.data());
}

}  // namespace

void FactorStepMatrixOfTrees(const Model& m, Data& d, const ThetaWeights& w,
                             const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  const TreeSparseLayout& layout = d.mass_layout;
  const int last = trees.dof_end - 1;
  std::copy(d.M.begin() + layout.row_adr[trees.dof_begin],
            d.M.begin() + layout.row_adr[last] + layout.row_nnz[last],
            d.qH.begin() + layout.row_adr[trees.dof_begin]);
  AddImplicitPassive(m, layout, w, 1.0, trees, d.qH.data());
  TreeLdlFactorRange(layout, trees.dof_begin, trees.dof_end, d.qH.data());
}

void AccelerationOfTrees(const Model& m, Data& d, const ThetaWeights& w, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  SolveAccelerationOfTrees(m, d, w, trees);
  if (w.theta == 0) return;
  const double lead = w.theta * m.timestep;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qvel_start[i] = d.qvel[i];
    d.qvel[i] += lead * d.qacc[i];
  }
  VelocityOfTrees(m, d, trees);
  BiasForcesOfTrees(m, d, trees);
  std::copy(d.qvel_start.begin() + trees.dof_begin, d.qvel_start.begin() + trees.dof_end,
            d.qvel.begin() + trees.dof_begin);
  SolveAccelerationOfTrees(m, d, w, trees);
}

void SolverProblemOfTrees(const Model& m, Data& d, const ThetaWeights& w, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  const double h = m.timestep;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.v_free[i] = d.qvel[i] + (1.0 - w.theta) * h * d.qacc[i];
  }
  if (!m.constraints_enabled) return;
  const double scale = 1.0 / (1.0 - w.theta);
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
  AddImplicitPassive(m, layout, w, scale, trees, d.qA.data());
  std::copy(d.qH.begin() + nnz_begin, d.qH.begin() + nnz_end, d.qA_factor.begin() + nnz_begin);
  if (scale != 1.0) {
    for (int i = trees.dof_begin; i < trees.dof_end; ++i) d.qA_factor[layout.row_adr[i]] *= scale;
  }
  TreeSparseMultiplyRange(layout, trees.dof_begin, trees.dof_end, d.qA.data(), d.v_free.data(),
                          d.solver_rhs.data());
}

}  // namespace alsim
