// The position update of one joint on the configuration manifold, the kernel of
// IntegratePositions (engine/sim/integrate_positions.h), for callers that move only some trees
// (a solver evaluating its rows at an island's trial positions: engine/solver/island_kinematics.h).
#pragma once

#include "engine/model/model.h"

namespace alsim {

// qpos <- qpos (+) dt * qvel for joint j: hinge and slide coordinates and a free joint's position
// add linearly; free and ball quaternions rotate by the body-frame angular velocity,
// q <- q exp(w dt / 2), and stay unit length. qvel and qpos are the whole model's arrays.
void IntegrateJointPosition(const Model& m, int j, const double* qvel, double dt, double* qpos);

}  // namespace alsim
