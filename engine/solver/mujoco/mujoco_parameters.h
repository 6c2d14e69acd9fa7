// The knobs of the MuJoCo-model Newton solver (engine/solver/newton/newton_solver.h), with MuJoCo
// 2.2.2's defaults.
#pragma once

namespace alsim {

struct MujocoNewtonParameters {
  // MuJoCo's opt.tolerance: an island stops once its scaled cost improvement or scaled gradient
  // falls below this (both divided by the island's mean inertia times max(1, dofs), in MuJoCo's
  // acceleration units, as mj_solNewton); 0 iterates to the cap.
  double tolerance = 1e-8;
  // The exact line search's most evaluations of the cost's first and second derivative along a
  // direction (MuJoCo's 50).
  int max_line_search = 50;
  // Follow the rows' state changes between Newton iterations by rank-1 updates of H's tree factor
  // where they cost less than factoring again (MuJoCo's incremental Hessian; newton_solver.h);
  // off factors H afresh every iteration (the same answer up to rounding).
  bool rank_updates = true;
};

}  // namespace alsim
