// The parameters of the non-smooth Newton solver (`--solver nsn`; Macklin et al. 2019, seed 002;
// digest seed-002-nsn.md sections 4-6 and 12) with their defaults, and its statistics.
#pragma once

#include "engine/solver/nsn/ncp.h"

namespace alsim {

// The linear solve of each Newton iteration on the Schur system (59) (Sec 8.2; Fig. 11 and 18's
// ablations), each with the Jacobi preconditioner.
enum class NsnLinearSolver {
  kConjugateResidual,  // Jacobi-PCR, the paper's: monotone residual
  kConjugateGradient,  // Jacobi-PCG
  kJacobi,             // Jacobi iteration
  kGaussSeidel,        // Gauss-Seidel sweeps
  kLdlt,               // dense L D L^T of the Schur matrix, formed from the operator: a direct
                       // solve (the paper's LDL^T ablation; O(rows^3), rows^2 doubles a system)
};

// Option names: "pcr", "pcg", "jacobi", "gauss-seidel", "ldlt"; "fb" (Fischer-Burmeister),
// "min-map"; "effective-mass", "identity", "h2". Parse* return false for an unknown name. Each fits
// in std::string's small buffer (15 characters), so that validating options allocates nothing (Step
// validates once per thread).
const char* NsnLinearSolverName(NsnLinearSolver solver);
bool ParseNsnLinearSolverName(const char* name, NsnLinearSolver* solver);
const char* NcpFunctionName(NcpFunction function);
bool ParseNcpFunctionName(const char* name, NcpFunction* function);
const char* ComplementarityScalingName(ComplementarityScaling scaling);
bool ParseComplementarityScalingName(const char* name, ComplementarityScaling* scaling);

struct NsnParameters {
  // N, the most Newton iterations of a step (Table 2 fixes 4 to 16 per scene, with no
  // tolerance). [OURS] 50 with the tolerance below: damped by t = 0.75 the error falls by at
  // least 1 - t per iteration once the active set settles.
  int newton_iterations = 50;
  // > 0: the Newton loop stops once |g|_inf <= tol max(1, |A v_free|_inf) (N s) and every row's
  // residual <= tol / h (position rows: |C| <= tol in m or rad; friction rows weighted as in
  // particle_newton.h). 0: the paper's fixed counts. [OURS]: the paper gives none (digest 13).
  double newton_tolerance = 1e-6;
  // t of (61)-(62): the paper's damping for every scene. From u = 0, N iterations with no active
  // row end at (1 - (1 - t)^N) u~; a tree in no island, touching no deformable and without a
  // joint spring is in no system and takes u~ exactly, so that loss applies only where a body
  // has rows.
  double step_fraction = 0.75;
  double regularization = 1e-6;  // eps on the Schur matrix (Sec 8.4): the paper's
  // M, the most linear iterations per Newton iteration (Table 2: 10 to 80), and their relative
  // tolerance on the preconditioned residual (0: the fixed count). [OURS] 100 and 1e-8: an
  // inexact inner solve slows the outer loop where the paper's fixed budgets do not care.
  int linear_iterations = 100;
  double linear_tolerance = 1e-8;
  NsnLinearSolver linear_solver = NsnLinearSolver::kConjugateResidual;
  // [OURS] Once a contact's friction compliance W cycles within a step (it fell at some iterate
  // and then rose again), it is at least this fraction of its W at the previous Newton
  // iteration: W^n = max(W(u^n, lambda^n), friction_memory W^n-1). With W held constant in each
  // linearization (37), redundant contacts of one body fall into a period-2 cycle: a contact
  // inside its cone at zero slip has W = 0 and holds the whole body, so the next solve moves
  // every other contact's friction onto it, past its cone, and the two sets swap (a box on four
  // contacts on a slope steeper than its friction sticks, unconverged). Keeping part of the last
  // W lets the overloaded contacts stay compliant until the body slides. Only on a cycle: applied
  // from the first iterate, the memory also slowed every contact's settling from sliding to
  // sticking (W falling to 0), and at the paper's fixed counts grasps dropped and the arch came
  // apart (BENCHMARKS.md). Fixed points are unchanged: at a solution W = max(W, friction_memory
  // W). 0: the paper's W from the current iterate alone.
  double friction_memory = 0.5;
  // [OURS] Contacts' Jacobian rows (normal and tangents) stay those of q-, while their gap is
  // still evaluated at every iterate (an ablation). Off (the paper's): the rows at the iterate,
  // each body's at its own surface point (nsn_solver.h).
  bool contact_rows_at_start = false;
  // Geometric stiffness (Sec 8.3, (71)-(74) with digest 5.4's sign of (73)) on the deformables'
  // vertex dofs: after each iteration H~_ii = M_ii - min(0, c_i), c_i the change of the
  // constraint force -h J^T lambda (same lambda) between the last two iterates over the step
  // taken; H~ replaces M in H^-1 and the preconditioner, not in g or the factors r (66); the
  // shift starts at 0 every step. Fixed points are unchanged. The linear and Neo-Hookean
  // element rows and the vertices' contact and attachment rows are linear in the vertex
  // positions (K = 0 on them); the corotated rows (R held) are not, and at large strain they
  // need it (BENCHMARKS.md, Fig. 12). Systems without vertices skip it.
  bool geometric_stiffness = true;
  // Hinge and slide springs (stiffness K toward q_spring): on, the paper's compliant joints, a
  // row each in the Schur system (s = q^n - q_spring, c = K s, E = 1 / K; (75)-(80)); off, their
  // Schur complement h^2 K on H's diagonal (implicit springs, the step that row solved exactly
  // gives), whatever the integrator. In reduced coordinates the two give the same converged
  // step; the rows make the linear systems harder (stiff springs on light links are
  // ill-conditioned rows: Fig. 18's beam, where relaxation does not reach the stiffness), H does
  // not. Ball, free and tendon springs stay explicit forces in u~ either way.
  bool spring_rows = false;
  NcpFunction ncp = NcpFunction::kFischerBurmeister;  // the paper's default; min-map: (96)-(98)
  ComplementarityScaling scaling = ComplementarityScaling::kEffectiveMass;  // (66); ablations
};

// What the solver did in one step, over its islands.
struct NsnStatistics {
  int newton_iterations = 0;      // summed over islands
  int max_newton_iterations = 0;  // the most of one island
  int linear_iterations = 0;      // summed over islands and Newton iterations
  int unconverged_islands = 0;    // islands that used every Newton iteration (tolerance > 0)
  double momentum_residual = 0;   // max |g|_inf at an island's last iterate, N s
  double row_residual = 0;        // max weighted |h-vector|_inf there, m/s
  double max_penetration = 0;     // max -C over the contact and limit rows at the end, m (rad)
  double assembly_seconds = 0;    // kinematics, rows and Jacobians (Table 2's "assembly")
  double linear_seconds = 0;      // the linear solves (Table 2's "solve")
};

}  // namespace alsim
