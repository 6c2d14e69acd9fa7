// The options of a step's constraint solve: the knobs every solver shares (iteration cap,
// tolerance, time budget, residual on/off), and each solver's own parameters struct, which only
// that solver reads. The option table (solver_option_table.h) names, documents and validates
// every field; the CLI and the server go through it.
#pragma once

#include <atomic>

#include "engine/data/solver_statistics.h"
#include "engine/solver/admm/admm_parameters.h"
#include "engine/solver/canal/canal_parameters.h"
#include "engine/solver/drumwright/drumwright_parameters.h"
#include "engine/solver/hybrid/hybrid_parameters.h"
#include "engine/solver/icf/icf_parameters.h"
#include "engine/solver/mujoco/mujoco_parameters.h"
#include "engine/solver/nsn/nsn_parameters.h"
#include "engine/solver/sap/sap_parameters.h"
#include "engine/solver/subadmm/subadmm_parameters.h"

namespace alsim {

enum class SolverType {
  kSubAdmm,     // subsystem- and body-split ADMM, Algorithm 2
  kPgs,         // projected Gauss-Seidel on the Delassus operator, the paper's baseline
  kAdmmNoSub,   // ADMM on one global system, eq. (28), factored with CHOLMOD
  kAdmmNoBody,  // subsystem split without the body-level split of eqs. (30)-(31)
  kCanal,       // cascaded Newton-based augmented Lagrangian, Algorithm 1 (engine/solver/canal)
  // Table II's baselines in CANAL's AL loop (engine/solver/canal/newton_baselines.h): ablations.
  kCanalTrDogleg,  // trust-region dogleg on eq. (19) with the strict operator
  kCanalDampedSn,  // damped semismooth Newton with Armijo backtracking on eq. (19)
  kAuto,           // SubADMM, and CANAL for the islands it does not finish (engine/solver/hybrid)
  kMujoco,         // MuJoCo's soft contact model by primal Newton (engine/solver/newton)
  kSap,            // SAP's compliant contact by primal Newton (engine/solver/sap, newton)
  kIcfLagged,      // Irrotational Contact Fields, Lagged, by primal Newton (engine/solver/icf)
  kIcfSimilar,     // Irrotational Contact Fields, Similar, by primal Newton (engine/solver/icf)
  kDrumwright,     // Drumwright's first-order spring-damper solver (engine/solver/drumwright)
  kNsn,            // non-smooth Newton, Macklin et al. 2019 (engine/solver/nsn)
};
// The number of SolverType values: the last one plus 1 (a test checks each is registered).
inline constexpr int kNumSolverTypes = static_cast<int>(SolverType::kNsn) + 1;

// The registered name of a solver ("subadmm", "pgs", ...; engine/solver/solver.cc).
const char* SolverName(SolverType type);
// Parses a SolverName; false for an unknown name.
bool ParseSolverName(const char* name, SolverType* type);
// Every registered name in the registry's order, ", "-separated (`--solver`'s choices).
const char* SolverNameChoices();

// The time stepping of the two-stage theta method of the SAP paper (seed 001, Sec. IV; digest
// seed-001-sap.md section 3), with weights (theta_q, theta_v, theta_vq) of eq. (6). The step
// (engine/sim/step.cc) applies it; every solver then solves A (v - v*) = J^T gamma with
// A = M + dt^2 theta_q theta_vq K + dt theta_v D (eq. 11) for the joints' springs K and dampers D.
enum class Integrator {
  kEuler,          // (0, 1, 1): symplectic Euler with implicit damping, MuJoCo 2.2.2's Euler
  kImplicitEuler,  // (1, 1, 1): first order, dissipative
  kMidpoint,       // (1/2, 1/2, 1/2): second order, conserves a linear oscillator's energy
};
// "euler", "implicit-euler", "midpoint".
const char* IntegratorName(Integrator integrator);
// Parses an IntegratorName; false for an unknown name.
bool ParseIntegratorName(const char* name, Integrator* integrator);

struct SolverOptions {
  SolverType type = SolverType::kSubAdmm;
  // Stop an island after this many iterations (the paper's Table III uses 100).
  int max_iterations = 100;
  // Stop an island once theta_p + theta_d < tolerance (eq. 42; theta_p in m/s, theta_d in N s,
  // SI units as the paper). PGS stops once no impulse changed by more than `tolerance` N s.
  // [OURS] 1e-6: 1e-6 m/s is 5 nm of drift per 5 ms step; against 1e-8 the Sec. VII residual and
  // the penetration hardly change on our scenes while the iterations fall (BENCHMARKS.md).
  double tolerance = 1e-6;
  // The step's solve may take this long, in microseconds (the paper's 0.5 ms and 1 ms budgets); 0
  // for no budget. The islands share it by their constraint rows (island_schedule.h's
  // IslandDeadlines). A budget makes results depend on the machine.
  double time_budget_us = 0;
  // Compute SolverStatistics::contact_residual: one extra solve per constrained subsystem, at
  // the end of each island's task (in parallel, so counted in solve_seconds).
  bool compute_residual = true;
  // Stop every island at its next iteration once this flag is set (null: never), for a caller
  // that must end a long solve early (a server whose call was cancelled or ran past its
  // deadline, or that is shutting down). A solve stopped this way leaves an unconverged answer,
  // as the iteration cap does; the caller decides what to tell its client.
  const std::atomic<bool>* interrupt = nullptr;
  // The step's time stepping (Integrator); not a solver's knob, but every solver's problem.
  Integrator integrator = Integrator::kEuler;

  // Each solver's own parameters; a solver reads only its own.
  AdmmParameters admm;              // subadmm, admm-nosub, admm-nobody
  SubAdmmParameters subadmm;        // subadmm
  CanalParameters canal;            // canal, canal-trdogleg, canal-dampedsn (and auto's CANAL)
  HybridParameters hybrid;          // auto
  MujocoNewtonParameters mujoco;    // mujoco
  SapParameters sap;                // sap
  IcfParameters icf;                // icf-lagged, icf-similar
  DrumwrightParameters drumwright;  // drumwright
  NsnParameters nsn;                // nsn
};

}  // namespace alsim
