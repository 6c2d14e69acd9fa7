// The scalar spring-mass-damper of Drumwright's constraint solver (seed 003, Sec. 3; digest
// seed-003-drumwright.md section 2) and the three first-order integrators the paper compares on
// it: explicit, semi-implicit (symplectic) and implicit Euler. Each one step is linear in the
// state y = [x v]^T, so it is written as its iteration matrix, y1 = A y0 + g (g: the forcing),
// and its stability is the spectral radius of A. bench/drumwright_scalar_bench.cc writes the
// trajectories of the paper's Figs. 1-3 and the radii; tests/solver/drumwright_scalar_test.cc
// checks the radii of the digest's test B and the implicit amplitude ratio of its test A.
// Header-only: the test and the benchmark see the same maps.
//
// The system, eq. (3): m x'' + b x' + k x = f, first-order form (5)-(6): x' = v,
// v' = (f - b v - k x) / m, with constant m > 0, b >= 0, k >= 0, f over a step.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

namespace alsim::drumwright_scalar {

// One system and step size: mass m, damping b, stiffness k, constant force f, step h.
struct Params {
  double m = 1.0;
  double b = 0.0;
  double k = 0.0;
  double f = 0.0;
  double h = 1e-5;
};

enum class Integrator { kExplicit, kSemiImplicit, kImplicit };

inline const char* IntegratorName(Integrator integrator) {
  switch (integrator) {
    case Integrator::kExplicit:
      return "explicit";
    case Integrator::kSemiImplicit:
      return "semi-implicit";
    case Integrator::kImplicit:
      return "implicit";
  }
  return "";
}

// One step as an affine map: y1 = A y0 + g.
struct StepMap {
  Eigen::Matrix2d A;
  Eigen::Vector2d g;
};

// Explicit Euler, eqs. (7)-(10): x1 = x0 + h v0, v1 = v0 + (h/m)(f - b v0 - k x0), so
//   A = [[1, h], [-h k/m, 1 - h b/m]],  g = [0, h f/m];
// trace A = 2 - h b/m, det A = 1 - h b/m + h^2 k/m.
inline StepMap ExplicitEulerMap(const Params& p) {
  StepMap map;
  map.A << 1.0, p.h, -p.h * p.k / p.m, 1.0 - p.h * p.b / p.m;
  map.g << 0.0, p.h * p.f / p.m;
  return map;
}

// Semi-implicit (symplectic) Euler, eqs. (11)-(12): v1 = v0 + (h/m)(f - b v1 - k x0), then
// x1 = x0 + h v1. With c = 1 / (1 + h b/m), v1 = c (v0 - (h k/m) x0 + h f/m), so
//   A = [[1 - c h^2 k/m, c h], [-c h k/m, c]],  g = c h f/m [h, 1];
// trace A = 1 + c - c h^2 k/m, det A = c.
inline StepMap SemiImplicitEulerMap(const Params& p) {
  const double c = 1.0 / (1.0 + p.h * p.b / p.m);
  StepMap map;
  map.A << 1.0 - c * p.h * p.h * p.k / p.m, c * p.h, -c * p.h * p.k / p.m, c;
  map.g << c * p.h * p.h * p.f / p.m, c * p.h * p.f / p.m;
  return map;
}

// Implicit Euler, eqs. (13)-(14): x1 = x0 + h v1, v1 = v0 + (h/m)(f - b v1 - k x1). Substituting
// x1 gives D v1 = v0 - (h k/m) x0 + h f/m with D = 1 + h b/m + h^2 k/m, so
//   A = (1/D) [[1 + h b/m, h], [-h k/m, 1]],  g = (h f/(m D)) [h, 1];
// trace A = (2 + h b/m)/D, det A = 1/D.
inline StepMap ImplicitEulerMap(const Params& p) {
  const double d = 1.0 + p.h * p.b / p.m + p.h * p.h * p.k / p.m;
  StepMap map;
  map.A << (1.0 + p.h * p.b / p.m) / d, p.h / d, -p.h * p.k / (p.m * d), 1.0 / d;
  map.g << p.h * p.h * p.f / (p.m * d), p.h * p.f / (p.m * d);
  return map;
}

inline StepMap Map(Integrator integrator, const Params& p) {
  switch (integrator) {
    case Integrator::kExplicit:
      return ExplicitEulerMap(p);
    case Integrator::kSemiImplicit:
      return SemiImplicitEulerMap(p);
    case Integrator::kImplicit:
      break;
  }
  return ImplicitEulerMap(p);
}

// det A of a 2x2 matrix (without Eigen/LU).
inline double Determinant(const Eigen::Matrix2d& a) {
  return a(0, 0) * a(1, 1) - a(0, 1) * a(1, 0);
}

// The eigenvalues of a real 2x2 matrix: lambda = tau +- sqrt(tau^2 - delta), tau = trace/2,
// delta = det. A complex pair (tau^2 < delta) has |lambda| = sqrt(delta); a real pair's larger
// modulus is |tau| + sqrt(tau^2 - delta).
struct Eigenvalues2 {
  std::complex<double> first;
  std::complex<double> second;
  bool complex_pair = false;
};

inline Eigenvalues2 EigenvaluesOf(const Eigen::Matrix2d& a) {
  const double tau = 0.5 * a.trace();
  const double delta = Determinant(a);
  // tau^2 - delta written as ((a00 - a11)/2)^2 + a01 a10: exact when a01 a10 = 0, where the
  // difference of squares would cancel (implicit Euler at k = 0: eigenvalues 1 and 1/D with
  // D = 1 + h b/m, which tau^2 - delta would push above 1 by round-off).
  const double half_gap = 0.5 * (a(0, 0) - a(1, 1));
  const double disc = half_gap * half_gap + a(0, 1) * a(1, 0);
  Eigenvalues2 e;
  e.complex_pair = disc < 0.0;
  if (e.complex_pair) {
    e.first = {tau, std::sqrt(-disc)};
    e.second = {tau, -std::sqrt(-disc)};
  } else {
    // The larger-modulus root without cancellation, the other from the product delta.
    const double big = tau + std::copysign(std::sqrt(disc), tau);
    e.first = big;
    e.second = big != 0.0 ? delta / big : 0.0;
  }
  return e;
}

// rho(A) = max |lambda|; the step map is asymptotically stable iff rho < 1.
inline double SpectralRadius(const Eigen::Matrix2d& a) {
  const Eigenvalues2 e = EigenvaluesOf(a);
  if (e.complex_pair) return std::sqrt(Determinant(a));
  return std::max(std::abs(e.first), std::abs(e.second));
}

inline double SpectralRadius(Integrator integrator, const Params& p) {
  return SpectralRadius(Map(integrator, p).A);
}

// The semi-implicit bound: A's eigenvalue reaches -1 (trace A = -(1 + det A)) at
// h^2 k/m = 2 (2 + h b/m); below it the map is stable for every b >= 0 (det A = c < 1 and
// |trace A| < 1 + det A, Jury's conditions for a 2x2 map). Returns that largest stable k.
inline double SemiImplicitStiffnessBound(const Params& p) {
  return 2.0 * (2.0 + p.h * p.b / p.m) * p.m / (p.h * p.h);
}

// The states y_0 = y0, y_1, ..., y_steps of repeated steps of the integrator.
inline std::vector<Eigen::Vector2d> Trajectory(Integrator integrator, const Params& p,
                                               const Eigen::Vector2d& y0, int steps) {
  const StepMap map = Map(integrator, p);
  std::vector<Eigen::Vector2d> states;
  states.reserve(static_cast<size_t>(steps) + 1);
  states.push_back(y0);
  for (int i = 0; i < steps; ++i) {
    const Eigen::Vector2d next = map.A * states.back() + map.g;
    states.push_back(next);
  }
  return states;
}

// The exact solution of eq. (3) from y0 at time t, for the plots' reference (k > 0). With the
// equilibrium x_e = f/k and the roots s of m s^2 + b s + k = 0:
//   x(t) = x_e + c1 e^{s1 t} + c2 e^{s2 t},  c1 + c2 = x0 - x_e,  s1 c1 + s2 c2 = v0,
// and x(t) = x_e + (c0 + (v0 - s c0) t) e^{s t}, c0 = x0 - x_e, for the double root.
inline Eigen::Vector2d ExactState(const Params& p, const Eigen::Vector2d& y0, double t) {
  using C = std::complex<double>;
  const double xe = p.f / p.k;
  const double c0 = y0[0] - xe;
  const double disc = p.b * p.b - 4.0 * p.m * p.k;
  C s1;
  C s2;
  if (disc < 0.0) {
    s1 = C(-p.b, std::sqrt(-disc)) / (2.0 * p.m);
    s2 = std::conj(s1);
  } else {
    // q = -(b + sqrt(disc))/2: s = q/m and k/q, free of cancellation.
    const double q = -0.5 * (p.b + std::sqrt(disc));
    s1 = q / p.m;
    s2 = p.k / q;
  }
  if (std::abs(s1 - s2) <= 1e-12 * std::abs(s1)) {
    const double s = s1.real();
    const double c1 = y0[1] - s * c0;
    const double e = std::exp(s * t);
    return {xe + (c0 + c1 * t) * e, (c1 + s * (c0 + c1 * t)) * e};
  }
  const C a1 = (y0[1] - s2 * c0) / (s1 - s2);
  const C a2 = c0 - a1;
  const C e1 = a1 * std::exp(s1 * t);
  const C e2 = a2 * std::exp(s2 * t);
  return {xe + (e1 + e2).real(), (s1 * e1 + s2 * e2).real()};
}

}  // namespace alsim::drumwright_scalar
