// Position update on the configuration manifold.
#pragma once

#include "engine/model/model.h"

namespace alsim {

// qpos <- qpos (+) dt * qvel: hinge and slide coordinates and free-joint positions add linearly;
// free and ball quaternions rotate by the body-frame angular velocity, q <- q exp(w dt / 2), and
// stay unit length.
void IntegratePositions(const Model& m, const double* qvel, double dt, double* qpos);

}  // namespace alsim
