#include "engine/sim/step.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "engine/collision/broadphase.h"
#include "engine/collision/collision.h"
#include "engine/collision/deformable_contacts.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/actuation.h"
#include "engine/dynamics/applied_forces.h"
#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/dynamics/passive_forces.h"
#include "engine/dynamics/tendon.h"
#include "engine/dynamics/theta_method.h"
#include "engine/dynamics/velocity.h"
#include "engine/island/islands.h"
#include "engine/sim/integrate_positions.h"
#include "engine/solver/solver.h"
#include "engine/solver/solver_option_table.h"

namespace alsim {
namespace {

bool AllFinite(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double x) { return std::isfinite(x); });
}

// The trees run in parallel only when there are several (kParallelTrees) and they carry enough
// dofs (kParallelTreeDofs) for a split to pay for a task's spawn and join, a few microseconds:
// that is the smooth stage (kinematics, RNE, CRBA, factor) of roughly one humanoid-sized robot, so
// below two threads' worth of that, a tiny model (a slider-crank, a pendulum) stays on the calling
// thread, where the second thread would only add the fork/join to every step. The trees write
// disjoint data, so either path gives the same bits.
constexpr int kParallelTrees = 2;
constexpr int kParallelTreeDofs = 32;

// Calls tree(range) for every static tree (bodies without dofs, on the calling thread) and then
// for every subsystem, in parallel when there are several.
template <class Tree>
void ForEachTree(const Model& m, const Tree& tree) {
  int next = 1;  // first body not yet visited; subsystems are whole trees in body order
  for (int j = 0; j <= m.nsubsystem; ++j) {
    const int begin = j < m.nsubsystem ? m.subsystem_body_adr[j] : m.nbody;
    if (begin > next) tree(TreeRange{next, begin, 0, 0});
    if (j < m.nsubsystem) next = begin + m.subsystem_body_num[j];
  }
  auto subsystem = [&](int j) {
    const int body = m.subsystem_body_adr[j], dof = m.subsystem_dof_adr[j];
    tree(TreeRange{body, body + m.subsystem_body_num[j], dof, dof + m.subsystem_dof_num[j]});
  };
  if (m.nsubsystem < kParallelTrees || m.nv < kParallelTreeDofs) {
    for (int j = 0; j < m.nsubsystem; ++j) subsystem(j);
  } else {
    ParallelFor(0, m.nsubsystem, 1, subsystem);
  }
}

// The weights of the step's theta-methods (engine/dynamics/theta_method.h).
ThetaWeights StepWeights(const StepOptions& options) {
  ThetaWeights w;
  w.theta = options.theta;
  switch (options.solver.integrator) {
    case Integrator::kEuler:
      break;
    case Integrator::kImplicitEuler:
      w.theta_q = w.theta_v = w.theta_vq = 1;
      break;
    case Integrator::kMidpoint:
      w.theta_q = w.theta_v = w.theta_vq = 0.5;
      break;
  }
  return w;
}

// Position- and velocity-dependent quantities of the trees at the current qpos, qvel: kinematics,
// their geoms' poses, velocities, mass matrix, bias, passive and applied (xfrc_applied) forces,
// and the factor of the step matrix (FactorStepMatrixOfTrees).
void SmoothDynamicsOfTrees(const Model& m, Data& d, const ThetaWeights& w, const TreeRange& trees) {
  KinematicsOfTrees(m, d, trees);
  PlaceGeoms(m, d, m.body_geom_adr[trees.body_begin], m.body_geom_adr[trees.body_end]);
  VelocityOfTrees(m, d, trees);
  MassMatrixOfTrees(m, d, trees);
  BiasForcesOfTrees(m, d, trees);
  PassiveForcesOfTrees(m, d, trees);
  AppliedForcesOfTrees(m, d, trees);
  FactorStepMatrixOfTrees(m, d, w, trees);
}

