// The theta-method of eq. (2) of the SubADMM paper, tree by tree: M_k (v_{k+1} - v_k) = h f_k +
// J^T lambda with v_hat = theta v_k + (1 - theta) v_{k+1}. Eliminating v_{k+1} with damping D
// implicit in v_hat gives
//   (M + (1 - theta) h D) qacc = f,   f = actuator + passive - bias + applied forces,
//   v_{k+1} = v_k + h qacc,   v_hat = v_k + (1 - theta) h qacc,
// and the constraint solvers' problem A v_hat = b + J^T lambda with
//   A = (M + (1 - theta) h D) / (1 - theta),   b = A v_free (engine/solver/solver.h).
// The stage order around these kernels is engine/sim/step.cc's.
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// qH = M + (1 - theta) h D, then its tree LDL^T factor (the sparsity of M), for `trees`.
void FactorStepMatrixOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees);

// The forces of eq. (2) belong to the instant t_k + theta h, where the position is q_theta and the
// velocity v_theta = v_k + theta h qacc. Velocity-dependent bias forces (Coriolis, centrifugal)
// evaluated at v_k instead would make every theta first-order accurate; for theta > 0 one
// predictor-corrector pass re-evaluates them at the predicted v_theta (M and its factor are
// unchanged: they depend on q_theta only). theta = 0 stays explicit, as MuJoCo's Euler.
void AccelerationOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees);

// v_free = v_k + (1 - theta) h qacc, and the solver's A = (M + (1 - theta) h D) / (1 - theta) and
// b = A v_free of eq. (2), from qH (factored) and M: A's tree LDL^T is qH's with D divided by
// 1 - theta. Formed before collision knows whether the step has constraints, so a step without
// any pays for it too (a copy and a product per tree, small beside the factorization).
void SolverProblemOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees);

}  // namespace alsim
