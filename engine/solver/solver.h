// The contact solvers behind one interface: SubADMM (Sec. VI of the SubADMM paper), PGS, and the
// ADMM ablations "No Sub" and "No Body" of Table III.
//
// Every solver receives the same problem, per island (engine/island): for each subsystem j in
// the island,
//   A_j v_hat_j = b_j + sum_i J_ij^T lambda_i,   (J_i v_hat, lambda_i) in S_c,i      (eqs. 8, 29)
// with A = (M + (1 - theta) h D) / (1 - theta) and b = A v_free (Data::qA, Data::solver_rhs),
// the constraints of Data::constraints (warm-start impulses in lambda), and writes v_hat
// (Data::v_hat) for the island's dofs and the final impulses. Dofs of subsystems without
// constraints keep v_hat = v_free, set by the caller.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/constraint/build_constraints.h"
#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/solver/solver_options.h"
#include "engine/solver/stop_test.h"

namespace alsim {

class ConstraintSolver {
 public:
  virtual ~ConstraintSolver() = default;
  virtual SolverType type() const = 0;
  // Solves every island of d.constraints / d.islands; see the file comment. `deadline_us` is the
  // time, in microseconds of SteadyMicroseconds(), after which islands stop iterating (0: none).
  virtual void Solve(const Model& m, Data& d, const SolverOptions& options, double deadline_us,
                     SolverStatistics* stats) = 0;
  // A split step's second solve (engine/sim/step.cc): solves again only the islands of
  // d.islands.split, from the impulses of the last Solve; the other islands keep that
  // Solve's outcome. *stats, that Solve's statistics on entry, then reports both solves' time
  // and iterations and, for the re-solved islands, the second solve's accuracy.
  virtual void SolveSplitIslands(const Model& m, Data& d, const SolverOptions& options,
                                 double deadline_us, SolverStatistics* stats) = 0;
  // Whether Solve must run even when the step has no constraint (Step skips it otherwise and
  // takes v_hat = v_free): the non-smooth Newton solver's deformables and joint-spring rows.
  virtual bool SolvesWithoutConstraints() const { return false; }
};

// The registered solvers in the registry's order (engine/solver/solver.cc: every list of solvers
// derives from it), and each one's one-line summary.
std::vector<SolverType> RegisteredSolvers();
const char* SolverSummary(SolverType type);

// The one place solvers are made: the solver of `type` for instances of m, null for a type the
// engine lacks.
SolverHandle CreateSolver(SolverType type, const Model& m);

// Whether the solver of `type` can express contacts with torsional and rolling friction rows
// (condim 4 and 6). The refusal list: see SolverRefusesModel.
bool SolverSupportsHighCondim(SolverType type);

// The contact model the solver of `type` solves: MuJoCo's soft model for kMujoco, hard contact
// for the others (BuildConstraints builds the rows for it).
ConstraintModel SolverConstraintModel(SolverType type);

// Empty when the solver of `type` can step instances of m; otherwise why not, naming the solver
// and the first geom it cannot serve (a geom of condim 4 or 6 for a solver that lacks torsional
// and rolling friction rows). Step refuses such a model (kInvalidOptions, nothing changed) rather
// than downgrade its contacts.
std::string SolverRefusesModel(const Model& m, SolverType type);

// Gives d a solver of `type` unless it already has one (Step calls it; so do callers that want
// the solver's setup out of a timed loop). False when the engine has no solver of that type.
bool EnsureSolver(const Model& m, Data& d, SolverType type);

}  // namespace alsim
