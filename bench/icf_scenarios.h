// The runs behind the experiments of Irrotational Contact Fields (seed 000; digest
// seed-000-icf.md section 11) that bench/icf_experiments.cc prints and
// tests/solver/icf_experiments_test.cc checks: the sliding rod (Sec. XI-C), the convergence
// studies of Figs. 4, 7 and 13, and the clutter (Sec. XII-A) with the Hessian's condition number.
// Header-only, so that the test sees the same runs without the benchmarks' build.
//
// The condition number: the solver keeps H = A + J^T G J (eq. 28) to itself, so
// AssembleHessian rebuilds it from the public state after a step: A (Data::qA), J (the
// JointSpaceJacobian of Data::constraints, whose kinematics are still the step's start) and each
// contact's G from the same public functions the solver calls (icf_contact.h: MakeIcfContact and
// IcfContactAt with phi0, v_n0 = J_n v0 and, for the regularized model and SAP, w = the mean of
// the diagonal of J_i A^-1 J_i^T; sap_cone.h for SAP). The momentum residual
// A (v - v_free) - J^T gamma(J v) at the step's answer, returned with it, checks the rebuild: it is
// zero to the solver's tolerance only if every contact's invariants match the solver's.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/linalg/tree_sparse_layout.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/icf/icf_contact.h"
#include "engine/solver/joint_space_jacobian.h"
#include "engine/solver/sap/sap_cone.h"
#include "engine/solver/sap/sap_parameters.h"
#include "engine/solver/solver.h"

