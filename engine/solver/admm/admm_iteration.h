// One island's ADMM iteration, written once for SubADMM (Algorithm 2, lines 8-17) and its
// ablations "No Sub" (eq. 28) and "No Body": each plugs in its split (the velocity step, the
// constraint step and the refactorization) and the driver runs the rest: the residuals of eq.
// (42) and the stop test, the adaptive beta of eq. (43), [OURS] the stall stop, and the hooks for
// acceleration. The dual residual costs a J^T gather, so it is computed only where it decides
// something: a stop needs theta_p + theta_d < tolerance (impossible while theta_p alone exceeds
// it), eq. (43) and the stall test read it on their check iterations only, and the cap, the
// deadline and an interrupt end the iteration with it reported.
#pragma once

#include <limits>
#include <vector>

#include "engine/solver/admm/admm_penalty.h"
#include "engine/solver/solve_statistics.h"
#include "engine/solver/solver_options.h"
#include "engine/solver/stop_test.h"

namespace alsim {

// The stall stop of the ADMM solvers [OURS]. An island whose slacks have stopped moving (theta_d
// below the tolerance) while theta_p has not fallen by 1% since the previous check of eq. (43)
// has reached the fixed point of contacts that admit no exact solution (on humanoid100, a box
// sliding and turning on four corners whose De Saxce terms no rigid motion meets): theta_p
// stays put, lambda drifts where J^T does not see it, and v no longer changes, so more
// iterations would change nothing but beta, which eq. (43) then drives to its cap. It never
// fires with tolerance 0 (Table III). One per island solve.
class StallTest {
 public:
  // Whether the island has stalled after `iteration` iterations with theta_p = primal and
  // theta_d = dual; only eq. (43)'s check iterations are looked at.
  bool Stalled(double primal, double dual, int iteration, const SolverOptions& options);

 private:
  double primal_at_last_check_ = std::numeric_limits<double>::infinity();
};

// Records one finished ADMM iteration of an island (its count and eq. 42 residuals) and says
// whether to stop (Algorithm 2, line 13): CountIterationAndCheckStop on theta_p + theta_d, or
// [OURS] when `stall` finds the island stalled (then result->stalled).
bool RecordAdmmIterationAndCheckStop(double primal, double dual, const SolverOptions& options,
                                     double deadline_us, StallTest* stall,
                                     IslandSolveResult* result);

// The ADMM family's own figure of the step: "stalled_islands", the islands the stall test
// stopped (their contacts admit no exact solution).
void AddAdmmFigures(const std::vector<IslandSolveResult>& islands, SolverStatistics* stats);

// Iterates one island until it stops, from the penalty *beta (result->beta0 set, the split's
// matrices and z^0 ready):
//   velocity_step(iteration, beta)       eq. (34) or (28): v from z and lambda
//   constraint_step(iteration) -> theta_p  eqs. (35)-(39): lambda and z per constraint
//   dual_residual(beta) -> theta_d       eq. (42), only when needed (see the file comment)
//   change_penalty(beta) -> ok           after eq. (43) changed beta: new penalties, refactor
//   after_iteration(iterations, changed) acceleration between iterations (SubADMM's Anderson)
// `history`, when not null, gets theta_p + theta_d of every iteration. Returns false when
// change_penalty failed (a broken input: the caller keeps the island's v_free); *beta is the
// final penalty either way.
template <class VelocityStep, class ConstraintStep, class DualResidual, class ChangePenalty,
          class AfterIteration>
bool IterateAdmmIsland(const SolverOptions& options, double deadline_us, double* beta,
                       IslandSolveResult* result, std::vector<double>* history,
                       const VelocityStep& velocity_step, const ConstraintStep& constraint_step,
                       const DualResidual& dual_residual, const ChangePenalty& change_penalty,
                       const AfterIteration& after_iteration) {
  StallTest stall;
  while (true) {
    const int iteration = result->iterations + 1;
    velocity_step(iteration, *beta);
    const double primal = constraint_step(iteration);
    const bool dual_needed =
        history != nullptr || primal < options.tolerance || iteration >= options.max_iterations ||
        deadline_us > 0 || IsBetaCheckIteration(iteration, options) ||
        (options.interrupt != nullptr && options.interrupt->load(std::memory_order_relaxed));
    const double dual =
        dual_needed ? dual_residual(*beta) : std::numeric_limits<double>::infinity();
    if (history != nullptr) history->push_back(primal + dual);
    if (RecordAdmmIterationAndCheckStop(primal, dual, options, deadline_us, &stall, result)) {
      return true;
    }
    const double adapted =
        AdaptedBeta(*beta, result->beta0, primal, dual, result->iterations, options);
    const bool changed = adapted != *beta;
    if (changed) {
      *beta = adapted;
      if (!change_penalty(*beta)) return false;
    }
    after_iteration(result->iterations, changed);
  }
}

}  // namespace alsim
