// One time step of an instance: the stage pipeline and the theta-method of the SubADMM paper.
//
// Eq. (2) of the paper: M_k (v_{k+1} - v_k) = t_k f_k + J^T lambda, with the representative
// velocity v_hat = theta v_k + (1 - theta) v_{k+1} that constraints act on and positions move by.
// alsim evaluates M_k and f_k at q_theta = q_k (+) theta t_k v_k and splits the position update
// around it: q_theta = q_k (+) theta h v_k, then q_{k+1} = q_theta (+) (1 - theta) h v_{k+1}, so
// q_{k+1} - q_k = h v_hat as in eq. (2). Each half is an exact drift and the velocity update a
// kick, so the map is symplectic for every theta: theta = 0 is symplectic Euler (MuJoCo's Euler
// integrator), theta = 1/2 the second-order leapfrog ("midpoint"); both keep the energy of a
// conservative system bounded. Joint damping is implicit in v_hat, so any damping is stable.
//
// Contact and joint-limit constraints (J^T lambda) arrive with the solver issue; until then a step
// integrates the smooth dynamics only.
#pragma once

#include "engine/model/model.h"
#include "engine/sim/data.h"

namespace alsim {

struct StepOptions {
  // theta in eq. (2), in [0, 1). Default 0: inelastic contact (a stopped impact stays stopped:
  // v_{k+1,n} = -theta / (1 - theta) v_{k,n} = 0) and symplectic Euler, the usual robotics choice
  // and MuJoCo's default integrator. 1/2 gives the energy-conserving midpoint but elastic impacts.
  double theta = 0.0;
};

enum class StepStatus {
  kOk,
  kInvalidOptions,  // theta outside [0, 1); nothing was changed
  kDiverged,        // the new state has a NaN or infinite entry; the instance needs a reset
};

// Advances d by one m.timestep: q_theta, kinematics, velocities, mass matrix, bias, passive and
// actuator forces, the velocity update, the position update, time. Allocates nothing.
StepStatus Step(const Model& m, Data& d, const StepOptions& options = {});

// Stages 1-5 of Step at the current state without advancing it (kinematics through forces and
// qacc), as MuJoCo's mj_forward: for observers, energy and tests.
void Forward(const Model& m, Data& d, const StepOptions& options = {});

}  // namespace alsim
