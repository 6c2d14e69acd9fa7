// The Drumwright paper's cube on an elastic foundation (Sec. 5.5, Tables 1-2, Fig. 7; digest
// seed-003-drumwright.md 9.4): a free rigid cube on a Winkler foundation of unilateral elements,
// stepped by the first-order step (engine/solver/drumwright/first_order_step.h) and, as the
// ground truth, integrated as the continuous piecewise ODE (16)-(18) with the law (68) by
// Boost.Odeint at tight tolerances with its switching events located. Shared by
// tests/solver/first_order_step_test.cc (test D), tests/solver/drumwright_foundation_test.cc and
// bench/drumwright_foundation_bench.cc (Tables 1-2).
//
// The model [paper]: side s 1 m, 8 kg (density 8 kg/m^3), foundation depth 1 m, per_side^2
// elements (100 or 900), Young's modulus E 1e7 or 1e11 Pa, B_ii 1 N s/m, K_ii = E area / depth,
// frictionless; a load of 5 or 50 N, always downward (world -z), applied at the body point
// (s/2)(cos 10t, sin 10t, 1) (the cube frame, origin at the center of mass); from rest, undeformed,
// the center of mass s/2 above the foundation's top z = 0.
// [OURS] (the paper leaves these open): gravity 9.8 m/s^2; the elements' centers on a regular
// per_side x per_side grid over the bottom face, each a body point; q = (center of mass,
// unit quaternion body -> world, w first), v = (linear velocity, angular velocity in the world
// frame). The cube's inertia is isotropic (m s^2 / 6 I), so M = diag(m, m, m, I, I, I) in the
// world frame and there is no gyroscopic term.
//
// Element j at body point r_j, a_j = R r_j: phi_j = z + a_j.z (the height above z = 0),
// G_j = d phid_j / d(v, w) = (0, 0, 1, a_j.y, -a_j.x, 0), its force lam_j along +z; Gd v is
// omitted in both the step and the continuous law (first_order_step.h's policy: Mhat does not
// exist for 100 rows over 6 dofs).
//
// The step (StepFoundation): rows only where phi0 <= 0 (the paper: no speculative rows), the
// load and gravity at t0, v1 by SolveFirstOrderStep (the QP (83)-(85); with >= 4 rows per dof it
// takes the diagonal-plus-low-rank path), then the position by x1 = x0 + h v1 (36) and the
// quaternion by the exact rotation of h w1 about the world axis, q1 = exp(h w1 / 2) q0,
// renormalized [OURS: the paper does not say how it integrates orientation].
//
// The continuous model (FoundationDerivative): q' = (v, 1/2 (0, w) q), M v' = f + sum_j G_j^T
// lam_j with (68) per element, lam_j = max(0, -K phi_j - B phid_j) where phi_j <= 0 and 0 where
// phi_j > 0 (an extended element exerts nothing). Without Gd v the elements decouple, so (68) is
// the componentwise max (the digest's section 5 caveat concerns the discrete QP only).
// The reference (IntegrateReference): each element is "pushing" (force = the law) or "free"
// (force 0); the modes are frozen over each step, so that every step integrates a smooth ODE at
// the method's order. After an accepted step the modes are re-evaluated (pushing iff phi <= 0
// and the law >= 0) at 8 evenly spaced points of the step's cubic Hermite interpolant (y, y' at
// both ends; the 8th is the step's end): a grazing element that lifts and lands within one step
// would go unseen at its end alone. At the first point that differs, the switch time is bisected
// to 1e-14 s on the interpolant, one step of the method is taken from the step's start to 1e-12 s
// past it, and every element's mode is updated there (elements switching within that margin
// switch together). If that step shows no switch, the interpolant was early: it counts as an
// ordinary step, and after three such in a row the next switch is bisected on single steps of
// the method instead. A pushing element leaves where its law crosses 0 (the force is continuous
// there); one touching down jumps from 0 to -B phid >= 0. A mode change that reverts within an
// eighth of a step goes unseen.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>
// GCC 12 at -O3 reports odeint's steppers' state arrays as maybe uninitialized when a stepper is
// copied (they are written before they are read).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/numeric/odeint.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "engine/solver/drumwright/first_order_step.h"

