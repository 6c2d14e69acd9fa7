#include "engine/sim/step.h"

#include <algorithm>
#include <cmath>

#include "engine/collision/broadphase.h"
#include "engine/collision/collision.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/actuation.h"
#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/dynamics/passive_forces.h"
#include "engine/dynamics/tree_ldl.h"
#include "engine/dynamics/velocity.h"
#include "engine/island/islands.h"
#include "engine/sim/integrate_positions.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

bool AllFinite(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double x) { return std::isfinite(x); });
}

// Below this many subsystems the trees run on the calling thread (a task costs microseconds).
constexpr int kParallelTrees = 2;

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
  if (m.nsubsystem < kParallelTrees) {
    for (int j = 0; j < m.nsubsystem; ++j) subsystem(j);
  } else {
    ParallelFor(0, m.nsubsystem, 1, subsystem);
  }
}

// Eliminating v_{k+1} from eq. (2) with damping D implicit in v_hat gives
//   (M + (1 - theta) h D) qacc = f,   f = actuator + passive - bias forces,
//   v_{k+1} = v_k + h qacc,   v_hat = v_k + (1 - theta) h qacc.
// qH holds M + (1 - theta) h D and then its tree LDL^T factor (same sparsity as M), per tree.
void FactorStepMatrixOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  const double damping_scale = (1.0 - theta) * m.timestep;
  const TreeSparseLayout& layout = d.mass_layout;
  const int last = trees.dof_end - 1;
  std::copy(d.M.begin() + layout.row_adr[trees.dof_begin],
            d.M.begin() + layout.row_adr[last] + layout.row_nnz[last],
            d.qH.begin() + layout.row_adr[trees.dof_begin]);
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qH[layout.row_adr[i]] += damping_scale * m.dof_damping[i];
  }
  TreeLdlFactorRange(layout, trees.dof_begin, trees.dof_end, d.qH.data());
}

// Position- and velocity-dependent quantities of the trees at the current qpos, qvel: kinematics,
// their geoms' poses, velocities, mass matrix, bias and passive forces, and the factor of the
// step matrix (FactorStepMatrixOfTrees).
void SmoothDynamicsOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees) {
  KinematicsOfTrees(m, d, trees);
  PlaceGeoms(m, d, m.body_geom_adr[trees.body_begin], m.body_geom_adr[trees.body_end]);
  VelocityOfTrees(m, d, trees);
  MassMatrixOfTrees(m, d, trees);
  BiasForcesOfTrees(m, d, trees);
  PassiveForcesOfTrees(m, d, trees);
  FactorStepMatrixOfTrees(m, d, theta, trees);
}

// Servos solved as soft constraints must not also act as explicit forces (`servos` null: they
// stay explicit, as in Forward).
void RemoveImplicitServoForce(const Model& m, Data& d, const ConstraintOptions* servos, int a) {
  if (servos == nullptr || !IsImplicitServo(m, a, *servos)) return;
  d.qfrc_actuator[m.jnt_dof_adr[m.actuator_jnt[a]]] -= m.actuator_gear[a] * d.actuator_force[a];
}

void ActuationOfTrees(const Model& m, Data& d, const ConstraintOptions* servos,
                      const TreeRange& trees) {
  ActuatorForcesOfTrees(m, d, trees);
  ForEachActuatorOfTrees(m, trees, [&](int a) { RemoveImplicitServoForce(m, d, servos, a); });
}

void SolveAccelerationOfTrees(Data& d, const TreeRange& trees) {
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qacc[i] = d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
  }
  TreeLdlSolveRange(d.mass_layout, trees.dof_begin, trees.dof_end, d.qH.data(), d.qacc.data());
}

