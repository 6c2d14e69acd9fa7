#include "engine/sim/step.h"

#include <algorithm>
#include <cmath>

#include "engine/dynamics/actuation.h"
#include "engine/dynamics/bias_forces.h"
#include "engine/dynamics/kinematics.h"
#include "engine/dynamics/mass_matrix.h"
#include "engine/dynamics/passive_forces.h"
#include "engine/dynamics/tree_ldl.h"
#include "engine/dynamics/velocity.h"
#include "engine/sim/integrate_positions.h"

namespace alsim {
namespace {

bool AllFinite(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double x) { return std::isfinite(x); });
}

// Position- and velocity-dependent quantities at the current qpos, qvel, ctrl.
void SmoothDynamics(const Model& m, Data& d) {
  Kinematics(m, d);
  Velocity(m, d);
  MassMatrix(m, d);
  BiasForces(m, d);
  PassiveForces(m, d);
  ActuatorForces(m, d);
}

// Eliminating v_{k+1} from eq. (2) with damping D implicit in v_hat gives
//   (M + (1 - theta) h D) qacc = f,   f = actuator + passive - bias forces,
//   v_{k+1} = v_k + h qacc,   v_hat = v_k + (1 - theta) h qacc.
// qH holds M + (1 - theta) h D and then its tree LDL^T factor (same sparsity as M).
void FactorStepMatrix(const Model& m, Data& d, double theta) {
  const double damping_scale = (1.0 - theta) * m.timestep;
  const TreeSparseLayout& layout = d.mass_layout;
  std::copy(d.M.begin(), d.M.end(), d.qH.begin());
  for (int i = 0; i < m.nv; ++i) d.qH[layout.row_adr[i]] += damping_scale * m.dof_damping[i];
  TreeLdlFactor(layout, d.qH.data());
}

void SolveAcceleration(const Model& m, Data& d) {
  for (int i = 0; i < m.nv; ++i) {
    d.qacc[i] = d.qfrc_actuator[i] + d.qfrc_passive[i] - d.qfrc_bias[i];
  }
  TreeLdlSolve(d.mass_layout, d.qH.data(), d.qacc.data());
}

// The forces of eq. (2) belong to the instant t_k + theta h, where the position is q_theta and the
// velocity v_theta = v_k + theta h qacc. Velocity-dependent bias forces (Coriolis, centrifugal)
// evaluated at v_k instead would make every theta first-order accurate; for theta > 0 one
// predictor-corrector pass re-evaluates them at the predicted v_theta (M and its factor are
// unchanged: they depend on q_theta only). theta = 0 stays explicit, as MuJoCo's Euler.
void CorrectBiasAtThetaVelocity(const Model& m, Data& d, double theta) {
  const double lead = theta * m.timestep;
  for (int i = 0; i < m.nv; ++i) {
    d.qvel_start[i] = d.qvel[i];
    d.qvel[i] += lead * d.qacc[i];
  }
  Velocity(m, d);
  BiasForces(m, d);
  std::copy(d.qvel_start.begin(), d.qvel_start.end(), d.qvel.begin());
  SolveAcceleration(m, d);
}

}  // namespace

void Forward(const Model& m, Data& d, const StepOptions& options) {
  SmoothDynamics(m, d);
  FactorStepMatrix(m, d, options.theta);
  SolveAcceleration(m, d);
  if (options.theta > 0) CorrectBiasAtThetaVelocity(m, d, options.theta);
}

StepStatus Step(const Model& m, Data& d, const StepOptions& options) {
  const double theta = options.theta;
  if (!(theta >= 0.0 && theta < 1.0)) return StepStatus::kInvalidOptions;
  const double h = m.timestep;

  // drift to q_theta with v_k
  if (theta > 0) IntegratePositions(m, d.qvel.data(), theta * h, d.qpos.data());

  // kick: v_{k+1} from the forces at (q_theta, v_k)
  Forward(m, d, options);
  for (int i = 0; i < m.nv; ++i) d.qvel[i] += h * d.qacc[i];

  // drift to q_{k+1} with v_{k+1}
  IntegratePositions(m, d.qvel.data(), (1.0 - theta) * h, d.qpos.data());
  d.time += h;

  return AllFinite(d.qpos) && AllFinite(d.qvel) ? StepStatus::kOk : StepStatus::kDiverged;
}

}  // namespace alsim
