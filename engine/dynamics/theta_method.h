// Two theta-methods, tree by tree.
//
// SubADMM's eq. (2): M_k (v_{k+1} - v_k) = h f_k + J^T lambda with v_hat = theta v_k +
// (1 - theta) v_{k+1}. Eliminating v_{k+1} with damping D implicit in v_hat gives
//   (M + (1 - theta) h D) qacc = f,   f = actuator + passive - bias + applied forces,
//   v_{k+1} = v_k + h qacc,   v_hat = v_k + (1 - theta) h qacc,
// and the constraint solvers' problem A v_hat = b + J^T lambda with
//   A = (M + (1 - theta) h D) / (1 - theta),   b = A v_free (engine/solver/solver.h).
//
// The SAP paper's two-stage theta method (Sec. IV, eqs. 6-14; digest seed-001-sap.md section 3),
// with theta = 0 above: positions move by q = q0 + h v^{theta_vq} (eq. 8), and the joints' linear
// springs F1 = -K (q^{theta_q} - q_ref) - D v^{theta_v} are implicit. With
// q^{theta_q} - q0 = theta_q h (v0 + theta_vq (v - v0)) (N = I on hinge and slide joints) the
// momentum balance (9) is linear in v:
//   A (v* - v0) = h (f(q0, v0) - theta_q h K v0),   A = M + h^2 theta_q theta_vq K + h theta_v D,
// the free velocity of stage 1 (eq. 10, in closed form), and stage 2 solves A (v - v*) = J^T gamma
// (eq. 14; A is eq. 11). [OURS] M, the bias forces, tendons' and ball and free joints' springs
// and all geometry are taken at q0 (the digest's recommendation for the geometry; Drake's choice
// for M), so the scheme has its order where M is constant and the forces are joint springs and
// dampers (the spring-cylinder of Sec. X-B), and first order otherwise.
// Euler is (theta_q, theta_v, theta_vq) = (0, 1, 1): MuJoCo 2.2.2's Euler with its implicit
// damping, the default, and the only weights that combine with SubADMM's theta > 0. The stage order
// around these kernels is engine/sim/step.cc's.
#pragma once

#include "engine/data/data.h"
#include "engine/dynamics/tree_range.h"
#include "engine/model/model.h"

namespace alsim {

// The weights of both methods (the file comment); the defaults are the Euler step.
struct ThetaWeights {
  double theta = 0;     // SubADMM's eq. (2), in [0, 1)
  double theta_q = 0;   // eq. (6): where springs see the position
  double theta_v = 1;   // eq. (6): where dampers see the velocity
  double theta_vq = 1;  // eq. (8): the velocity that moves the positions
};

// qH = M + (1 - theta) h theta_v D + h^2 theta_q theta_vq K, then its tree LDL^T factor (the
// sparsity of M), for `trees`.
void FactorStepMatrixOfTrees(const Model& m, Data& d, const ThetaWeights& w,
                             const TreeRange& trees);

// The forces of eq. (2) belong to the instant t_k + theta h, where the position is q_theta and the
// velocity v_theta = v_k + theta h qacc. Velocity-dependent bias forces (Coriolis, centrifugal)
// evaluated at v_k instead would make every theta first-order accurate; for theta > 0 one
// predictor-corrector pass re-evaluates them at the predicted v_theta (M and its factor are
// unchanged: they depend on q_theta only). theta = 0 stays explicit, as MuJoCo's Euler. The
// springs' implicit part adds -theta_q h K v0 to f.
void AccelerationOfTrees(const Model& m, Data& d, const ThetaWeights& w, const TreeRange& trees);

// v_free = v_k + (1 - theta) h qacc, and the solver's A = qH / (1 - theta) and b = A v_free, from
// qH (factored) and M. Formed before collision knows whether the step has constraints, so a
// step without any pays for it too (a copy and a product per tree, small beside the
// factorization).
void SolverProblemOfTrees(const Model& m, Data& d, const ThetaWeights& w, const TreeRange& trees);

}  // namespace alsim