// Servos solved as soft constraints must not also act as explicit forces (`servos` null: they
// stay explicit, as in Forward).
void RemoveImplicitServoForce(const Model& m, Data& d, const ConstraintOptions* servos, int a) {
  if (servos == nullptr || !IsImplicitServo(m, a, *servos)) return;
  const double gear = m.actuator_gear[a];
  if (m.actuator_transmission[a] == ActuatorTransmission::kTendon) {
    const int t = m.actuator_tendon[a];
    for (int k = m.tendon_wrap_adr[t]; k < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++k) {
      d.qfrc_actuator[m.wrap_dof[k]] -= gear * m.wrap_coef[k] * d.actuator_force[a];
    }
    return;
  }
  d.qfrc_actuator[m.jnt_dof_adr[m.actuator_jnt[a]]] -= gear * d.actuator_force[a];
}

void ActuationOfTrees(const Model& m, Data& d, const ConstraintOptions* servos,
                      const TreeRange& trees) {
  ActuatorForcesOfTrees(m, d, trees);
  ForEachActuatorOfTrees(m, trees, [&](int a) { RemoveImplicitServoForce(m, d, servos, a); });
}

// The smooth part of a step, tree by tree: SmoothDynamicsOfTrees, then actuator forces (minus the
// implicit servos' when `servos` is set), the acceleration, and with `solver_problem` v_free and
// the solver's A and b. With m.actuators_in_trees each tree is one task from start to end (trees
// share nothing here); otherwise the actuators run between two passes over the trees. Either way
// the results are the serial stages' bit for bit.
// `after_tree(range)` ends each tree's task (and first the world body's).
template <class AfterTree>
void SmoothStage(const Model& m, Data& d, const ThetaWeights& w, const ConstraintOptions* servos,
                 bool solver_problem, const AfterTree& after_tree) {
  KinematicsOfWorld(d);
  PlaceGeoms(m, d, m.body_geom_adr[0], m.body_geom_adr[1]);
  d.cvel[0].setZero();
  d.crb[0] = d.cinert[0];
  BiasForcesOfWorld(m, d);
  if (m.ntendon > 0) TendonKinematics(m, d);  // before the tree tasks: tendons may span trees
  after_tree(TreeRange{0, 1, 0, 0});
  auto rest = [&](const TreeRange& trees) {
    AccelerationOfTrees(m, d, w, trees);
    if (solver_problem) SolverProblemOfTrees(m, d, w, trees);
    after_tree(trees);
  };
  if (m.actuators_in_trees) {
    ForEachTree(m, [&](const TreeRange& trees) {
      SmoothDynamicsOfTrees(m, d, w, trees);
      ActuationOfTrees(m, d, servos, trees);
      rest(trees);
    });
    return;
  }
  ForEachTree(m, [&](const TreeRange& trees) { SmoothDynamicsOfTrees(m, d, w, trees); });
  ActuatorForces(m, d);
  for (int a = 0; a < m.nu; ++a) RemoveImplicitServoForce(m, d, servos, a);
  ForEachTree(m, rest);
}

// Servo forces for observers: the soft constraint's impulse over the step.
void ReportServoForces(const Model& m, Data& d) {
  for (const Constraint& c : d.constraints.constraints) {
    if (c.type == ConstraintType::kSoft) {
      d.actuator_force[c.key.a] = d.constraints.lambda[c.row_adr] / m.timestep;
    }
  }
}

// A split step's second solve (ConstraintOptions, "Recovery"), island by island: only an island
// with a correction beyond its kept speed splits, so that one deep overlap does not change how
// the rest of the scene is solved (or cost its solve twice). The first solve's v_hat, with the
// corrections, is kept for the positions in v_position; a split island's v_hat starts again from
// v_free and its impulses from the first solve's, and it is solved without its corrections
// (ConstraintSolver::SolveSplitIslands). The other islands keep their first solve, corrections
// in the velocity as in an unsplit step.
void SolveWithoutCorrections(const Model& m, Data& d, const StepOptions& options,
                             double deadline_us) {
  ConstraintSet& set = d.constraints;
  const Islands& islands = d.islands;
  std::copy(d.v_hat.begin(), d.v_hat.end(), d.v_position.begin());
  for (int k = 0; k < islands.num; ++k) {
    if (!islands.split[k]) continue;
    for (int s = islands.subsystem_adr[k]; s < islands.subsystem_adr[k + 1]; ++s) {
      const int j = islands.subsystems[s];
      const int begin = m.subsystem_dof_adr[j], end = begin + m.subsystem_dof_num[j];
      std::copy(d.v_free.begin() + begin, d.v_free.begin() + end, d.v_hat.begin() + begin);
    }
    for (int s = islands.constraint_adr[k]; s < islands.constraint_adr[k + 1]; ++s) {
      const Constraint& c = set.constraints[islands.constraints[s]];
      for (int r = c.row_adr; r < c.row_adr + c.dim; ++r) set.bias[r] -= set.correction[r];
    }
  }
  d.solver->SolveSplitIslands(m, d, options.solver, deadline_us, &d.solver_statistics);
}

}  // namespace

