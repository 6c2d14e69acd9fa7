// Gradients through one step of the convex Newton solvers (Irrotational Contact Fields, seed 000,
// Sec. IX; SAP's model too): the Jacobians of the next velocities and positions with respect to
// the state, the controls and named model parameters, by the implicit function theorem (eq. 29).
//
// The solve's v_hat (v_{k+1} at theta = 0) is the minimizer of a convex cost, so it is the root of
//   g(v; theta) = A v - b - J^T gamma(J v) = 0        (NewtonSolver::Linearize)
// where A, b, J and the contacts' invariants (phi0, Lagged's gamma_n0, k, d, mu) depend on the
// inputs theta = (v_k, q_k, u, parameters). Where g is differentiable,
//   d v_hat / d theta = -H^{-1} dg/dtheta,   H = dg/dv = A + J^T G J at v_hat,
// with H the Hessian the solver factors (each island's, dense; A's tree factor elsewhere).
// dg/dv_k and dg/du are exact: with b = A v_k + h f (theta 0, Euler: engine/dynamics/
// theta_method.h, A = M + h D),
//   dg/dv_k = -(A + h df/dv) - J^T dgamma/dv_k,   dg/du = -h df/du,
// df/dv = -D - sum over tendons of their damping c c^T - d qfrc_bias/dv (BiasForceVelocityJacobian)
// + the actuators' velocity terms gear^2 bias2 m m^T, df/du = gear gain m (m an actuator's moment
// arm; zero where its ctrl or force is clamped), and Lagged's dgamma/dv_k through gamma_n0
// (NewtonSolver::AddLaggedVelocityTerms). The other inputs (positions, parameters; and v_k and u
// where a scene has what these forms leave out: implicit servos, slider-cranks, the regularized
// Lagged model) take dg/dtheta as the central difference of g at the fixed v_hat between the
// inputs theta +- eps, every stage before the solve re-run there (PrepareConstraintSolve:
// kinematics, mass matrix, bias and actuator forces, collision, constraints): no solve is
// repeated, and a column costs two passes of the step's stages without the solve. [OURS] Drake's
// ICF differentiates g by automatic differentiation; alsim has none, and g's dependence on the
// positions runs through every stage.
//
// Positions: q_{k+1} = q_k (+) h v_{k+1} (engine/sim/integrate_positions.h), so on the tangent
// space (a perturbation dq of q moves it to q (+) dq; a ball or free joint's rotation is the
// body-frame rotation vector)
//   dq_{k+1} = P_q dq_k + h P_v dv_{k+1},
// identity on hinge, slide and a free joint's translation, and on a rotation with phi = h w:
// P_q = R(phi)^T (q (+) dq then Exp(phi) is q Exp(phi) Exp(R(phi)^T dq)) and P_v = J_r(phi), the
// right Jacobian of SO(3)'s exponential, I - (1 - cos t) / t^2 [phi]x + (t - sin t) / t^3 [phi]x^2,
// t = |phi|.
//
// Where g is not differentiable the Jacobian is that of the central difference: the mean of the
// two one-sided derivatives. That happens where a contact appears or vanishes between the inputs
// +- eps (a geom pair crossing its margin, a contact at the edge of its normal law: phi0 + h v_n
// = 0 or d v_n = 1), where a friction impulse crosses stiction's transition (|v_t| near v_s: the
// soft norm is smooth, but its curvature 1 / v_s makes the linearization valid only for changes
// well under v_s), and where a control meets ctrlrange or a force its forcerange.
// StepJacobians::constraint_changes counts the columns whose perturbed inputs changed the number
// of constraints.
#pragma once

#include <string>
#include <vector>

#include "engine/data/data.h"
#include "engine/dynamics/bias_forces.h"
#include "engine/model/model.h"
#include "engine/sim/step.h"
#include "engine/solver/newton/newton_solver.h"

