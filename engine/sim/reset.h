// Reset of an instance: the model's initial state or one of its keyframes, optionally perturbed
// by uniform noise (the reset of RL environments).
#pragma once

#include <random>

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// Puts a fresh Data of m in *d: time 0, qpos0, zero velocity and controls, no warm start, the
// deformables' vertices at their rest positions (Model::vert_pos0) with zero velocity. d's
// solver is kept (a solver holds no state between steps, only its allocations).
void ResetData(const Model& m, Data* d);

// MuJoCo's mj_resetDataKeyframe: ResetData, then keyframe `key`'s time, qpos, qvel and ctrl
// (Model::key_*; alsim holds no activations or mocap poses). key -1 is ResetData alone, the
// model's initial state. Any other key outside [0, nkey) returns false and leaves *d unchanged
// (MuJoCo resets to the initial state then); FindKeyframe (engine/model/model.h) turns a name or
// index from a user into a key with a message that lists the keyframes. Like ResetData, no
// stage runs: ApplyResetNoise (noise 0 for none) computes the kinematics.
bool ResetDataKeyframe(const Model& m, Data* d, int key);

// The reset noise on a fresh Data (ResetData or ResetDataKeyframe, the noise then on top of
// the keyframe's state): with noise > 0, uniform [-noise, noise] added to every hinge
// and slide position and to every velocity, drawn from `rng` in joint and then dof order; then
// Kinematics and PlaceAttachedVertices. False when a position or velocity is not finite (*d
// should then not be stepped).
bool ApplyResetNoise(const Model& m, double noise, std::mt19937_64& rng, Data* d);

// Puts each deformable vertex that a body carries (Model::vert_body > 0) at that body's frame
// (d->xpos, d->xmat: Kinematics must have run at the current qpos) times vert_body_offset, with
// zero velocity. Free and world-pinned vertices are left as they are. Without it (ResetData,
// ResetDataKeyframe alone) attached vertices keep their rest positions until the first step;
// at qpos0 the two agree to rounding.
void PlaceAttachedVertices(const Model& m, Data* d);

// ResetData, then ApplyResetNoise.
bool ResetWithNoise(const Model& m, double noise, std::mt19937_64& rng, Data* d);

}  // namespace alsim
