// Coriolis, centrifugal and gravity forces by the recursive Newton-Euler algorithm at zero joint
// acceleration (RBDA §5.3, Table 5.1, with gravity as a fictitious base acceleration, §5.3).
#pragma once

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

}  // namespace alsim