std::string ValidateStepOptions(const StepOptions& options) {
  if (!(options.theta >= 0.0 && options.theta < 1.0)) return "theta must be in [0, 1)";
  if (options.theta != 0 && options.solver.integrator != Integrator::kEuler) {
    return "integrator " + std::string(IntegratorName(options.solver.integrator)) +
           " needs theta = 0";
  }
  // NSN's rows sit at q- + h v_hat (engine/solver/nsn/nsn_solver.h): where the step moves the
  // positions with v_hat.
  if (options.solver.type == SolverType::kNsn &&
      (options.theta != 0 || options.solver.integrator == Integrator::kMidpoint)) {
    return "solver nsn needs theta = 0 and integrator euler or implicit-euler (its rows are "
           "evaluated where q- + h v_hat puts the bodies)";
  }
  const double error_reduction = options.constraints.error_reduction;
  if (!(error_reduction >= 0 && error_reduction <= 1)) return "error_reduction must be in [0, 1]";
  const ConstraintOptions& c = options.constraints;
  if (!(c.max_correction_speed > 0 && c.max_correction_angular_speed > 0)) {
    return "max_correction_speed and max_correction_angular_speed must be positive";
  }
  if (!(c.kept_correction_speed >= 0 && c.kept_correction_angular_speed >= 0)) {
    return "kept_correction_speed and kept_correction_angular_speed must be at least 0";
  }
  return ValidateSolverOptions(options.solver);
}

void Forward(const Model& m, Data& d, const StepOptions& options) {
  SmoothStage(m, d, StepWeights(options), nullptr, false, [](const TreeRange&) {});
}

void PrepareConstraintSolve(const Model& m, Data& d, const StepOptions& options) {
  // smooth dynamics at (q_theta, v_k): v_free = v_k + (1 - theta) h qacc, and A and b. Each
  // tree's task then sets its v_hat = v_free (the solver's answer where no constraint acts) and,
  // for the collision, its geoms' speculative margins and bounding boxes: passes over every dof
  // and geom on the calling thread would fetch what the other threads just wrote.
  const ThetaWeights weights = StepWeights(options);
  const double h = m.timestep;
  const ConstraintOptions& constraint_options = options.constraints;
  SmoothStage(m, d, weights, &constraint_options, true, [&](const TreeRange& trees) {
    std::copy(d.v_free.begin() + trees.dof_begin, d.v_free.begin() + trees.dof_end,
              d.v_hat.begin() + trees.dof_begin);
    if (!m.constraints_enabled) return;
    if (constraint_options.speculative_contacts) {
      SpeculativeMarginsOfBodies(m, d, h, constraint_options.contact_slop, trees.body_begin,
                                 trees.body_end);
    }
    BoundingBoxesOfBodies(m, d, trees.body_begin, trees.body_end);
  });

  // constraints: v_hat from the solver
  if (m.constraints_enabled) {
    Collision(m, d, /*boxes_ready=*/true);
    if (m.nvert > 0) DeformableCollision(m, d, h);
    BuildConstraints(m, d, options.constraints, h, SolverConstraintModel(options.solver.type));
  } else {
    d.contact.clear();
    d.constraints.Clear();
  }
  if (d.constraints.constraints.empty()) {
    d.islands.num = 0;
  } else {
    BuildIslands(m, d.constraints, d.islands);
  }
}

StepStatus Step(const Model& m, Data& d, const StepOptions& options) {
  return Step(m, d, options, nullptr);
}