// The forces of eq. (2) belong to the instant t_k + theta h, where the position is q_theta and the
// velocity v_theta = v_k + theta h qacc. Velocity-dependent bias forces (Coriolis, centrifugal)
// evaluated at v_k instead would make every theta first-order accurate; for theta > 0 one
// predictor-corrector pass re-evaluates them at the predicted v_theta (M and its factor are
// unchanged: they depend on q_theta only). theta = 0 stays explicit, as MuJoCo's Euler.
void AccelerationOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  SolveAccelerationOfTrees(d, trees);
  if (theta == 0) return;
  const double lead = theta * m.timestep;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qvel_start[i] = d.qvel[i];
    d.qvel[i] += lead * d.qacc[i];
  }
  VelocityOfTrees(m, d, trees);
  BiasForcesOfTrees(m, d, trees);
  std::copy(d.qvel_start.begin() + trees.dof_begin, d.qvel_start.begin() + trees.dof_end,
            d.qvel.begin() + trees.dof_begin);
  SolveAccelerationOfTrees(d, trees);
}

// v_free = v_k + (1 - theta) h qacc, and the solver's A = (M + (1 - theta) h D) / (1 - theta) and
// b = A v_free of eq. (2), from qH (factored) and M: A's tree LDL^T is qH's with D divided by
// 1 - theta. Formed before collision knows whether the step has constraints, so a step without
// any pays for it too (a copy and a product per tree, small beside the factorization).
void SolverProblemOfTrees(const Model& m, Data& d, double theta, const TreeRange& trees) {
  if (trees.dof_begin == trees.dof_end) return;
  const double h = m.timestep;
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.v_free[i] = d.qvel[i] + (1.0 - theta) * h * d.qacc[i];
  }
  if (!m.constraints_enabled) return;
  const double scale = 1.0 / (1.0 - theta);
  const double damping_scale = (1.0 - theta) * h;
  const TreeSparseLayout& layout = d.mass_layout;
  const int last = trees.dof_end - 1;
  const int nnz_begin = layout.row_adr[trees.dof_begin];
  const int nnz_end = layout.row_adr[last] + layout.row_nnz[last];
  // theta = 0 (the default) makes the scale 1: plain copies, the same bits.
  if (scale == 1.0) {
    std::copy(d.M.begin() + nnz_begin, d.M.begin() + nnz_end, d.qA.begin() + nnz_begin);
  } else {
    for (int k = nnz_begin; k < nnz_end; ++k) d.qA[k] = scale * d.M[k];
  }
  for (int i = trees.dof_begin; i < trees.dof_end; ++i) {
    d.qA[layout.row_adr[i]] += scale * damping_scale * m.dof_damping[i];
  }
  std::copy(d.qH.begin() + nnz_begin, d.qH.begin() + nnz_end, d.qA_factor.begin() + nnz_begin);
  if (scale != 1.0) {
    for (int i = trees.dof_begin; i < trees.dof_end; ++i) d.qA_factor[layout.row_adr[i]] *= scale;
  }
  TreeSparseMultiplyRange(layout, trees.dof_begin, trees.dof_end, d.qA.data(), d.v_free.data(),
                          d.solver_rhs.data());
}

// The smooth part of a step, tree by tree: SmoothDynamicsOfTrees, then actuator forces (minus the
// implicit servos' when `servos` is set), the acceleration, and with `solver_problem` v_free and
// the solver's A and b. With m.actuators_in_trees each tree is one task from start to end (trees
// share nothing here); otherwise the actuators run between two passes over the trees. Either way
// the results are the serial stages' bit for bit.
// `after_tree(range)` ends each tree's task (and first the world body's).
template <class AfterTree>
void SmoothStage(const Model& m, Data& d, double theta, const ConstraintOptions* servos,
                 bool solver_problem, const AfterTree& after_tree) {
  KinematicsOfWorld(d);
  PlaceGeoms(m, d, m.body_geom_adr[0], m.body_geom_adr[1]);
  d.cvel[0].setZero();
  d.crb[0] = d.cinert[0];
  BiasForcesOfWorld(m, d);
  after_tree(TreeRange{0, 1, 0, 0});
  auto rest = [&](const TreeRange& trees) {
    AccelerationOfTrees(m, d, theta, trees);
    if (solver_problem) SolverProblemOfTrees(m, d, theta, trees);
    after_tree(trees);
  };
  if (m.actuators_in_trees) {
    ForEachTree(m, [&](const TreeRange& trees) {
      SmoothDynamicsOfTrees(m, d, theta, trees);
      ActuationOfTrees(m, d, servos, trees);
      rest(trees);
    });
    return;
  }
  ForEachTree(m, [&](const TreeRange& trees) { SmoothDynamicsOfTrees(m, d, theta, trees); });
  ActuatorForces(m, d);
  for (int a = 0; a < m.nu; ++a) RemoveImplicitServoForce(m, d, servos, a);
  ForEachTree(m, rest);
}