namespace alsim::bench {

struct FoundationParameters {
  double side = 1;        // s, m
  double mass = 8;        // kg
  double depth = 1;       // m, the foundation's
  int per_side = 10;      // elements per side of the bottom face: 10 (100) or 30 (900)
  double modulus = 1e7;   // E, Pa
  double damping = 1;     // B_ii, N s/m
  double load = 5;        // N, downward
  double load_rate = 10;  // rad/s, the load point's circling
  double gravity = 9.8;   // m/s^2 [OURS]

  int Elements() const { return per_side * per_side; }
  double Stiffness() const { return modulus * side * side / Elements() / depth; }  // K_ii
  double Inertia() const { return mass * side * side / 6; }
};

// The elements' centers in the cube frame (on the bottom face, z = -s/2), row-major in x.
inline std::vector<Eigen::Vector3d> FoundationElements(const FoundationParameters& s) {
  std::vector<Eigen::Vector3d> points;
  const int n = s.per_side;
  for (int iy = 0; iy < n; ++iy) {
    for (int ix = 0; ix < n; ++ix) {
      points.emplace_back((ix + 0.5) * s.side / n - s.side / 2,
                          (iy + 0.5) * s.side / n - s.side / 2, -s.side / 2);
    }
  }
  return points;
}

struct CubeState {
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  // center of mass, m
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();          // m/s
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // rad/s, world frame
};

// At rest, undeformed: the bottom face on z = 0.
inline CubeState RestingCube(const FoundationParameters& s) {
  CubeState state;
  state.position.z() = s.side / 2;
  return state;
}

// q = (position, quaternion w x y z), the coordinates Table 2's error is measured over.
inline Eigen::Matrix<double, 7, 1> Coordinates(const CubeState& state) {
  Eigen::Matrix<double, 7, 1> q;
  q << state.position, state.orientation.w(), state.orientation.x(), state.orientation.y(),
      state.orientation.z();
  return q;
}

// Table 2's error: |q - q_ref| over (position, quaternion), the quaternions taken in the same
// hemisphere (q and -q are one orientation).
inline double CoordinateError(const CubeState& state, const CubeState& reference) {
  Eigen::Matrix<double, 7, 1> a = Coordinates(state);
  const Eigen::Matrix<double, 7, 1> b = Coordinates(reference);
  if (a.tail<4>().dot(b.tail<4>()) < 0) a.tail<4>() *= -1;
  return (a - b).norm();
}

struct Wrench {
  Eigen::Vector3d force = Eigen::Vector3d::Zero();   // N, world
  Eigen::Vector3d torque = Eigen::Vector3d::Zero();  // N m, world, about the center of mass
};

// Gravity and the load at time t for orientation R.
inline Wrench AppliedWrench(const FoundationParameters& s, const Eigen::Matrix3d& rotation,
                            double t) {
  Wrench w;
  const Eigen::Vector3d load(0, 0, -s.load);
  const Eigen::Vector3d point =
      rotation *
      (s.side / 2 * Eigen::Vector3d(std::cos(s.load_rate * t), std::sin(s.load_rate * t), 1.0));
  w.force = load + Eigen::Vector3d(0, 0, -s.mass * s.gravity);
  w.torque = point.cross(load);
  return w;
}

// ---------------------------------------------------------------------------------------------
// The first-order step.

struct FoundationStep {
  bool ok = false;
  int rows = 0;               // elements with phi0 <= 0: the step's rows
  Eigen::VectorXd forces;     // N per element (0 off the rows)
  ConicQpStatistics program;  // of the QP, when there were rows
};

// One step of h from time t (the header's step).
inline FoundationStep StepFoundation(const FoundationParameters& s,
                                     const std::vector<Eigen::Vector3d>& elements, double t,
                                     double h, CubeState* state,
                                     const ConicQpParameters& parameters = {}) {
  FoundationStep out;
  const Eigen::Matrix3d rotation = state->orientation.toRotationMatrix();
  const Wrench wrench = AppliedWrench(s, rotation, t);
  const double inertia = s.Inertia();
  FirstOrderProblem p;
  p.mass = (Eigen::VectorXd(6) << s.mass, s.mass, s.mass, inertia, inertia, inertia)
               .finished()
               .asDiagonal();
  p.velocity.resize(6);
  p.velocity << state->velocity, state->angular_velocity;
  p.force.resize(6);
  p.force << wrench.force, wrench.torque;
  p.h = h;
  std::vector<int> index;
  std::vector<Eigen::Matrix<double, 1, 6>> jacobian;
  for (size_t j = 0; j < elements.size(); ++j) {
    const Eigen::Vector3d a = rotation * elements[j];
    const double phi = state->position.z() + a.z();
    if (phi > 0) continue;
    SpringRow row;
    row.type = SpringRowClass::kUnilateral;
    row.phi0 = phi;
    row.stiffness = s.Stiffness();
    row.damping = s.damping;
    p.rows.push_back(row);
    index.push_back(static_cast<int>(j));
    jacobian.push_back((Eigen::Matrix<double, 1, 6>() << 0, 0, 1, a.y(), -a.x(), 0).finished());
  }
  out.rows = static_cast<int>(index.size());
  out.forces = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(elements.size()));
  Eigen::VectorXd v1;
  if (index.empty()) {
    v1 = p.velocity + h * p.mass.diagonal().cwiseInverse().cwiseProduct(p.force);
  } else {
    p.jacobian.resize(out.rows, 6);
    for (int k = 0; k < out.rows; ++k) p.jacobian.row(k) = jacobian[k];
    const FirstOrderResult r = SolveFirstOrderStep(p, parameters);
    out.program = r.program;
    if (!r.ok) return out;
    v1 = r.velocity;
    for (int k = 0; k < out.rows; ++k) out.forces[index[k]] = r.lambda[k];
  }
  // (36) with the exact rotation of h w1 for the quaternion.
  state->velocity = v1.head<3>();
  state->angular_velocity = v1.tail<3>();
  state->position += h * state->velocity;
  const double angle = h * state->angular_velocity.norm();
  if (angle > 0) {
    const Eigen::Quaterniond turn(Eigen::AngleAxisd(angle, state->angular_velocity.normalized()));
    state->orientation = turn * state->orientation;
  }
  state->orientation.normalize();
  out.ok = true;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The continuous model.

// y = (position, quaternion w x y z, velocity, angular velocity).
using FoundationOde = std::array<double, 13>;

inline FoundationOde ToOde(const CubeState& c) {
  return {c.position.x(),        c.position.y(),    c.position.z(),         c.orientation.w(),
          c.orientation.x(),     c.orientation.y(), c.orientation.z(),      c.velocity.x(),
          c.velocity.y(),        c.velocity.z(),    c.angular_velocity.x(), c.angular_velocity.y(),
          c.angular_velocity.z()};
}

inline CubeState FromOde(const FoundationOde& y) {
  CubeState c;
  c.position = Eigen::Vector3d(y[0], y[1], y[2]);
  c.orientation = Eigen::Quaterniond(y[3], y[4], y[5], y[6]).normalized();
  c.velocity = Eigen::Vector3d(y[7], y[8], y[9]);
  c.angular_velocity = Eigen::Vector3d(y[10], y[11], y[12]);
  return c;
}

// Element j's phi and law -K phi - B phid at y (rotation from y's normalized quaternion).
struct ElementLaw {
  double phi = 0, law = 0;
};

inline ElementLaw EvaluateElement(const FoundationParameters& s, const Eigen::Matrix3d& rotation,
                                  const FoundationOde& y, const Eigen::Vector3d& r) {
  const Eigen::Vector3d a = rotation * r;
  ElementLaw e;
  e.phi = y[2] + a.z();
  const double phid = y[9] + y[10] * a.y() - y[11] * a.x();  // v.z + (w x a).z
  e.law = -s.Stiffness() * e.phi - s.damping * phid;
  return e;
}

inline Eigen::Matrix3d OdeRotation(const FoundationOde& y) {
  return Eigen::Quaterniond(y[3], y[4], y[5], y[6]).normalized().toRotationMatrix();
}

// Whether element j pushes under (68) at y: phi <= 0 and the law >= 0.
inline std::vector<char> PushingElements(const FoundationParameters& s,
                                         const std::vector<Eigen::Vector3d>& elements,
                                         const FoundationOde& y) {
  const Eigen::Matrix3d rotation = OdeRotation(y);
  std::vector<char> pushing(elements.size());
  for (size_t j = 0; j < elements.size(); ++j) {
    const ElementLaw e = EvaluateElement(s, rotation, y, elements[j]);
    pushing[j] = e.phi <= 0 && e.law >= 0;
  }
  return pushing;
}

// dy/dt at (y, t). `modes` null: the law (68) itself (piecewise smooth); otherwise element j's
// force is its law where modes[j] (even where that is negative) and 0 elsewhere: the smooth piece
// a step of the reference integrates.
inline void FoundationDerivative(const FoundationParameters& s,
                                 const std::vector<Eigen::Vector3d>& elements,
                                 const std::vector<char>* modes, const FoundationOde& y,
                                 FoundationOde& dydt, double t) {
  const Eigen::Matrix3d rotation = OdeRotation(y);
  const Wrench wrench = AppliedWrench(s, rotation, t);
  Eigen::Vector3d force = wrench.force, torque = wrench.torque;
  for (size_t j = 0; j < elements.size(); ++j) {
    const Eigen::Vector3d a = rotation * elements[j];
    const double phi = y[2] + a.z();
    const double phid = y[9] + y[10] * a.y() - y[11] * a.x();
    const double law = -s.Stiffness() * phi - s.damping * phid;
    double lam = 0;
    if (modes != nullptr) {
      if ((*modes)[j]) lam = law;
    } else if (phi <= 0 && law > 0) {
      lam = law;
    }
    force.z() += lam;
    torque.x() += a.y() * lam;  // a x (0, 0, lam)
    torque.y() -= a.x() * lam;
  }
  // q' = 1/2 (0, w) q.
  const double qw = y[3], qx = y[4], qy = y[5], qz = y[6], wx = y[10], wy = y[11], wz = y[12];
  dydt[0] = y[7];
  dydt[1] = y[8];
  dydt[2] = y[9];
  dydt[3] = 0.5 * (-wx * qx - wy * qy - wz * qz);
  dydt[4] = 0.5 * (wx * qw + wy * qz - wz * qy);
  dydt[5] = 0.5 * (wy * qw + wz * qx - wx * qz);
  dydt[6] = 0.5 * (wz * qw + wx * qy - wy * qx);
  for (int i = 0; i < 3; ++i) {
    dydt[7 + i] = force[i] / s.mass;
    dydt[10 + i] = torque[i] / s.Inertia();
  }
}

// Kinetic, gravitational and spring energy (1/2 K phi^2 over elements with phi <= 0): with B = 0
// and no load the continuous model conserves it.
inline double FoundationEnergy(const FoundationParameters& s,
                               const std::vector<Eigen::Vector3d>& elements, const CubeState& c) {
  const Eigen::Matrix3d rotation = c.orientation.toRotationMatrix();
  double energy = 0.5 * s.mass * c.velocity.squaredNorm() +
                  0.5 * s.Inertia() * c.angular_velocity.squaredNorm() +
                  s.mass * s.gravity * c.position.z();
  for (const Eigen::Vector3d& r : elements) {
    const double phi = c.position.z() + (rotation * r).z();
    if (phi < 0) energy += 0.5 * s.Stiffness() * phi * phi;
  }
  return energy;
}

enum class ReferenceMethod { kFehlberg78, kDormandPrince5 };

inline const char* ReferenceMethodName(ReferenceMethod m) {
  return m == ReferenceMethod::kFehlberg78 ? "RKF7(8)" : "DP5(4)";
}

struct ReferenceRun {
  bool ok = false;  // reached t_end within the wall-time cap
  CubeState end;    // at t_reached
  double t_reached = 0;
  long steps = 0;  // accepted steps (a step cut at a switch counts once)
  long rejected = 0;
  long events = 0;            // located mode switches
  long exact_bisections = 0;  // switches bisected on single steps (the interpolant was early)
  long evaluations = 0;
  int min_contacts = 0;  // the fewest elements with phi <= 0 at a step's end, after the start
  double seconds = 0;    // wall time
};

namespace detail {

// One try of the controlled stepper and one plain step, with the derivative handled explicitly
// (an FSAL method's cached derivative is stale after a restart from a saved state).
template <class Controlled, class Plain, bool kFsal>
struct OdeMethod {
  Controlled controlled;
  Plain plain;
  template <class System>
  bool Try(System& sys, const FoundationOde& in, const FoundationOde& dxdt, double& t,
           FoundationOde& out, FoundationOde& dxdt_out, double& dt) {
    if constexpr (kFsal) {
      return controlled.try_step(sys, in, dxdt, t, out, dxdt_out, dt) ==
             boost::numeric::odeint::success;
    } else {
      if (controlled.try_step(sys, in, dxdt, t, out, dt) != boost::numeric::odeint::success) {
        return false;
      }
      sys(out, dxdt_out, t);
      return true;
    }
  }
  template <class System>
  void Step(System& sys, const FoundationOde& in, const FoundationOde& dxdt, double t,
            FoundationOde& out, double dt) {
    if constexpr (kFsal) {
      FoundationOde dxdt_out;
      plain.do_step(sys, in, dxdt, t, out, dxdt_out, dt);
    } else {
      plain.do_step(sys, in, dxdt, t, out, dt);
    }
  }
};

// The cubic Hermite interpolant of a step of length H at theta in [0, H].
inline void Hermite(const FoundationOde& y0, const FoundationOde& f0, const FoundationOde& y1,
                    const FoundationOde& f1, double step, double theta, FoundationOde* out) {
  const double u = theta / step, u2 = u * u, u3 = u2 * u;
  const double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2,
               h11 = u3 - u2;
  for (size_t i = 0; i < y0.size(); ++i) {
    (*out)[i] = h00 * y0[i] + h10 * step * f0[i] + h01 * y1[i] + h11 * step * f1[i];
  }
}

template <class Method>
ReferenceRun IntegrateWith(Method method, const FoundationParameters& s,
                           const std::vector<Eigen::Vector3d>& elements, const CubeState& start,
                           double t_end, double max_seconds) {
  const auto clock_start = std::chrono::steady_clock::now();
  ReferenceRun run;
  FoundationOde y = ToOde(start), dydt{}, y_new{}, dydt_new{}, y_trial{};
  std::vector<char> modes = PushingElements(s, elements, y);
  auto sys = [&](const FoundationOde& x, FoundationOde& dx, double time) {
    ++run.evaluations;
    FoundationDerivative(s, elements, &modes, x, dx, time);
  };
  const auto contacts = [&](const FoundationOde& x) {
    const Eigen::Matrix3d rotation = OdeRotation(x);
    int count = 0;
    for (const Eigen::Vector3d& r : elements) count += EvaluateElement(s, rotation, x, r).phi <= 0;
    return count;
  };
  run.min_contacts = static_cast<int>(elements.size());
  double t = 0, dt = 1e-6;
  sys(y, dydt, t);
  constexpr double kSwitchResolution = 1e-14;  // s
  constexpr double kSwitchMargin = 1e-12;      // s past the located switch
  constexpr int kProbes = 8;                   // mode checks per step
  bool exact_bisection = false;
  int early = 0;  // consecutive interpolated switches that the method's step did not confirm
  while (t < t_end) {
    if ((run.steps & 255) == 0) {
      const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - clock_start;
      if (wall.count() > max_seconds) break;
    }
    dt = std::min(dt, t_end - t);
    double t_try = t, dt_try = dt;
    if (!method.Try(sys, y, dydt, t_try, y_new, dydt_new, dt_try)) {
      ++run.rejected;
      dt = dt_try;
      continue;
    }
    const double taken = t_try - t;
    // The modes at kProbes evenly spaced points of the step's cubic Hermite interpolant (y, y'
    // at both ends), the last the step's end: the first that differs brackets the switch.
    int probe = 0;
    std::vector<char> seen;
    for (int k = 1; k <= kProbes; ++k) {
      if (k < kProbes) Hermite(y, dydt, y_new, dydt_new, taken, k * taken / kProbes, &y_trial);
      seen = PushingElements(s, elements, k < kProbes ? y_trial : y_new);
      if (seen != modes) {
        probe = k;
        break;
      }
    }
    if (probe == 0) {
      y = y_new;
      dydt = dydt_new;
      t = t_end - t_try < 1e-15 ? t_end : t_try;
      dt = dt_try;
    } else {
      // Bisect the switch on the interpolant, then take one step of the method to just past
      // it. If that step's end shows no switch (the interpolant put it early), it is an
      // ordinary step. Only the elements that switched at the bracketing probe are watched.
      std::vector<int> switched;
      for (size_t j = 0; j < modes.size(); ++j) {
        if (seen[j] != modes[j]) switched.push_back(static_cast<int>(j));
      }
      const auto any_switched = [&](const FoundationOde& x) {
        const Eigen::Matrix3d rotation = OdeRotation(x);
        for (const int j : switched) {
          const ElementLaw e = EvaluateElement(s, rotation, x, elements[j]);
          if ((e.phi <= 0 && e.law >= 0) != static_cast<bool>(modes[j])) return true;
        }
        return false;
      };
      double lo = (probe - 1) * taken / kProbes, hi = probe * taken / kProbes;
      while (hi - lo > kSwitchResolution) {
        const double mid = 0.5 * (lo + hi);
        if (exact_bisection) {
          ++run.exact_bisections;
          method.Step(sys, y, dydt, t, y_trial, mid);
        } else {
          Hermite(y, dydt, y_new, dydt_new, taken, mid, &y_trial);
        }
        if (any_switched(y_trial)) {
          hi = mid;
        } else {
          lo = mid;
        }
      }
      hi = std::min(taken, hi + kSwitchMargin);
      if (hi < taken) {
        method.Step(sys, y, dydt, t, y_new, hi);
      }
      y = y_new;
      t += hi;
      const std::vector<char> after = PushingElements(s, elements, y);
      early = after == modes ? early + 1 : 0;
      exact_bisection = early >= 3;
      if (after != modes) {
        modes = after;
        ++run.events;
      }
      sys(y, dydt, t);
      dt = std::max(dt_try, 1e-9);
    }
    ++run.steps;
    run.min_contacts = std::min(run.min_contacts, contacts(y));
  }
  run.ok = t >= t_end;
  run.t_reached = t;
  run.end = FromOde(y);
  run.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - clock_start).count();
  return run;
}

}  // namespace detail

