// One time step of an instance: the stage pipeline and the theta-method of the SubADMM paper.
//
// Eq. (2) of the paper: M_k (v_{k+1} - v_k) = t_k f_k + J^T lambda, with the representative
// velocity v_hat = theta v_k + (1 - theta) v_{k+1} that constraints act on and positions move by.
// alsim evaluates M_k and f_k at q_theta = q_k (+) theta t_k v_k and splits the position update
// around it: q_theta = q_k (+) theta h v_k, then q_{k+1} = q_theta (+) (1 - theta) h v_{k+1}, so
// q_{k+1} - q_k = h v_hat as in eq. (2). Each half is an exact drift and the velocity update a
// kick, so the map is symplectic for every theta: theta = 0 is symplectic Euler (MuJoCo's Euler
// integrator), theta = 1/2 the second-order leapfrog ("midpoint"); both keep the energy of a
// conservative system bounded. Joint damping is implicit in v_hat, so any damping is stable.
//
// Constraints (contacts, joint limits, PD servos) enter through J^T lambda: after the smooth
// dynamics, Step() detects contacts, assembles the constraints (engine/constraint), groups them
// into islands (engine/island) and solves for v_hat with the chosen solver (engine/solver).
#pragma once

#include <string>

#include "engine/constraint/build_constraints.h"
#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/solver/solver_options.h"

namespace alsim {

struct StepOptions {
  // theta in eq. (2), in [0, 1). Default 0: inelastic contact (a stopped impact stays stopped:
  // v_{k+1,n} = -theta / (1 - theta) v_{k,n} = 0) and symplectic Euler, the usual robotics choice
  // and MuJoCo's default integrator. 1/2 gives the energy-conserving midpoint but elastic impacts.
  double theta = 0.0;
  SolverOptions solver;
  ConstraintOptions constraints;
};

enum class StepStatus {
  kOk,
  kInvalidOptions,  // ValidateStepOptions refused the options, or the solver refuses the model
                    // (SolverRefusesModel: condim 4/6); nothing was changed
  kDiverged,        // the new state has a NaN or infinite entry; the instance needs a reset
};

// Empty when Step accepts `options`; otherwise why not, naming the option and its valid range
// (the solver options' ranges are engine/solver/solver_option_table.h's).
std::string ValidateStepOptions(const StepOptions& options);

// Advances d by one m.timestep: q_theta, kinematics, velocities, mass matrix, bias, passive,
// applied (d.xfrc_applied, kept as it is) and actuator forces, collision, constraints, islands, the
// constraint solve for v_hat, the velocity update, the position update, time. d.solver_statistics
// describes the solve. Allocates nothing once the instance has seen its largest number of contacts
// (the first step creates the solver).
StepStatus Step(const Model& m, Data& d, const StepOptions& options = {});

// Step with after_solve(d, context) called after the constraint solve, while d.qvel is still
// v_k, d.v_hat is the solve's answer and the constraints, islands and smooth dynamics are the
// step's: the point where its gradients linearize it (engine/sim/step_gradients.h).
using AfterSolve = void (*)(Data& d, void* context);
StepStatus Step(const Model& m, Data& d, const StepOptions& options, AfterSolve after_solve,
                void* context = nullptr);

// The stages of Step before the constraint solve, at the current state taken as q_theta (theta
// drift not applied): smooth dynamics with v_free and the solver's A and b, collision,
// constraints and islands. Step's gradients (engine/sim/step_gradients.h) re-run them at
// perturbed states.
void PrepareConstraintSolve(const Model& m, Data& d, const StepOptions& options);

// Stages 1-5 of Step at the current state without advancing it (kinematics through forces and
// qacc of the smooth dynamics, all actuators explicit, no constraints): for observers, energy and
// tests.
void Forward(const Model& m, Data& d, const StepOptions& options = {});

}  // namespace alsim
