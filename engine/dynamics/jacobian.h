// Jacobians of points and bodies: the linear maps from qvel to world-frame velocities. Only the
// dofs on a body's path to the world move it; they are the body's last dof and its dof_parent
// chain (branch-induced sparsity), so the body-level form lists those dofs and stores only their
// columns, as the per-body contact terms of the SubADMM solver need.
#pragma once

#include <Eigen/Core>

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

using Jacobian3 = Eigen::Matrix<double, 3, Eigen::Dynamic>;
using Jacobian6 = Eigen::Matrix<double, 6, Eigen::Dynamic>;

// Number of dofs on the path from `body` to the world (0 for the world and static bodies).
int BodyPathLength(const Data& d, int body);

// Writes the dofs on the path from `body` to the world to dofs[0 .. n), nearest first (so in
// decreasing order), and returns n = BodyPathLength(d, body).
int BodyPathDofs(const Data& d, int body, int* dofs);

// Column c of the compact body Jacobian maps qvel[dofs[c]] (dofs from BodyPathDofs) to the body's
// spatial velocity (angular velocity, linear velocity of the body frame origin xpos), both in the
// world frame: a rotation about axis a through point p contributes (a, a x (xpos - p)) per unit
// rate. `jac` needs at least BodyPathLength columns; needs Kinematics().
void BodyJacobian(const Model& m, const Data& d, int body, Eigen::Ref<Jacobian6> jac);

// Dense Jacobians (3 x nv) of the translational and rotational velocity of the world point
// `point` attached to `body`: v_point = jacp qvel, omega = jacr qvel. Columns of dofs off the
// body's path are zero. Needs Kinematics().
void PointJacobian(const Model& m, const Data& d, int body, const Vec3& point,
                   Eigen::Ref<Jacobian3> jacp, Eigen::Ref<Jacobian3> jacr);

}  // namespace alsim