// The continuous model from `start` at t = 0 to t_end by `method` at absolute and relative
// tolerance `tolerance` (Boost's error norm), the switches located (header comment); stops after
// max_seconds of wall time (ok false, t_reached short of t_end).
inline ReferenceRun IntegrateReference(const FoundationParameters& s,
                                       const std::vector<Eigen::Vector3d>& elements,
                                       const CubeState& start, double t_end, ReferenceMethod method,
                                       double tolerance, double max_seconds = 1e30) {
  namespace odeint = boost::numeric::odeint;
  if (method == ReferenceMethod::kFehlberg78) {
    using Plain = odeint::runge_kutta_fehlberg78<FoundationOde>;
    detail::OdeMethod<odeint::controlled_runge_kutta<Plain>, Plain, false> m{
        odeint::make_controlled<Plain>(tolerance, tolerance), Plain()};
    return detail::IntegrateWith(m, s, elements, start, t_end, max_seconds);
  }
  using Plain = odeint::runge_kutta_dopri5<FoundationOde>;
  detail::OdeMethod<odeint::controlled_runge_kutta<Plain>, Plain, true> m{
      odeint::make_controlled<Plain>(tolerance, tolerance), Plain()};
  return detail::IntegrateWith(m, s, elements, start, t_end, max_seconds);
}

}  // namespace alsim::bench
