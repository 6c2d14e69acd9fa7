// Position update on the configuration manifold.
#pragma once

#include "engine/model/model.h"

namespace alsim {

// qpos <- qpos (+) dt * qvel: hinge and slide coordinates and free-joint positions add linearly;
// free and ball quaternions rotate by the body-frame angular velocity, q <- q exp(w dt / 2), and
// stay unit length.
void IntegratePositions(const Model& m, const double* qvel, double dt, double* qpos);

// The inverse: qvel (nv) such that qpos2 = qpos1 (+) dt * qvel, a quaternion's part the rotation
// vector of q1^-1 q2 (body frame) over dt (the smaller rotation: angles up to pi).
void DifferencePositions(const Model& m, const double* qpos1, const double* qpos2, double dt,
                         double* qvel);

}  // namespace alsim
