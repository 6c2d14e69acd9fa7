// SubADMM's own knobs (subadmm_solver.h), beside the ADMM family's (AdmmParameters). Each is
// [OURS], beyond Algorithm 2, and switchable back to the paper.
#pragma once

namespace alsim {

struct SubAdmmParameters {
  // With delassus penalties: a constraint among trees that persists from step to step (its warm
  // start) keeps its Delassus trace for this many steps before it is computed again; 1 computes
  // every trace in every step (as the ADMM baselines always do). The scales only precondition the
  // iteration and a robot's effective masses change slowly. The traces and their ages are part of
  // the state snapshot.
  int delassus_refresh_steps = 16;
  // Anderson acceleration of the iteration over (z, lambda / beta_i) with this many history
  // columns, 0 for none (engine/solver/admm/anderson.h). Valid range 0 to 8.
  int anderson_memory = 5;
  // An island still iterating after this many iterations switches each of its trees with at most
  // 48 constraint rows to the constraint-space response of eq. (34) (one rows x rows product per
  // velocity step instead of the tree solve; the same iterates up to rounding). Building the
  // response costs several tree velocity steps, so it waits for islands that run long. 0 keeps
  // the tree solve throughout.
  int response_after_iterations = 24;
};

}  // namespace alsim
