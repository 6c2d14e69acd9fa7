// The two plain semismooth-Newton baselines of Table II (Sec. VII-D of the SubADMM/CANAL paper;
// digest seed-004-subadmm-canal.md 5.1 and 8.4), as inner solves of CANAL's AL loop
// (canal_solver.h: the same beta schedule, outer stop test and warm start, so that they differ
// from CANAL only here). Both find the root of eq. (19),
//   r(v) = A v - b - sum_i J_i^T T(lambda^l_i - beta_i (J_i v + e_i))    (u^l = -lambda^l)
// with the STRICT operator T of eq. (17) on contacts (no De Saxce shift: the strict operator
// meets the Signorini-Coulomb conditions exactly, Prop. 2), by Newton steps on
//   J_r = dr/dv = A + sum_i beta_i J_i^T (dT/dx)_i J_i     (digest 4.3: not symmetric in slip)
// with the merit f(v) = 1/2 ||r(v)||^2 and its (generalized) gradient J_r^T r:
//   TRDogleg: Nocedal & Wright's trust-region dogleg (Algorithm 4.1 with the dogleg of Sec. 4.1;
//     for equations, Sec. 11.2) on the model m(p) = 1/2 ||r + J_r p||^2. The dogleg runs from the
//     Cauchy point p_U = -(||g||^2 / ||J_r g||^2) g, g = J_r^T r, to the Newton point
//     p_N = -J_r^{-1} r; rho = (f(v) - f(v + p)) / (m(0) - m(p)) accepts the step when rho > eta
//     and sets the radius: ||p|| / 4 when rho < 1/4, doubled when rho > 3/4 on the boundary.
//     [OURS] Each inner loop starts with the radius ||p_N|| of its first step (the full Newton
//     step is tried first); the radius never exceeds 1e10 m/s.
//   DampedSN: De Luca, Facchinei & Kanzow (1996)'s damped semismooth Newton: d = p_N unless the
//     solve fails or d is not a descent direction of the merit, g^T d > -rho ||d||^p (their
//     rho = 1e-8 and p = 2.1), then d = -g; then Armijo backtracking t = 1, 1/2, 1/4, ... until
//     f(v + t d) <= f(v) + sigma t g^T d.
// An iteration (accepted or rejected trial step, one direction with its backtracking) is one
// inner step; the loop stops when ||r|| < AlIsland::Tolerance() (CANAL's test), after
// CanalParameters::max_newton_steps steps, or when the merit cannot be reduced any more (the
// radius fell to rounding of v, or backtracking ran out): those two stops are the failures that
// Table II counts. By default a failure ends the baseline's AL loop and CANAL solves the island
// instead (canal_solver.h).
//
// J_r is assembled dense over the island's dofs and factored by an LU with partial pivoting
// written here. [OURS] Dense, not a general sparse LU: the islands of the Table II scenes are two
// boxes (12 dofs), where a dense factorization (n^3 / 3 flops) costs less than a sparse LU's
// symbolic work, needs no new dependency (CHOLMOD is Cholesky only) and allocates nothing once
// its grow-only storage is warm. The cost grows as n^3, so these ablations are for small islands
// only. A pivot below n eps max|J_r| counts as singular: no Newton point that step.
#pragma once

#include <vector>

#include "engine/solver/canal/al_island.h"
#include "engine/solver/canal/canal_parameters.h"
#include "engine/solver/solver_options.h"

namespace alsim {

// One island's storage for the dense baselines: J_r, its LU factors and the step vectors. Grows
// to the largest island it has seen and is then reused.
struct DenseNewtonWorkspace {
  int n = 0;
  std::vector<double> jacobian;  // J_r, column-major n x n, as last assembled
  std::vector<double> factors;   // L (unit, below the diagonal) and U of P J_r
  std::vector<int> pivot;        // the row swapped with row k at elimination step k
  // Per dof: the gradient g = J_r^T r, the Newton and Cauchy points, the step, J_r times a
  // vector, the trial velocity and its residual, A v scratch.
  std::vector<double> gradient, newton, cauchy, step, product, trial, trial_residual, mass_product;

  void Resize(int size);
};

// J_r = A + sum_i beta_i J_i^T D_i J_i at the island's last Evaluate(with_derivative = true), dense
// column-major n x n into `out` (D_i not symmetric: entry (a, b) += J_i(:, a)^T D_i J_i(:, b)).
void AssembleResidualJacobian(const AlIsland& island, double* out);

// Factors the column-major n x n matrix `a` in place as P a = L U (partial pivoting); false when a
// pivot is at most n eps max|a| (singular to working precision) or a is zero.
bool DenseLuFactor(double* a, int n, int* pivot);
// Solves (L U) x = P b in place on b, with DenseLuFactor's output.
void DenseLuSolve(const double* factors, const int* pivot, int n, double* b);

// One island's record of an assembled J_r, kept when CanalSolver records history (tests).
struct NewtonJacobianRecord {
  double beta = 0;                    // the outer loop's penalty
  std::vector<double> penalty;        // beta_i per constraint of the set (0 outside the island)
  std::vector<int> dofs;              // island dof k -> global dof
  std::vector<double> velocity;       // v at the assembly, per island dof
  std::vector<double> residual;       // r(v), per island dof
  std::vector<double> jacobian;       // J_r, column-major
  std::vector<double> outer_impulse;  // lambda^l, every row of the constraint set
  std::vector<double> shifted_bias;   // e (soft rows 0), every row of the constraint set
};

// The counts an inner solve adds to the island's statistics.
struct NewtonBaselineCounts {
  int factorizations = 0;  // LU factorizations of J_r
  int rejected_steps = 0;  // TRDogleg: trial steps with rho <= eta
  int evaluations = 0;     // DampedSN: merit evaluations of the backtracking searches
  int gradient_steps = 0;  // DampedSN: directions -g taken instead of the Newton point
};

// The inner solves, from `velocity` (island dofs; updated in place) at the island's outer
// iterate. On return the island's per-row arrays hold lambda = T(x) etc. at the final velocity,
// and `residual` r there. `dofs` (global dof per island dof) and `record` (null: none) only
// serve the record.
InnerSolveResult TrustRegionDoglegSolve(AlIsland& island, double* velocity, double* residual,
                                        const CanalParameters& parameters,
                                        const SolverOptions& options, double deadline_us,
                                        DenseNewtonWorkspace& work, NewtonBaselineCounts* counts,
                                        const int* dofs, std::vector<NewtonJacobianRecord>* record);
InnerSolveResult DampedSemismoothNewtonSolve(AlIsland& island, double* velocity, double* residual,
                                             const CanalParameters& parameters,
                                             const SolverOptions& options, double deadline_us,
                                             DenseNewtonWorkspace& work,
                                             NewtonBaselineCounts* counts, const int* dofs,
                                             std::vector<NewtonJacobianRecord>* record);

}  // namespace alsim
