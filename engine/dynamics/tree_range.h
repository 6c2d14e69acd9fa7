// A run of whole kinematic trees hanging from the world: bodies [body_begin, body_end) and their
// dofs [dof_begin, dof_end). MuJoCo numbers bodies depth-first and dofs by body, so every tree
// (every subsystem, every static tree) is such a run. Trees share nothing in the smooth dynamics,
// so the *OfTrees stages of engine/dynamics may run on different ranges in parallel.
#pragma once

namespace alsim {

struct TreeRange {
  int body_begin = 0;
  int body_end = 0;
  int dof_begin = 0;
  int dof_end = 0;
};

}  // namespace alsim