namespace alsim::icf_experiments {

constexpr double kGravity = 9.81;

// The solvers the paper compares: Lagged, Lagged with the regularized stiction tolerance (26),
// Similar and SAP.
enum class Variant { kLagged, kRegularizedLagged, kSimilar, kSap };

inline const char* VariantName(Variant v) {
  switch (v) {
    case Variant::kLagged:
      return "icf-lagged";
    case Variant::kRegularizedLagged:
      return "icf-lagged-regularized";
    case Variant::kSimilar:
      return "icf-similar";
    case Variant::kSap:
      return "sap";
  }
  return "";
}

// A contact's physics as the paper sets it per experiment: ICF's k, H&C d and v_s; SAP's k and
// tau_d (0: none, which SAP's parameters read as its near-rigid default, so a negligible tau_d
// stands for it).
struct Physics {
  double stiffness = 1e7;
  double dissipation = 0;
  double sap_dissipation_time = 0;
  double stiction = 1e-4;
  double relative_tolerance = 1e-12;
};

inline StepOptions VariantOptions(Variant v, const Physics& p) {
  StepOptions options;
  options.solver.type = v == Variant::kSap       ? SolverType::kSap
                        : v == Variant::kSimilar ? SolverType::kIcfSimilar
                                                 : SolverType::kIcfLagged;
  options.solver.icf.stiffness = p.stiffness;
  options.solver.icf.dissipation = p.dissipation;
  options.solver.icf.stiction_speed = p.stiction;
  options.solver.icf.regularized = v == Variant::kRegularizedLagged;
  options.solver.icf.relative_tolerance = p.relative_tolerance;
  options.solver.sap.stiffness = p.stiffness;
  options.solver.sap.dissipation_time = std::max(p.sap_dissipation_time, 1e-15);
  options.solver.sap.relative_tolerance = p.relative_tolerance;
  return options;
}

// scenes/NAME with its timestep replaced by dt (0: the scene's); null (and `error` set) on failure.
inline std::shared_ptr<const Model> Scene(const std::string& scenes_dir, const std::string& name,
                                          double dt, std::string* error = nullptr) {
  const ModelImport imported = ImportModelFromFile(scenes_dir + "/" + name);
  if (!imported) {
    if (error != nullptr) *error = imported.error;
    return nullptr;
  }
  if (!(dt > 0)) return imported.model;
  auto copy = std::make_shared<Model>(*imported.model);
  copy->timestep = dt;
  return copy;
}

// The sum of the contacts' normal impulses over dt, and of their friction impulses' magnitudes.
inline void ContactForces(const Model& m, const Data& d, double* normal, double* friction) {
  *normal = *friction = 0;
  for (const Constraint& c : d.constraints.constraints) {
    if (c.type != ConstraintType::kContact) continue;
    const double* lambda = d.constraints.lambda.data() + c.row_adr;
    *normal += lambda[0] / m.timestep;
    if (c.dim >= 3) *friction += std::hypot(lambda[1], lambda[2]) / m.timestep;
  }
}

// ---- Sec. XI-C, the sliding rod (scenes/icf_sliding_rod.xml): 0.5 m, 0.3 kg, mu 2.3, k 1e7 N/m,
// 30 degrees, U0 = 10 m/s; d = 0.2 s/m and SAP's tau_d = 4e-6 s for the dissipative runs.
constexpr double kRodU0 = 10;
constexpr double kRodMass = 0.3;
constexpr double kRodAngle = M_PI / 6;  // the scene's pitch 0
constexpr double kRodEnd = 0.245;       // the lower hemisphere's center from the rod's, m
constexpr double kRodRadius = 0.005;
constexpr double kRodHeight = 0.1275;  // the rod's center at the start, m
constexpr double kRodMu = 2.3;

inline Physics RodPhysics(bool dissipation) {
  Physics p;
  p.stiffness = 1e7;
  p.dissipation = dissipation ? 0.2 : 0.0;
  p.sap_dissipation_time = dissipation ? 4e-6 : 0.0;
  return p;
}

struct RodSample {
  double t = 0;
  double q[3] = {0, 0, 0};  // x, z of the center (m, from the start) and the pitch (rad)
  double normal_force = 0, friction_force = 0;  // N
  double slip = 0;                              // the lower end's velocity along x, m/s
  double normal_velocity = 0;                   // its velocity along z, m/s
  double tip_height = 0;       // its lowest point's height, m (negative: in the ground)
  double center_velocity = 0;  // the center's vertical velocity, m/s
};

// The lower end's kinematics: its lowest point is G + 0.245 (cos b, 0, -sin b) - (0, 0, 0.005)
// with b = 30 deg + pitch (a pitch about +y turns x toward -z), moving at v_G + omega x r.
inline RodSample RodState(const Data& d, double t) {
  RodSample s;
  s.t = t;
  for (int i = 0; i < 3; ++i) s.q[i] = d.qpos[i];
  const double b = kRodAngle + d.qpos[2], w = d.qvel[2];
  const double rx = kRodEnd * std::cos(b), rz = -kRodEnd * std::sin(b) - kRodRadius;
  s.slip = d.qvel[0] + w * rz;
  s.normal_velocity = d.qvel[1] - w * rx;
  s.tip_height = kRodHeight + d.qpos[1] + rz;
  s.center_velocity = d.qvel[1];
  return s;
}

// Runs the rod for `duration` s at step dt; false if a step fails. samples[0] is the start.
inline bool RunRod(const std::string& scenes, Variant v, bool dissipation, double dt,
                   double duration, std::vector<RodSample>* samples) {
  const auto m = Scene(scenes, "icf_sliding_rod.xml", dt);
  if (!m) return false;
  Data d(*m);
  d.qvel[0] = kRodU0;
  const StepOptions options = VariantOptions(v, RodPhysics(dissipation));
  const long steps = std::lround(duration / dt);
  samples->clear();
  samples->reserve(steps + 1);
  samples->push_back(RodState(d, 0));
  for (long k = 1; k <= steps; ++k) {
    if (Step(*m, d, options) != StepStatus::kOk) return false;
    RodSample s = RodState(d, k * dt);
    ContactForces(*m, d, &s.normal_force, &s.friction_force);
    samples->push_back(s);
  }
  return true;
}

// What happened to the rod (Sec. XI-C): the impact is the peak of the normal force; the rod jams
// when its end, in contact, stops sliding forward (slip below v_s = 1e-4 m/s, or reversed), and
// jumps when, after the peak, the end leaves the ground with the center rising.
struct RodEvents {
  double impact_time = 0, peak_force = 0;  // s, N
  double stiction_time = 0;                // s in contact (normal force > 0) with |slip| < v_s
  // s with |slip| < 10 v_s, in contact or leaving it: the jam as the end's velocity on a plot at
  // the scale of its slip (Fig. 10) shows it
  double slow_time = 0;
  bool jammed = false, jumped = false;
  double takeoff_speed = 0;  // the center's vertical speed when the end leaves the ground, m/s
};

inline RodEvents RodEventsOf(const std::vector<RodSample>& samples) {
  constexpr double kStiction = 1e-4;
  RodEvents e;
  size_t peak = 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].normal_force > e.peak_force) {
      e.peak_force = samples[i].normal_force;
      peak = i;
    }
  }
  e.impact_time = samples[peak].t;
  for (size_t i = 1; i < samples.size(); ++i) {
    const double dt = samples[i].t - samples[i - 1].t;
    if (std::abs(samples[i].slip) < 10 * kStiction) e.slow_time += dt;
    if (!(samples[i].normal_force > 0)) continue;
    if (samples[i].slip < kStiction) e.jammed = true;
    if (std::abs(samples[i].slip) < kStiction) e.stiction_time += dt;
  }
  for (size_t i = peak; i < samples.size(); ++i) {
    if (samples[i].normal_force == 0 && samples[i].tip_height > 0) {
      e.takeoff_speed = samples[i].center_velocity;
      e.jumped = e.jammed && e.takeoff_speed > 0;
      break;
    }
  }
  return e;
}

