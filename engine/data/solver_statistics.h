// What a step's constraint solve reports, kept in Data (engine/solver fills it).
#pragma once

namespace alsim {

// One figure of a solver's own statistics (CANAL's Newton steps, ...), by name, so that reports
// that do not know the solver (alsim run, the service's diagnostics) can show it.
struct SolverFigure {
  const char* name = nullptr;  // a string literal of the solver's
  double value = 0;
};

// What a step's solve reports (docs/DESIGN.md: the same diagnostics for every solver, and each
// solver's own figures).
struct SolverStatistics {
  static constexpr int kMaxFigures = 9;
  int islands = 0;
  int constraints = 0;
  int contacts = 0;
  int max_iterations = 0;      // the most any island took
  double mean_iterations = 0;  // over islands
  double primal_residual = 0;  // theta_p, the largest over islands (m/s); PGS: 0
  double dual_residual = 0;    // theta_d, the largest over islands (N s); PGS: 0
  // Sec. VII accuracy metric: from the final impulses, v_hat = A^{-1}(b + J^T lambda), then
  // ||lambda - T(lambda - (J v_hat + e))|| over every constraint row, divided by the number of
  // contacts (by 1 when there are none). Zero iff the impulses solve the NCP exactly.
  double contact_residual = 0;
  // The step split (ConstraintOptions, "Recovery"): these are its second solve's figures, with
  // the time and iteration counts of both solves.
  bool split = false;
  // Wall time of the solve, including setup, factorizations and (compute_residual) the residual.
  double solve_seconds = 0;
  // The solver's own figures of this step, in a fixed order per solver (its Statistics struct).
  int num_figures = 0;
  SolverFigure figures[kMaxFigures];

  // Appends a figure; past kMaxFigures it is dropped (a solver lists at most that many).
  void AddFigure(const char* name, double value) {
    if (num_figures < kMaxFigures) figures[num_figures++] = SolverFigure{name, value};
  }
};

}  // namespace alsim