bool ValidOptions(const StepOptions& options) {
  const SolverOptions& solver = options.solver;
  return options.theta >= 0.0 && options.theta < 1.0 && solver.max_iterations >= 1 &&
         solver.tolerance >= 0 && solver.time_budget_us >= 0 && solver.beta_gamma > 1 &&
         solver.beta_update_interval >= 1 && solver.delassus_refresh_steps >= 1 &&
         solver.relaxation > 0 && solver.relaxation < 2 && solver.anderson_memory >= 0 &&
         solver.anderson_memory <= 8 && solver.response_after_iterations >= 0 &&
         options.constraints.error_reduction >= 0 && options.constraints.error_reduction <= 1;
}

// Servo forces for observers: the soft constraint's impulse over the step.
void ReportServoForces(const Model& m, Data& d) {
  for (const Constraint& c : d.constraints.constraints) {
    if (c.type == ConstraintType::kSoft) {
      d.actuator_force[c.key.a] = d.constraints.lambda[c.row_adr] / m.timestep;
    }
  }
}

}  // namespace

void Forward(const Model& m, Data& d, const StepOptions& options) {
  SmoothStage(m, d, options.theta, nullptr, false, [](const TreeRange&) {});
}

StepStatus Step(const Model& m, Data& d, const StepOptions& options) {
  if (!ValidOptions(options)) return StepStatus::kInvalidOptions;
  if (d.solver == nullptr || d.solver->type() != options.solver.type) {
    d.solver = MakeConstraintSolver(options.solver.type, m);
    if (d.solver == nullptr) return StepStatus::kInvalidOptions;
  }
  // The clock only for a time budget (a clock read is about 25 ns, 0.15% of a humanoid's step).
  const double budget_us = options.solver.time_budget_us;
  const double start_us = budget_us > 0 ? SteadyMicroseconds() : 0;
  const double theta = options.theta;
  const double h = m.timestep;

  // drift to q_theta with v_k
  if (theta > 0) IntegratePositions(m, d.qvel.data(), theta * h, d.qpos.data());

  // smooth dynamics at (q_theta, v_k): v_free = v_k + (1 - theta) h qacc, and A and b. Each
  // tree's task then sets its v_hat = v_free (the solver's answer where no constraint acts) and,
  // for the collision, its geoms' speculative margins and bounding boxes: passes over every dof
  // and geom on the calling thread would fetch what the other threads just wrote.
  const ConstraintOptions& constraint_options = options.constraints;
  SmoothStage(m, d, theta, &constraint_options, true, [&](const TreeRange& trees) {
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
    BuildConstraints(m, d, options.constraints, h);
  } else {
    d.contact.clear();
    d.constraints.Clear();
  }
  if (d.constraints.constraints.empty()) {
    d.islands.num = 0;
    d.solver_statistics = SolverStatistics{};
  } else {
    BuildIslands(m, d.constraints, d.islands);
    d.solver->Solve(m, d, options.solver, budget_us > 0 ? start_us + budget_us : 0,
                    &d.solver_statistics);
    ReportServoForces(m, d);
  }
  SaveWarmStart(d);

  // kick: v_{k+1} = v_k + (v_hat - v_k) / (1 - theta); then drift to q_{k+1} with v_{k+1}
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += (d.v_hat[i] - d.qvel[i]) / (1.0 - theta);
  IntegratePositions(m, d.qvel.data(), (1.0 - theta) * h, d.qpos.data());
  d.time += h;

  return AllFinite(d.qpos) && AllFinite(d.qvel) ? StepStatus::kOk : StepStatus::kDiverged;
}

}  // namespace alsim