// The square of the normal force's angular frequency in [t0, t1), from the samples `stride`
// apart: while the end stays in contact the force of a linear spring on an effective mass
// oscillates as F'' = -omega^2 (F - F_eq), so the least-squares slope of the second difference
// F'' against F, over every triple of samples in contact, is -omega^2. The contact's effective
// stiffness is m_eff omega^2: at one rod configuration and slip, the ratio of two models' omega^2
// is the ratio of their stiffnesses (Sec. VII-B: Similar's k (1 + mu d |v_t|) over Lagged's k).
inline double ForceOmegaSquared(const std::vector<RodSample>& samples, double t0, double t1,
                                size_t stride) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
  for (size_t i = stride; i + stride < samples.size(); ++i) {
    const RodSample &a = samples[i - stride], &b = samples[i], &c = samples[i + stride];
    if (b.t < t0 || b.t >= t1) continue;
    if (!(a.normal_force > 0 && b.normal_force > 0 && c.normal_force > 0)) continue;
    const double h = c.t - b.t;
    const double x = b.normal_force;
    const double y = (a.normal_force - 2 * b.normal_force + c.normal_force) / (h * h);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    n += 1;
  }
  if (n < 3) return 0;
  return -(n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// The mean slip of the lower end in [t0, t1).
inline double MeanSlip(const std::vector<RodSample>& samples, double t0, double t1) {
  double sum = 0;
  int count = 0;
  for (const RodSample& r : samples) {
    if (r.t >= t0 && r.t < t1) {
      sum += r.slip;
      ++count;
    }
  }
  return count > 0 ? sum / count : 0.0;
}

// ---- Convergence (Figs. 4, 7, 13): e_q(dt) = ((1/T) int_0^T |q_dt - q_ref|^2 dt)^1/2 against
// Lagged at a step 10 times below the study's smallest (Sec. XI), sampled at the coarse steps.
enum class ConvergenceCase { kConveyor, kFallingSphere, kRod, kRodDissipative };

inline const char* CaseName(ConvergenceCase c) {
  switch (c) {
    case ConvergenceCase::kConveyor:
      return "conveyor";
    case ConvergenceCase::kFallingSphere:
      return "falling_sphere";
    case ConvergenceCase::kRod:
      return "rod";
    case ConvergenceCase::kRodDissipative:
      return "rod_dissipative";
  }
  return "";
}

// The paper's steps for each case, its duration (a multiple of every step) and physics.
inline std::vector<double> CaseSteps(ConvergenceCase c) {
  switch (c) {
    case ConvergenceCase::kConveyor:
      return {2e-3, 1e-2, 5e-2};
    case ConvergenceCase::kFallingSphere:
      return {4e-4, 2e-3, 1e-2};
    default:
      return {1e-5, 4e-5, 1.6e-4, 6.4e-4};
  }
}

constexpr double kRodDuration = 0.064;  // s: 100 steps of 6.4e-4 s, past the jump

inline double CaseDuration(ConvergenceCase c) {
  switch (c) {
    case ConvergenceCase::kConveyor:
      return 3.0;
    case ConvergenceCase::kFallingSphere:
      return 0.4;
    default:
      return kRodDuration;
  }
}

inline Physics CasePhysics(ConvergenceCase c) {
  if (c == ConvergenceCase::kRod || c == ConvergenceCase::kRodDissipative) {
    return RodPhysics(c == ConvergenceCase::kRodDissipative);
  }
  Physics p;  // XI-A and XI-B: k 1e7 N/m, d 500 s/m, tau_d 1e-3 s
  p.dissipation = 500;
  p.sap_dissipation_time = 1e-3;
  return p;
}

// The positions compared: the box's center on the belt (x, y, z), the sphere's center, the rod's
// x, z and pitch (the paper's q for its 2-D cases; the free bodies' orientations are left out).
// q[k] after step k + 1; false if a step fails.
inline bool RunCase(const std::string& scenes, ConvergenceCase c, Variant v, double dt,
                    std::vector<std::vector<double>>* q) {
  const bool rod = c == ConvergenceCase::kRod || c == ConvergenceCase::kRodDissipative;
  const bool conveyor = c == ConvergenceCase::kConveyor;
  const char* file = rod        ? "icf_sliding_rod.xml"
                     : conveyor ? "icf_conveyor.xml"
                                : "icf_falling_sphere.xml";
  const auto m = Scene(scenes, file, dt);
  if (!m) return false;
  Data d(*m);
  const StepOptions options = VariantOptions(v, CasePhysics(c));
  d.qvel[0] = rod ? kRodU0 : conveyor ? 0.0 : 2.0;
  const long steps = std::lround(CaseDuration(c) / dt);
  const int first = conveyor ? 1 : 0, count = 3;
  q->assign(steps, std::vector<double>(count));
  const double omega = 2 * M_PI;
  for (long k = 0; k < steps; ++k) {
    if (conveyor) {  // the belt at 0.2 sin(2 pi t): its velocity at the step's end
      const double t = (k + 1) * dt;
      d.qvel[0] = 0.2 * omega * std::cos(omega * t);
      d.qpos[0] = 0.2 * std::sin(omega * t) - dt * d.qvel[0];
    }
    if (Step(*m, d, options) != StepStatus::kOk) return false;
    for (int i = 0; i < count; ++i) (*q)[k][i] = d.qpos[first + i];
  }
  return true;
}

// e_q of `run` (steps of dt) against `reference` (steps of dt_ref, dt a multiple of it).
inline double TrajectoryError(const std::vector<std::vector<double>>& run, double dt,
                              const std::vector<std::vector<double>>& reference, double dt_ref) {
  const long ratio = std::lround(dt / dt_ref);
  double sum = 0;
  for (size_t k = 0; k < run.size(); ++k) {
    const std::vector<double>& r = reference[(k + 1) * ratio - 1];
    for (size_t i = 0; i < r.size(); ++i) sum += (run[k][i] - r[i]) * (run[k][i] - r[i]);
  }
  return std::sqrt(sum / run.size());
}

// The least-squares slope of log e against log dt.
inline double FittedSlope(const std::vector<double>& dt, const std::vector<double>& e) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(dt.size());
  for (size_t i = 0; i < dt.size(); ++i) {
    const double x = std::log(dt[i]), y = std::log(e[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// ---- Sec. XII-A, the clutter (scenes/icf_clutter.xml): k 1e7 N/m, d 10 s/m, tau_d 1e-4 s, v_s
// 1e-4 m/s, mu 1, the paper's relative tolerance 1e-5.
inline Physics ClutterPhysics(double stiffness) {
  Physics p;
  p.stiffness = stiffness;
  p.dissipation = 10;
  p.sap_dissipation_time = 1e-4;
  p.relative_tolerance = 1e-5;
  return p;
}

// H = A + sum_i J_i^T G_i J_i of the step just taken over the dofs of its islands (the file
// comment), and the momentum residual's norm at the step's answer over ||A v||.
struct Hessian {
  Eigen::MatrixXd matrix;
  double relative_residual = 0;
};

inline Hessian AssembleHessian(const Model& m, const Data& d, const StepOptions& options,
                               const std::vector<double>& v0) {
  const SolverType type = options.solver.type;
  const Eigen::MatrixXd a = TreeSparseToDense(d.mass_layout, d.qA.data());
  const Eigen::Map<const Eigen::VectorXd> v(d.v_hat.data(), m.nv);
  const Eigen::Map<const Eigen::VectorXd> v_free(d.v_free.data(), m.nv);
  Eigen::MatrixXd h = a;
  Eigen::VectorXd residual = a * (v - v_free);
  JointSpaceJacobian jacobian;
  const ConstraintSet& set = d.constraints;
  jacobian.Reserve(m, set.constraints.size());
  jacobian.Layout(m, d);
  Eigen::MatrixXd a_inverse;
  const bool delassus = type == SolverType::kSap || options.solver.icf.regularized;
  if (delassus) a_inverse = a.inverse();
  std::vector<char> constrained(m.nv, 0);
  for (size_t i = 0; i < set.constraints.size(); ++i) {
    const Constraint& c = set.constraints[i];
    if (c.type != ConstraintType::kContact) continue;
    jacobian.Fill(m, d, static_cast<int>(i));
    Eigen::MatrixXd j = Eigen::MatrixXd::Zero(3, m.nv);
    for (int e = jacobian.entry_adr[i]; e < jacobian.entry_adr[i] + jacobian.entry_num[i]; ++e) {
      for (int r = 0; r < 3; ++r) j(r, jacobian.dof[e]) = jacobian.At(e, r);
      constrained[jacobian.dof[e]] = 1;
    }
    const Contact& contact = d.contact[c.contact];
    // ICF's friction as the solver takes it: anisotropic (Appendix B) where the scene sets it.
    const IcfFriction friction = ContactFriction(m, d, contact, c.friction > 0 ? c.friction : 0);
    const double mu = type == SolverType::kSap ? (c.friction > 0 ? c.friction : 0.0) : friction.mu;
    const int dim = mu > 0 ? 3 : 1;
    const double phi0 = set.bias[c.row_adr];
    double w = 0;
    if (delassus) w = (j.topRows(dim) * a_inverse * j.topRows(dim).transpose()).trace() / dim;
    const Eigen::VectorXd vc = j * v;
    double gamma[3] = {0, 0, 0};
    Eigen::Matrix3d g = Eigen::Matrix3d::Zero();
    if (type == SolverType::kSap) {
      const SapParameters& p = options.solver.sap;
      const double dt = m.timestep, tau = SapDissipationTime(p, dt);
      const double normal = std::max(1e-15, SapNormalRegularization(p, w, dt));
      const double tangent = std::max(1e-15, p.sigma * w);
      const double x[3] = {vc[0] + phi0 / (dt + tau), vc[1], vc[2]};
      const SapConeState state = SapConeAt(x, normal, tangent, mu, g.data());
      for (int r = 0; r < 3; ++r) gamma[r] = state.impulse[r];
    } else {
      const IcfParameters& p = options.solver.icf;
      const IcfCompliance compliance = ContactCompliance(m, p, contact.geom1, contact.geom2);
      IcfParameters own = p;
      own.stiction_speed = compliance.stiction;
      double vn0 = 0;
      for (int k = 0; k < m.nv; ++k) vn0 += j(0, k) * v0[k];
      const IcfContact invariants = MakeIcfContact(
          type == SolverType::kIcfSimilar ? IcfModel::kSimilar : IcfModel::kLagged, own, m.timestep,
          compliance.stiffness, compliance.dissipation, friction, phi0, vn0, w);
      const double x[3] = {vc[0], dim > 1 ? vc[1] : 0.0, dim > 2 ? vc[2] : 0.0};
      const IcfContactState state = IcfContactAt(invariants, x, g.data());
      for (int r = 0; r < dim; ++r) gamma[r] = state.impulse[r];
    }
    const Eigen::MatrixXd jd = j.topRows(dim);
    h += jd.transpose() * g.topLeftCorner(dim, dim) * jd;
    residual -= jd.transpose() * Eigen::Map<const Eigen::VectorXd>(gamma, dim);
  }
  // The participating dofs (Drake's): every dof of a subsystem some contact moves.
  std::vector<char> keep(m.nv, 0);
  for (int s = 0; s < static_cast<int>(m.subsystem_dof_adr.size()); ++s) {
    bool any = false;
    for (int k = m.subsystem_dof_adr[s]; k < m.subsystem_dof_adr[s] + m.subsystem_dof_num[s]; ++k) {
      any = any || constrained[k];
    }
    if (!any) continue;
    for (int k = m.subsystem_dof_adr[s]; k < m.subsystem_dof_adr[s] + m.subsystem_dof_num[s]; ++k) {
      keep[k] = 1;
    }
  }
  std::vector<int> dofs;
  for (int k = 0; k < m.nv; ++k) {
    if (keep[k]) dofs.push_back(k);
  }
  Hessian out;
  out.matrix.resize(dofs.size(), dofs.size());
  for (size_t r = 0; r < dofs.size(); ++r) {
    for (size_t c = 0; c < dofs.size(); ++c) out.matrix(r, c) = h(dofs[r], dofs[c]);
  }
  const double scale = (a * v).norm();
  out.relative_residual = scale > 0 ? residual.norm() / scale : residual.norm();
  return out;
}

// The 2-norm condition number of an SPD matrix: its largest eigenvalue over its smallest.
inline double ConditionNumber(const Eigen::MatrixXd& h) {
  if (h.rows() == 0) return 1;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(h, Eigen::EigenvaluesOnly);
  const Eigen::VectorXd& values = eigen.eigenvalues();
  return values[values.size() - 1] / values[0];
}

// One step of the clutter: the solver's Newton iterations (the most any island took: the paper's
// solver takes the whole system at once), the condition number of H (0 when not computed), the
// rebuild's residual, and the penetration of the step's contacts (phi0 < 0).
struct ClutterSample {
  double t = 0;
  int iterations = 0;
  double condition = 0, relative_residual = 0;
  int contacts = 0, penetrating = 0;
  double mean_penetration = 0, max_penetration = 0;  // m
  bool ok = true;                                    // the step succeeded
};

inline ClutterSample ClutterStep(const Model& m, Data& d, const StepOptions& options,
                                 bool condition, std::vector<double>* v0) {
  ClutterSample s;
  v0->assign(d.qvel.begin(), d.qvel.end());
  s.ok = Step(m, d, options) == StepStatus::kOk;
  s.t = d.time;
  s.iterations = d.solver_statistics.max_iterations;
  double sum = 0;
  for (const Constraint& c : d.constraints.constraints) {
    if (c.type != ConstraintType::kContact) continue;
    ++s.contacts;
    const double phi = d.constraints.bias[c.row_adr];
    if (phi < 0) {
      ++s.penetrating;
      sum -= phi;
      s.max_penetration = std::max(s.max_penetration, -phi);
    }
  }
  s.mean_penetration = s.penetrating > 0 ? sum / s.penetrating : 0.0;
  if (condition && s.ok && s.contacts > 0) {
    const Hessian h = AssembleHessian(m, d, options, *v0);
    s.condition = ConditionNumber(h.matrix);
    s.relative_residual = h.relative_residual;
  }
  return s;
}

}  // namespace alsim::icf_experiments
