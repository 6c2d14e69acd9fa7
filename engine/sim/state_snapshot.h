// The complete state of an instance as bytes, for saving and resuming a simulation bit for bit
// (the service's GetState / SetState): everything that a Step() reads from before it, so that
// restoring a snapshot into any Data of the same Model and stepping gives bit-identical results
// to stepping the instance it was taken from.
//
// What determines the future of an instance (engine/sim/step.cc and the stages it calls):
//   - time, qpos, qvel, ctrl: the state proper;
//   - vert_xpos, vert_xvel: the tetrahedral deformables' vertex state (Model::nvert vertices);
//   - xfrc_applied: an input that stays until changed, as ctrl (MuJoCo saves both with the state);
//   - warm_start (keys, positions, impulses, angular impulses of condim 4/6 contacts, Delassus
//     traces and their ages): the impulses that
//     BuildConstraints starts the next solve from, and the ADMM penalty scales' traces that
//     persisting constraints keep (SolverOptions::delassus_refresh_steps);
//   - geom_speculative_margin: the broadphase and the narrowphase read the margins every step,
//     but SpeculativeMarginsOfBodies() rewrites them only when StepOptions::constraints.
//     speculative_contacts is on; a step with it off keeps the margins of the last step that had
//     it on, so they are state too.
// Everything else in Data is recomputed by each Step before it is read: kinematics, velocities,
// the mass matrix and its factors, forces, the sweep order of the broadphase (sorted with ties
// broken by geom id, so its result does not depend on the order it starts from), contacts,
// constraints, islands, v_free / v_hat. The solver object (Data::solver) holds only scratch and
// CHOLMOD's symbolic analysis, which is a deterministic function of the matrix pattern; none of
// it carries information from one step to the next (tests/physics/state_snapshot_test.cc checks
// that restoring into an instance with a used solver and into a fresh one give the same bits).
//
// Format, version 5: little-endian, no padding; u32 / i32 / u64 integers, f64 IEEE-754 doubles
// (bit patterns kept, so -0.0 and NaN payloads survive).
//   offset  type          field
//   0       char[8]       magic "ALSIMST1"
//   8       u32           format version (5; version 4 had no vertex state, version 3 no
//                         angular impulses, version 2 no xfrc_applied, version 1 no Delassus
//                         traces)
//   12      u32[8]        model sizes: nq, nv, nu, nbody, njnt, ngeom, neq, nsubsystem
//   44      u64           ModelFingerprint(m)
//   52      f64           time
//   60      u32 n, f64[n] qpos (n = nq)
//           u32 n, f64[n] qvel (n = nv)
//           u32 n, f64[n] ctrl (n = nu)
//           u32 b, f64[6b] xfrc_applied, per body (force, torque): b = 0 when every component is
//                         +0.0 (no forces: the usual case costs 4 bytes), else b = nbody
//           u32 n, f64[n] geom_speculative_margin (n = ngeom)
//           u32 w         warm-start entries, then
//           i32[3 w]      keys (kind, a, b) per entry, ascending (ConstraintKeyLess)
//           f64[3 w]      positions (x, y, z) per entry
//           f64[3 w]      impulses (x, y, z) per entry
//           f64[w]        Delassus traces per entry (negative: none)
//           i32[w]        their ages in steps per entry (>= 0)
//           u32 a, f64[3a] angular impulses (x, y, z) per entry (WarmStart::angular_impulse, the
//                         torsional and rolling rows of condim 4/6 contacts): a = 0 when every
//                         component is +0.0 (condim 3 only: 4 bytes), else a = w
//           u32 n         deformable vertices (n = nvert; 0 without deformables: 4 bytes), then
//           f64[3n]       vert_xpos (x, y, z) per vertex, world
//           f64[3n]       vert_xvel (x, y, z) per vertex, world
//           u64           checksum: 64-bit FNV-1a over every byte before it
// Total: 60 + 20 + 8 (nq + nv + nu + 6 b + ngeom) + 4 + 72 w + 4 + 24 a + 4 + 48 n + 8 bytes.
// Version 4 is version 5 without the vertex state (read as the rest positions Model::vert_pos0
// and zero velocities); version 3 is version 4 without the angular impulses (read as zero);
// version 2 is version 3 without the xfrc_applied field, read with no applied forces.
#pragma once

#include <cstdint>
#include <string>

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// "ALSIMST1" and the format version that SaveStateSnapshot writes; RestoreStateSnapshot reads it
// and versions 2 to 4.
inline constexpr char kStateSnapshotMagic[8] = {'A', 'L', 'S', 'I', 'M', 'S', 'T', '1'};
inline constexpr std::uint32_t kStateSnapshotVersion = 5;

// A 64-bit FNV-1a hash of what makes a state of one model meaningless for another: the sizes (nq,
// nv, nu, nbody, njnt, ngeom, neq, nsubsystem, npair), the timestep, gravity and the disable flags
// (constraints, limits, equalities, contact, parent filtering), the tree (body parents, joint
// types and bodies, dof parents), the geoms (type, body, size), body masses and the names of
// bodies, joints, geoms and actuators. The same scene imported twice has the same fingerprint.
// Deformables are not part of it (it is what it was before they existed); a snapshot's vertex
// count is checked against m.nvert instead.
std::uint64_t ModelFingerprint(const Model& m);

// Serializes everything that determines the future of `d` under `m` (see the file comment). Does
// not validate: a diverged instance (NaN in qvel) is saved as it is, and refused by
// RestoreStateSnapshot.
std::string SaveStateSnapshot(const Model& m, const Data& d);

// Restores a snapshot of SaveStateSnapshot into d, which must have been constructed from m (or an
// identical model). The snapshot is parsed and validated completely before anything is written:
// on any problem it returns false with a one-line reason in *error (when error is not null) and
// leaves d unchanged. Refused: a wrong magic or version, truncated or trailing bytes, a checksum
// mismatch, a snapshot of a different model (sizes or fingerprint, or a deformable vertex count
// other than m.nvert: the fingerprint does not cover deformables), a NaN or infinite time, qpos,
// qvel, ctrl, xfrc_applied, warm-start or vertex state value, a negative speculative margin, a
// warm-start key of unknown kind or out of ascending order (the next step looks keys up by binary
// search), and a free or ball joint quaternion whose norm differs from 1 by more than 1e-6 (Step
// always leaves them normalized).
//
// On success, d holds the snapshot's state, and the derived quantities are those of Forward(m, d)
// (theta 0) at it: kinematics, velocities, mass matrix, forces. The outputs of the last step
// (contacts, constraints, islands, solver statistics) are cleared, as in a new Data, since no step
// has been taken from this state. Step recomputes all derived quantities itself, so its results do
// not depend on them, nor on whether d is fresh or has run before.
bool RestoreStateSnapshot(const Model& m, const std::string& bytes, Data& d, std::string* error);

}  // namespace alsim