namespace alsim {

// What a gradient step computes.
struct GradientRequest {
  bool state = true;      // d/dv_k, and d/dq_k unless positions is off
  bool positions = true;  // with state: d/dq_k too (differences through every stage: costly)
  bool controls = true;   // d/du
  // Named model parameters (ParameterNames lists the forms): body_mass:BODY (kg, its inertia
  // tensor kept), geom_friction:GEOM (sliding coefficient), geom_stiffness:GEOM and
  // geom_dissipation:GEOM (the geom's compliant layer, which the scene must set),
  // icf_stiffness and icf_dissipation (the solver options' defaults for geoms that set none).
  std::vector<std::string> parameters;
};

// The Jacobians of one step, row-major: entry (i, j) = d (output i) / d (input j); positions on
// the tangent space (nv coordinates, the file comment). Empty where the request left them out.
struct StepJacobians {
  int nv = 0, nu = 0;
  std::vector<double> dv_dv, dv_dq, dq_dv, dq_dq;  // [nv, nv]
  std::vector<double> dv_du, dq_du;                // [nv, nu]
  std::vector<std::string> parameters;             // the request's
  std::vector<double> dv_dp, dq_dp;                // [nv, parameters]
  // max |g(v_hat)| over max |A v_hat| + max |b|: how far the solve's answer is from the root
  // that the implicit function theorem differentiates (a loose tolerance shows here).
  double residual = 0;
  int constraint_changes = 0;  // columns whose +- eps inputs had another number of constraints
  // options.solver.interrupt rose during the columns of differences: the step was taken, the
  // Jacobians are empty (nv = 0).
  bool interrupted = false;
};

// The forms of GradientRequest::parameters, for messages and docs.
const char* ParameterNames();

class StepGradients {
 public:
  StepGradients(const Model& m, SolverType type);

  // Empty when a gradient step accepts the request; otherwise why not: the solver (icf-lagged,
  // icf-similar or sap), theta 0 with the Euler integrator, no time budget, known parameters.
  static std::string Validate(const Model& m, const StepOptions& options,
                              const GradientRequest& request);

  // Step(m, d, options) and the Jacobians of the step into *out. kInvalidOptions (nothing changed)
  // where Validate refuses or the Hessian is not positive definite.
  StepStatus Step(const Model& m, Data& d, const StepOptions& options,
                  const GradientRequest& request, StepJacobians* out);

 private:
  // g at v_hat_ with the scratch data's state and `model` (a perturbed copy for parameters).
  void Residual(const Model& model, const StepOptions& options, double* residual);
  // The scratch data at the step's start state.
  void ResetScratch();
  // -H^{-1} (g+ - g-) / (2 eps) into `column` (nv), after Residual into plus_ and minus_.
  void Column(const Model& m, const Data& d, double eps, double* column);
  // Whether dg/dv_k and dg/du have the exact forms (the file comment) for this step.
  bool Analytic(const Model& m, const StepOptions& options, const Data& d) const;
  // The exact dg/dv_k (dg_dv_) and dg/du (dg_du_) at the step's linearization (the hook).
  bool AnalyticPartials(const Model& m, const StepOptions& options, const Data& d,
                        const GradientRequest& request);

  NewtonSolver base_;   // the step's linearization and factor
  NewtonSolver probe_;  // residuals at perturbed inputs
  Data scratch_;
  Model perturbed_;  // a copy of the model for parameters (made on the first request for one)
  bool have_perturbed_ = false;
  std::vector<double> qpos0_, qvel0_, ctrl0_, v_hat_, residual_, plus_, minus_, unit_, column_;
  std::vector<Vec6> xfrc0_;
  BiasForceVelocityJacobian bias_jacobian_;
  std::vector<double> dg_dv_, dg_du_;  // the exact partials
  // Per dof and per actuator: the subsystem holding the nonzeros of its column of dg_dv_ or
  // dg_du_, -1 where they may span several.
  std::vector<int> dof_subsystem_, actuator_subsystem_;
  bool analytic_ = false;
  bool linearized_ = false;
  int probe_constraints_ = 0;
  int changes_ = 0;
};

}  // namespace alsim
