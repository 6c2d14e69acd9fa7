// Coriolis, centrifugal and gravity forces by the recursive Newton-Euler algorithm at zero joint
// acceleration (RBDA §5.3, Table 5.1, with gravity as a fictitious base acceleration, §5.3).
#pragma once

#include <vector>

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// Computes d.qfrc_bias (and the scratch d.cacc, d.cfrc) such that M qacc + qfrc_bias = applied
// generalized forces (MuJoCo's sign convention); needs Kinematics() and Velocity().
//   forward:  a_b = a_parent + sum over b's dofs of cdof_dot[k] qvel[k],  a_world = (0, -g)
//             f_b = I_b a_b + v_b x* I_b v_b                               (RBDA eq. 5.9)
//   backward: f_parent += f_b;  qfrc_bias[k] = cdof[k]^T f_body(k)         (RBDA eqs. 5.10-5.11)
void BiasForces(const Model& m, Data& d);

// The stages of BiasForces: the world's acceleration (gravity), then the bodies and dofs of
// `trees`.
void BiasForcesOfWorld(const Model& m, Data& d);
void BiasForcesOfTrees(const Model& m, Data& d, const TreeRange& trees);

// d qfrc_bias / d qvel by forward-mode differentiation of BiasForces at the current state (its
// Kinematics() and Velocity()): for each dof j the tangents of RBDA's recursion in the direction
// of qvel_j, over the bodies j moves (its body's subtree) and then their ancestors, which the
// backward pass reaches:
//   dv_b = cdof_j for b in the subtree,  d cdof_dot[k] = dv_before(k) x cdof[k],
//   da_b = da_parent + sum_k (d cdof_dot[k] qvel[k] + cdof_dot[k] [k = j]),
//   df_b = I_b da_b + dv_b x* I_b v_b + v_b x* I_b dv_b,  df_parent += df_b,
//   d qfrc_bias[k] / d qvel_j = cdof[k]^T df_body(k).
// Gravity drops out; qfrc_bias is quadratic in qvel, so this is also its exact central difference.
// Add() adds scale times it to `out`, nv x nv, row-major: out[k * nv + j] += scale d qfrc_bias[k]
// / d qvel[j] (only entries of a dof and its subtree's or ancestors' dofs: the rest are zero).
class BiasForceVelocityJacobian {
 public:
  explicit BiasForceVelocityJacobian(const Model& m);
  void Add(const Model& m, const Data& d, double scale, double* out);

 private:
  std::vector<int> subtree_end_;  // per body: one past the last body of its subtree
  std::vector<Vec6> velocity_, acceleration_, force_;  // per body: the tangents
  std::vector<Vec6> dof_dot_;                          // per dof: d cdof_dot
};

}  // namespace alsim
