// Reset of an instance: the model's initial state, optionally perturbed by uniform noise (the
// reset of RL environments).
#pragma once

#include <random>

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// Puts a fresh Data of m in *d: time 0, qpos0, zero velocity and controls, no warm start. d's
// solver is kept (a solver holds no state between steps, only its allocations).
void ResetData(const Model& m, Data* d);

// The reset noise on a fresh Data: with noise > 0, uniform [-noise, noise] added to every hinge
// and slide position and to every velocity, drawn from `rng` in joint and then dof order; then
// Kinematics. False when a position or velocity is not finite (*d should then not be stepped).
bool ApplyResetNoise(const Model& m, double noise, std::mt19937_64& rng, Data* d);

// ResetData, then ApplyResetNoise.
bool ResetWithNoise(const Model& m, double noise, std::mt19937_64& rng, Data* d);

}  // namespace alsim