namespace {

// Step checks its options on every call. Validation is a pure function of the options' fields, so
// options equal byte for byte to the last ones this thread found valid need no second look (a
// server's threads step instance after instance with the same options).
bool ValidOptions(const StepOptions& options) {
  static_assert(std::is_trivially_copyable_v<StepOptions>, "compared and kept as bytes");
  thread_local unsigned char last_valid[sizeof(StepOptions)];
  thread_local bool has_last_valid = false;
  if (has_last_valid && std::memcmp(&options, last_valid, sizeof(StepOptions)) == 0) return true;
  if (!ValidateStepOptions(options).empty()) return false;
  std::memcpy(last_valid, &options, sizeof(StepOptions));
  has_last_valid = true;
  return true;
}

}  // namespace

StepStatus Step(const Model& m, Data& d, const StepOptions& options, AfterSolve after_solve,
                void* context) {
  if (!ValidOptions(options)) return StepStatus::kInvalidOptions;
  if (!EnsureSolver(m, d, options.solver.type)) return StepStatus::kInvalidOptions;
  // A solver without torsional/rolling rows refuses a condim 4/6 scene (SolverRefusesModel).
  if (m.high_condim_geom >= 0 && !SolverSupportsHighCondim(options.solver.type)) {
    return StepStatus::kInvalidOptions;
  }
  const ThetaWeights weights = StepWeights(options);
  const double theta = options.theta;
  const double h = m.timestep;

  // drift to q_theta with v_k
  if (theta > 0) IntegratePositions(m, d.qvel.data(), theta * h, d.qpos.data());

  PrepareConstraintSolve(m, d, options);
  // The budget is the solve's (SolverOptions::time_budget_us): its clock starts here, after the
  // collision and the dynamics, which no solver can cut short. Read only for a budget.
  const double budget_us = options.solver.time_budget_us;
  const double start_us = budget_us > 0 ? SteadyMicroseconds() : 0;
  const bool split = d.constraints.split;
  // Deformables move with the non-smooth Newton solver only (the others refuse free vertices,
  // SolverRefusesModel), which solves them, and its joint-spring rows, whether or not any rigid
  // constraint exists.
  const bool deformables = m.nvert > 0 && options.solver.type == SolverType::kNsn;
  if (d.constraints.constraints.empty() && !d.solver->SolvesWithoutConstraints()) {
    d.solver_statistics = SolverStatistics{};
  } else {
    const double deadline_us = budget_us > 0 ? start_us + budget_us : 0;
    d.solver->Solve(m, d, options.solver, deadline_us, &d.solver_statistics);
    if (split) SolveWithoutCorrections(m, d, options, deadline_us);
    ReportServoForces(m, d);
  }
  SaveWarmStart(d);
  if (after_solve != nullptr) after_solve(d, context);

  // kick: v_{k+1} = v_k + (v_hat - v_k) / (1 - theta); then drift to q_{k+1} with v_{k+1} (a
  // split step drifts with the velocity its first solve gave instead), or with
  // theta_vq v_{k+1} + (1 - theta_vq) v_k (eq. 8 of the SAP paper; theta = 0 there)
  if (split) {
    for (int i = 0; i < m.nv; ++i) {
      d.v_position[i] = d.qvel[i] + (d.v_position[i] - d.qvel[i]) / (1.0 - theta);
    }
  }
  const bool blend = weights.theta_vq != 1;
  if (blend && !split) std::copy(d.v_hat.begin(), d.v_hat.end(), d.v_position.begin());
  if (blend) {
    for (int i = 0; i < m.nv; ++i) {
      d.v_position[i] = weights.theta_vq * d.v_position[i] + (1 - weights.theta_vq) * d.qvel[i];
    }
  }
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += (d.v_hat[i] - d.qvel[i]) / (1.0 - theta);
  IntegratePositions(m, split || blend ? d.v_position.data() : d.qvel.data(), (1.0 - theta) * h,
                     d.qpos.data());
  if (deformables) {  // x+ = x- + h u: the solver's last iterate (nsn_solver.h)
    for (int v = 0; v < m.nvert; ++v) d.vert_xpos[v] += h * d.vert_xvel[v];
  }
  d.time += h;

  return AllFinite(d.qpos) && AllFinite(d.qvel) ? StepStatus::kOk : StepStatus::kDiverged;
}

}  // namespace alsim
