#include "engine/sim/step_gradients.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "engine/constraint/build_constraints.h"
#include "engine/math/spatial.h"
#include "engine/sim/integrate_positions.h"

namespace alsim {
namespace {

// The central differences' steps. g is affine in the controls, quadratic in v_k (Coriolis
// forces) and affine in Lagged's gamma_n0 between kinks, but a position moves a contact's phi0,
// whose scale is the penetration m g / k: microns at k = 1e7 N/m, so the position step is far
// below it, where rounding in g (terms relative 1e-16) still leaves the difference good to about
// 1e-8 of them. A parameter's step is relative to its value.
constexpr double kPositionStep = 1e-8;
constexpr double kVelocityStep = 1e-7;
constexpr double kRelativeStep = 1e-7;

enum class ParameterKind {
  kBodyMass,
  kGeomFriction,
  kGeomStiffness,
  kGeomDissipation,
  kIcfStiffness,
  kIcfDissipation
};

struct Parameter {
  ParameterKind kind = ParameterKind::kBodyMass;
  int index = -1;  // body or geom
};

int FindName(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

// The parameter `spec` names, or an error.
std::string ParseParameter(const Model& m, const std::string& spec, Parameter* out) {
  if (spec == "icf_stiffness" || spec == "icf_dissipation") {
    out->kind =
        spec == "icf_stiffness" ? ParameterKind::kIcfStiffness : ParameterKind::kIcfDissipation;
    return "";
  }
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string name = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "body_mass") {
    out->kind = ParameterKind::kBodyMass;
    out->index = FindName(m.body_name, name);
    if (out->index <= 0 || name.empty())
      return "parameter '" + spec + "': no body named '" + name + "'";
    if (!(m.body_mass[out->index] > 0)) return "parameter '" + spec + "': the body has no mass";
    return "";
  }
  if (kind == "geom_friction" || kind == "geom_stiffness" || kind == "geom_dissipation") {
    out->kind = kind == "geom_friction"    ? ParameterKind::kGeomFriction
                : kind == "geom_stiffness" ? ParameterKind::kGeomStiffness
                                           : ParameterKind::kGeomDissipation;
    out->index = name.empty() ? -1 : FindName(m.geom_name, name);
    if (out->index < 0) return "parameter '" + spec + "': no geom named '" + name + "'";
    if (out->kind == ParameterKind::kGeomStiffness && !(m.geom_contact_stiffness[out->index] > 0)) {
      return "parameter '" + spec +
             "': the geom sets no stiffness (custom text alsim:contact:" + name +
             "); ask for icf_stiffness, the default of geoms that set none";
    }
    if (out->kind == ParameterKind::kGeomDissipation &&
        !(m.geom_contact_dissipation[out->index] >= 0)) {
      return "parameter '" + spec +
             "': the geom sets no dissipation (custom text alsim:contact:" + name +
             "); ask for icf_dissipation, the default of geoms that set none";
    }
    return "";
  }
  return "unknown parameter '" + spec + "'; parameters are " + ParameterNames();
}

// The parameter's value in (m, options).
double& ParameterValue(const Parameter& p, Model& m, StepOptions& options) {
  switch (p.kind) {
    case ParameterKind::kBodyMass:
      return m.body_mass[p.index];
    case ParameterKind::kGeomFriction:
      return m.geom_friction[p.index][0];
    case ParameterKind::kGeomStiffness:
      return m.geom_contact_stiffness[p.index];
    case ParameterKind::kGeomDissipation:
      return m.geom_contact_dissipation[p.index];
    case ParameterKind::kIcfStiffness:
      return options.solver.icf.stiffness;
    case ParameterKind::kIcfDissipation:
      break;
  }
  return options.solver.icf.dissipation;
}

// R(phi) and J_r(phi) of SO(3)'s exponential (the file comment of step_gradients.h).
void RotationBlocks(const Vec3& phi, Mat3* rotation, Mat3* right_jacobian) {
  const double t = phi.norm();
  const Mat3 s = Skew(phi);
  // (1 - cos t) / t^2 and (t - sin t) / t^3, by their series near 0 where the formulas cancel.
  double a = 0.5 - t * t / 24, b = 1.0 / 6 - t * t / 120;
  if (t > 1e-4) {
    a = (1 - std::cos(t)) / (t * t);
    b = (t - std::sin(t)) / (t * t * t);
  }
  *rotation = Mat3::Identity() + std::sin(t) / (t > 0 ? t : 1) * s + a * s * s;
  if (t == 0) *rotation = Mat3::Identity();
  *right_jacobian = Mat3::Identity() - a * s + b * s * s;
}

}  // namespace

const char* ParameterNames() {
  return "body_mass:BODY, geom_friction:GEOM, geom_stiffness:GEOM, geom_dissipation:GEOM, "
         "icf_stiffness, icf_dissipation";
}

StepGradients::StepGradients(const Model& m, SolverType type)
    : base_(m, type), probe_(m, type), scratch_(m), bias_jacobian_(m) {
  qpos0_.resize(m.nq);
  qvel0_.resize(m.nv);
  ctrl0_.resize(m.nu);
  xfrc0_.resize(m.nbody);
  for (std::vector<double>* values : {&v_hat_, &residual_, &plus_, &minus_, &unit_, &column_}) {
    values->assign(m.nv, 0.0);
  }
  // Where the exact dg/dv_k's and dg/du's columns have their nonzeros (SolveLinearizedColumns):
  // a velocity's within its tree (A, bias forces, dampers, Lagged's contacts join islands), unless
  // a damped tendon spans trees; an actuator's on its moment's dofs.
  auto subsystem = [&m](int dof) { return m.body_subsystem[m.dof_body[dof]]; };
  bool spanning = false;
  for (int t = 0; t < m.ntendon; ++t) {
    for (int k = m.tendon_wrap_adr[t]; k < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++k) {
      spanning =
          spanning || (m.tendon_damping[t] != 0 &&
                       subsystem(m.wrap_dof[k]) != subsystem(m.wrap_dof[m.tendon_wrap_adr[t]]));
    }
  }
  dof_subsystem_.resize(m.nv);
  for (int j = 0; j < m.nv; ++j) dof_subsystem_[j] = spanning ? -1 : subsystem(j);
  actuator_subsystem_.assign(m.nu, -1);
  for (int a = 0; a < m.nu; ++a) {
    if (m.actuator_transmission[a] == ActuatorTransmission::kJoint) {
      actuator_subsystem_[a] = subsystem(m.jnt_dof_adr[m.actuator_jnt[a]]);
    } else if (m.actuator_transmission[a] == ActuatorTransmission::kTendon) {
      const int t = m.actuator_tendon[a], first = m.tendon_wrap_adr[t];
      int owner = m.tendon_wrap_num[t] > 0 ? subsystem(m.wrap_dof[first]) : -1;
      for (int k = first; k < first + m.tendon_wrap_num[t]; ++k) {
        if (subsystem(m.wrap_dof[k]) != owner) owner = -1;
      }
      actuator_subsystem_[a] = owner;
    }
  }
}

std::string StepGradients::Validate(const Model& m, const StepOptions& options,
                                    const GradientRequest& request) {
  const SolverType type = options.solver.type;
  if (type != SolverType::kIcfLagged && type != SolverType::kIcfSimilar &&
      type != SolverType::kSap) {
    return std::string(
               "gradients need a convex Newton solver: icf-lagged, icf-similar or sap (not ") +
           SolverName(type) + ")";
  }
  if (options.theta != 0 || options.solver.integrator != Integrator::kEuler) {
    return "gradients need theta 0 and the Euler integrator";
  }
  if (options.solver.time_budget_us > 0) {
    return "gradients need a converged solve: time_budget_us must be 0";
  }
  std::string error = ValidateStepOptions(options);
  if (!error.empty()) return error;
  for (const std::string& spec : request.parameters) {
    Parameter p;
    error = ParseParameter(m, spec, &p);
    if (!error.empty()) return error;
  }
  return "";
}

bool StepGradients::Analytic(const Model& m, const StepOptions& options, const Data& d) const {
  if (options.solver.type == SolverType::kIcfLagged && options.solver.icf.regularized) return false;
  for (int a = 0; a < m.nu; ++a) {
    if (m.actuator_transmission[a] == ActuatorTransmission::kSliderCrank) return false;
    if (IsImplicitServo(m, a, options.constraints)) return false;
  }
  for (const Constraint& c : d.constraints.constraints) {
    if (c.type == ConstraintType::kSoft) return false;
  }
  return true;
}

bool StepGradients::AnalyticPartials(const Model& m, const StepOptions& options, const Data& d,
                                     const GradientRequest& request) {
  const int nv = m.nv, nu = m.nu;
  const double h = m.timestep;
  // An actuator's moment arm m (its qfrc is gear m force) as (dof, coefficient) pairs.
  auto for_each_moment = [&](int a, auto fn) {
    if (m.actuator_transmission[a] == ActuatorTransmission::kJoint) {
      fn(m.jnt_dof_adr[m.actuator_jnt[a]], 1.0);
      return;
    }
    if (m.actuator_transmission[a] == ActuatorTransmission::kActivation) return;  // no force
    const int t = m.actuator_tendon[a];
    for (int k = m.tendon_wrap_adr[t]; k < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++k) {
      fn(m.wrap_dof[k], m.wrap_coef[k]);
    }
  };
  // Whether the actuator's ctrl and force are inside their ranges (else d force = 0), with its
  // unclamped force.
  auto unclamped = [&](int a, bool* ctrl_inside) {
    const double u = d.ctrl[a];
    *ctrl_inside = !m.actuator_ctrl_limited[a] ||
                   (u > m.actuator_ctrl_lower[a] && u < m.actuator_ctrl_upper[a]);
    const double ctrl = std::clamp(u, m.actuator_ctrl_limited[a] ? m.actuator_ctrl_lower[a] : u,
                                   m.actuator_ctrl_limited[a] ? m.actuator_ctrl_upper[a] : u);
    double velocity = 0;
    for_each_moment(a, [&](int dof, double c) { velocity += c * d.qvel[dof]; });
    const double force = m.actuator_gain[a] * ctrl + m.actuator_bias0[a] +
                         m.actuator_bias1[a] * d.actuator_length[a] +
                         m.actuator_bias2[a] * m.actuator_gear[a] * velocity;
    return !m.actuator_force_limited[a] ||
           (force > m.actuator_force_lower[a] && force < m.actuator_force_upper[a]);
  };
  if (request.state) {
    dg_dv_.assign(static_cast<size_t>(nv) * nv, 0.0);
    bias_jacobian_.Add(m, d, h, dg_dv_.data());  // + h d qfrc_bias/dv
    // -(A + h df/dv) with df/dv = -D - tendon dampers - d qfrc_bias/dv + actuators' bias2.
    const TreeSparseLayout& layout = d.mass_layout;
    for (int i = 0; i < nv; ++i) {
      for (int t = 0; t < layout.row_nnz[i]; ++t) {
        const int j = layout.column[layout.row_adr[i] + t];
        const double a = d.qA[layout.row_adr[i] + t];
        dg_dv_[static_cast<size_t>(i) * nv + j] -= a;
        if (j != i) dg_dv_[static_cast<size_t>(j) * nv + i] -= a;
      }
      dg_dv_[static_cast<size_t>(i) * nv + i] += h * m.dof_damping[i];
    }
    for (int t = 0; t < m.ntendon; ++t) {
      const double damping = m.tendon_damping[t];
      if (damping == 0) continue;
      for (int a = m.tendon_wrap_adr[t]; a < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++a) {
        for (int b = m.tendon_wrap_adr[t]; b < m.tendon_wrap_adr[t] + m.tendon_wrap_num[t]; ++b) {
          dg_dv_[static_cast<size_t>(m.wrap_dof[a]) * nv + m.wrap_dof[b]] +=
              h * damping * m.wrap_coef[a] * m.wrap_coef[b];
        }
      }
    }
    for (int a = 0; a < nu; ++a) {
      bool ctrl_inside = false;
      const double gear = m.actuator_gear[a];
      if (m.actuator_bias2[a] == 0 || !unclamped(a, &ctrl_inside)) continue;
      for_each_moment(a, [&](int i, double ci) {
        for_each_moment(a, [&](int j, double cj) {
          dg_dv_[static_cast<size_t>(i) * nv + j] -=
              h * gear * gear * m.actuator_bias2[a] * ci * cj;
        });
      });
    }
    if (!base_.AddLaggedVelocityTerms(d, options.solver, dg_dv_.data())) return false;
  }
  if (request.controls) {
    dg_du_.assign(static_cast<size_t>(nv) * nu, 0.0);
    for (int a = 0; a < nu; ++a) {
      bool ctrl_inside = false;
      if (!unclamped(a, &ctrl_inside) || !ctrl_inside) continue;
      const double scale = -h * m.actuator_gear[a] * m.actuator_gain[a];
      for_each_moment(
          a, [&](int i, double c) { dg_du_[static_cast<size_t>(i) * nu + a] += scale * c; });
    }
  }
  return true;
}

void StepGradients::ResetScratch() {
  std::copy(qpos0_.begin(), qpos0_.end(), scratch_.qpos.begin());
  std::copy(qvel0_.begin(), qvel0_.end(), scratch_.qvel.begin());
  std::copy(ctrl0_.begin(), ctrl0_.end(), scratch_.ctrl.begin());
  std::copy(xfrc0_.begin(), xfrc0_.end(), scratch_.xfrc_applied.begin());
}

void StepGradients::Residual(const Model& model, const StepOptions& options, double* residual) {
  PrepareConstraintSolve(model, scratch_, options);
  if (static_cast<int>(scratch_.constraints.constraints.size()) != probe_constraints_) {
    probe_constraints_ = -1;  // marks the column (Column)
  }
  probe_.Linearize(model, scratch_, options.solver, v_hat_.data(), residual, false);
}

void StepGradients::Column(const Model& m, const Data& d, double eps, double* column) {
  for (int i = 0; i < m.nv; ++i) column[i] = -(plus_[i] - minus_[i]) / (2 * eps);
  base_.SolveLinearized(m, d, column);
}

StepStatus StepGradients::Step(const Model& m, Data& d, const StepOptions& options,
                               const GradientRequest& request, StepJacobians* out) {
  if (!Validate(m, options, request).empty()) return StepStatus::kInvalidOptions;
  std::copy(d.qpos.begin(), d.qpos.end(), qpos0_.begin());
  std::copy(d.qvel.begin(), d.qvel.end(), qvel0_.begin());
  std::copy(d.ctrl.begin(), d.ctrl.end(), ctrl0_.begin());
  std::copy(d.xfrc_applied.begin(), d.xfrc_applied.end(), xfrc0_.begin());
  linearized_ = false;
  struct Hook {
    StepGradients* self;
    const Model* m;
    const StepOptions* options;
    const GradientRequest* request;
  } hook{this, &m, &options, &request};
  const StepStatus status = alsim::Step(
      m, d, options,
      [](Data& data, void* context) {
        Hook& h = *static_cast<Hook*>(context);
        StepGradients& self = *h.self;
        std::copy(data.v_hat.begin(), data.v_hat.end(), self.v_hat_.begin());
        self.linearized_ = self.base_.Linearize(*h.m, data, h.options->solver, data.v_hat.data(),
                                                self.residual_.data(), true);
        self.analytic_ = self.linearized_ && self.Analytic(*h.m, *h.options, data) &&
                         self.AnalyticPartials(*h.m, *h.options, data, *h.request);
      },
      &hook);
  const int nv = m.nv, nu = m.nu;
  // The vectors keep their storage from step to step (assign reuses it): a gradient step
  // allocates only while its sizes grow.
  for (std::vector<double>* values : {&out->dv_dv, &out->dv_dq, &out->dq_dv, &out->dq_dq,
                                      &out->dv_du, &out->dq_du, &out->dv_dp, &out->dq_dp}) {
    values->clear();
  }
  out->nv = out->nu = 0;
  out->interrupted = false;
  out->residual = 0;
  out->constraint_changes = 0;
  if (status != StepStatus::kOk || !linearized_) return status;
  out->nv = nv;
  out->nu = nu;
  if (out->parameters != request.parameters) out->parameters = request.parameters;
  double residual = 0, scale = 0;
  for (int i = 0; i < nv; ++i) {
    residual = std::max(residual, std::abs(residual_[i]));
    scale = std::max(scale, std::abs(d.solver_rhs[i]));
  }
  out->residual = scale > 0 ? residual / scale : residual;
  const int constraints = static_cast<int>(d.constraints.constraints.size());
  changes_ = 0;

  // One column of a Jacobian: g at the inputs moved by +-eps (`move(sign)` on the scratch data,
  // `model` the model there), then -H^{-1} dg/dtheta into `target` (row-major, `width` columns).
  // The solver's interrupt (SolverOptions::interrupt) also stops the columns of differences,
  // each two passes of the stages: the step stands, its Jacobians are dropped.
  const std::atomic<bool>* interrupt = options.solver.interrupt;
  bool interrupted = false;
  auto column = [&](const Model& model, const StepOptions& opts, double eps, auto move,
                    double* target, int width, int j) {
    interrupted = interrupted || (interrupt != nullptr && interrupt->load());
    if (interrupted) return;
    probe_constraints_ = constraints;
    for (const double sign : {1.0, -1.0}) {
      ResetScratch();
      move(sign);
      Residual(model, opts, sign > 0 ? plus_.data() : minus_.data());
    }
    if (probe_constraints_ < 0) ++changes_;
    Column(m, d, eps, column_.data());
    for (int i = 0; i < nv; ++i) target[static_cast<size_t>(i) * width + j] = column_[i];
  };
  if (request.state) {
    out->dv_dv.assign(static_cast<size_t>(nv) * nv, 0.0);
    if (request.positions) out->dv_dq.assign(static_cast<size_t>(nv) * nv, 0.0);
    if (analytic_) {
      for (size_t e = 0; e < dg_dv_.size(); ++e) out->dv_dv[e] = -dg_dv_[e];
      base_.SolveLinearizedColumns(m, d, out->dv_dv.data(), nv, dof_subsystem_.data());
    }
    for (int j = 0; j < nv && !analytic_; ++j) {
      column(
          m, options, kVelocityStep, [&](double sign) { scratch_.qvel[j] += sign * kVelocityStep; },
          out->dv_dv.data(), nv, j);
    }
    for (int j = 0; j < nv && request.positions; ++j) {
      std::fill(unit_.begin(), unit_.end(), 0.0);
      unit_[j] = 1;
      column(
          m, options, kPositionStep,
          [&](double sign) {
            IntegratePositions(m, unit_.data(), sign * kPositionStep, scratch_.qpos.data());
          },
          out->dv_dq.data(), nv, j);
    }
  }
  if (request.controls) {
    out->dv_du.assign(static_cast<size_t>(nv) * nu, 0.0);
    if (analytic_) {
      for (size_t e = 0; e < dg_du_.size(); ++e) out->dv_du[e] = -dg_du_[e];
      base_.SolveLinearizedColumns(m, d, out->dv_du.data(), nu, actuator_subsystem_.data());
    }
    for (int a = 0; a < nu && !analytic_; ++a) {
      const double eps = kVelocityStep * std::max(1.0, std::abs(ctrl0_[a]));
      column(
          m, options, eps, [&](double sign) { scratch_.ctrl[a] += sign * eps; }, out->dv_du.data(),
          nu, a);
    }
  }
  const int np = static_cast<int>(request.parameters.size());
  if (np > 0) {
    if (!have_perturbed_) {
      perturbed_ = m;  // allocates once: a copy to perturb, m stays immutable
      have_perturbed_ = true;
    }
    out->dv_dp.assign(static_cast<size_t>(nv) * np, 0.0);
    StepOptions perturbed_options = options;
    for (int p = 0; p < np; ++p) {
      Parameter parameter;
      ParseParameter(m, request.parameters[p], &parameter);
      double& value = ParameterValue(parameter, perturbed_, perturbed_options);
      const double original = value;
      const double eps = kRelativeStep * std::max(std::abs(original), 1e-3);
      column(
          perturbed_, perturbed_options, eps, [&](double sign) { value = original + sign * eps; },
          out->dv_dp.data(), np, p);
      value = original;
    }
  }
  out->constraint_changes = changes_;
  if (interrupted) {
    for (std::vector<double>* values : {&out->dv_dv, &out->dv_dq, &out->dv_du, &out->dv_dp}) {
      values->clear();
    }
    out->nv = out->nu = 0;
    out->interrupted = true;
    return status;
  }

  // dq_{k+1} = P_q dq_k + h P_v dv_{k+1} (the file comment), block by joint.
  const double h = m.timestep;
  auto positions = [&](const std::vector<double>& dv, int width, bool state,
                       std::vector<double>* dq) {
    if (dv.empty()) return;
    dq->assign(dv.size(), 0.0);
    auto at = [width](std::vector<double>& x, int i, int j) -> double& {
      return x[static_cast<size_t>(i) * width + j];
    };
    auto cat = [width](const std::vector<double>& x, int i, int j) {
      return x[static_cast<size_t>(i) * width + j];
    };
    auto linear = [&](int i) {
      for (int j = 0; j < width; ++j) at(*dq, i, j) = h * cat(dv, i, j) + (state && i == j ? 1 : 0);
    };
    auto rotation = [&](int r) {
      Mat3 turn, right;
      RotationBlocks(h * Vec3(v_hat_[r], v_hat_[r + 1], v_hat_[r + 2]), &turn, &right);
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < width; ++j) {
          double sum = 0;
          for (int k = 0; k < 3; ++k) sum += h * right(i, k) * cat(dv, r + k, j);
          at(*dq, r + i, j) = sum;
        }
        if (!state) continue;
        for (int k = 0; k < 3; ++k) at(*dq, r + i, r + k) += turn(k, i);  // R^T
      }
    };
    for (int jnt = 0; jnt < m.njnt; ++jnt) {
      const int dof = m.jnt_dof_adr[jnt];
      switch (m.jnt_type[jnt]) {
        case JointType::kFree:
          for (int k = 0; k < 3; ++k) linear(dof + k);
          rotation(dof + 3);
          break;
        case JointType::kBall:
          rotation(dof);
          break;
        case JointType::kSlide:
        case JointType::kHinge:
          linear(dof);
          break;
      }
    }
  };
  positions(out->dv_dv, nv, false, &out->dq_dv);
  positions(out->dv_dq, nv, true, &out->dq_dq);
  positions(out->dv_du, nu, false, &out->dq_du);
  positions(out->dv_dp, np, false, &out->dq_dp);
  return status;
}

}  // namespace alsim
