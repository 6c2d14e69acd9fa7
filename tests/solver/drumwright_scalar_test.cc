// Drumwright's scalar baselines (seed 003, Sec. 3; digest seed-003-drumwright.md section 2 and
// section 12 tests A and B): the iteration matrices of explicit, semi-implicit and implicit Euler
// on m x'' + b x' + k x = f (bench/drumwright_scalar.h), their spectral radii at the settings of
// the paper's Figs. 1-3 to the digits the digest prints, and trajectories that grow or decay at
// those radii.
#include "bench/drumwright_scalar.h"

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <vector>

namespace alsim::drumwright_scalar {
namespace {

Params Make(double h, double m, double b, double k, double f = 0.0) {
  Params p;
  p.h = h;
  p.m = m;
  p.b = b;
  p.k = k;
  p.f = f;
  return p;
}

// For A with a complex pair lambda = alpha + i beta and eigenvector u + i w, P = [u w] gives
// A P = P [[alpha, beta], [-beta, alpha]], a rotation scaled by |lambda|; so the modal norm
// |P^-1 y| grows by exactly rho(A) each step, whatever the phase.
double ModalNorm(const Eigen::Matrix2d& a, const Eigen::Vector2d& y) {
  const Eigen::EigenSolver<Eigen::Matrix2d> solver(a);
  const Eigen::Vector2cd eigenvector = solver.eigenvectors().col(0);
  Eigen::Matrix2d p;
  p.col(0) = eigenvector.real();
  p.col(1) = eigenvector.imag();
  return (p.inverse() * y).norm();
}

// The spring and kinetic energy (times 2), k x^2 + m v^2.
double Energy(const Params& p, const Eigen::Vector2d& y) {
  return p.k * y[0] * y[0] + p.m * y[1] * y[1];
}

// Each map's y1 = A y0 + g satisfies its integrator's equations, forcing included.
TEST(DrumwrightScalar, MapsSolveTheirEquations) {
  const Params p = Make(1e-3, 2.5, 30.0, 4e5, 7.0);
  const Eigen::Vector2d y0(0.3, -1.7);
  const double scale = 1e-12 * (1.0 + p.h * (p.k * std::abs(y0[0]) + p.b * std::abs(y0[1])) / p.m);
  {
    const StepMap map = ExplicitEulerMap(p);
    const Eigen::Vector2d y1 = map.A * y0 + map.g;
    EXPECT_NEAR(y1[0], y0[0] + p.h * y0[1], scale);                                    // (7)
    EXPECT_NEAR(y1[1], y0[1] + p.h / p.m * (p.f - p.b * y0[1] - p.k * y0[0]), scale);  // (8)
  }
  {
    const StepMap map = SemiImplicitEulerMap(p);
    const Eigen::Vector2d y1 = map.A * y0 + map.g;
    EXPECT_NEAR(y1[0], y0[0] + p.h * y1[1], scale);                                    // (11)
    EXPECT_NEAR(y1[1], y0[1] + p.h / p.m * (p.f - p.b * y1[1] - p.k * y0[0]), scale);  // (12)
  }
  {
    const StepMap map = ImplicitEulerMap(p);
    const Eigen::Vector2d y1 = map.A * y0 + map.g;
    EXPECT_NEAR(y1[0], y0[0] + p.h * y1[1], scale);                                    // (13)
    EXPECT_NEAR(y1[1], y0[1] + p.h / p.m * (p.f - p.b * y1[1] - p.k * y1[0]), scale);  // (14)
  }
  // Each map's rest point is the spring's equilibrium x = f/k, v = 0.
  const Eigen::Vector2d rest(p.f / p.k, 0.0);
  for (Integrator integrator :
       {Integrator::kExplicit, Integrator::kSemiImplicit, Integrator::kImplicit}) {
    const StepMap map = Map(integrator, p);
    EXPECT_LT((map.A * rest + map.g - rest).norm(), 1e-15) << IntegratorName(integrator);
  }
}

// The closed-form radius (trace and determinant) agrees with Eigen's eigenvalues, for complex and
// real pairs, on every integrator over a grid of stiffness, damping and step.
TEST(DrumwrightScalar, ClosedFormRadiusMatchesEigenSolver) {
  int complex_pairs = 0;
  int real_pairs = 0;
  for (Integrator integrator :
       {Integrator::kExplicit, Integrator::kSemiImplicit, Integrator::kImplicit}) {
    for (double h : {1e-5, 1e-3, 1e-2, 0.1}) {
      for (double b : {0.0, 1.0, 10.0, 2e5, 2.1e5, 1e8}) {
        for (double k : {1e2, 1e6, 1e7, 1e12}) {
          const Params p = Make(h, 1.0, b, k);
          const Eigen::Matrix2d a = Map(integrator, p).A;
          const Eigen::EigenSolver<Eigen::Matrix2d> solver(a);
          const double expected = solver.eigenvalues().cwiseAbs().maxCoeff();
          EXPECT_NEAR(SpectralRadius(a), expected, 1e-9 * (1.0 + expected))
              << IntegratorName(integrator) << " h " << h << " b " << b << " k " << k;
          (EigenvaluesOf(a).complex_pair ? complex_pairs : real_pairs) += 1;
        }
      }
    }
  }
  EXPECT_GT(complex_pairs, 0);
  EXPECT_GT(real_pairs, 0);
}

// Test B, explicit Euler at the Fig. 1 settings h = 1e-5, k = 1e6, m = 1 (h^2 k/m = 1e-4), with
// trace A = 2 - h b/m and det A = 1 - h b/m + 1e-4 (eq. (10)):
//   b = 1:     complex pair, rho = sqrt(det) = sqrt(1.00009) = 1.0000450 (unstable);
//   b = 10:    h b/m = 1e-4 = h^2 k/m, so det A = 1: complex pair on the unit circle;
//   b = 2e5:   h b/m = 2, trace 0: lambda = +-sqrt(-det) = +-sqrt(0.9999) = 0.99995 (stable);
//   b = 2.1e5: trace -0.1, det -1.0999: lambda = -0.05 -+ sqrt(0.0025 + 1.0999),
//              rho = 0.05 + sqrt(1.1024) = 1.09995 (unstable, an eigenvalue below -1).
// The digest's values hold; each is asserted to its printed digits and to its closed form.
TEST(DrumwrightScalar, ExplicitEulerRadiiOfFigure1) {
  const auto rho = [](double b) {
    return SpectralRadius(Integrator::kExplicit, Make(1e-5, 1.0, b, 1e6));
  };
  EXPECT_NEAR(rho(1.0), 1.0000450, 0.5e-7);
  EXPECT_NEAR(rho(1.0), std::sqrt(1.00009), 1e-14);
  EXPECT_TRUE(EigenvaluesOf(ExplicitEulerMap(Make(1e-5, 1.0, 1.0, 1e6)).A).complex_pair);

  EXPECT_NEAR(Determinant(ExplicitEulerMap(Make(1e-5, 1.0, 10.0, 1e6)).A), 1.0, 1e-15);
  EXPECT_NEAR(rho(10.0), 1.0, 1e-14);

  EXPECT_NEAR(rho(2e5), 0.99995, 0.5e-5);
  EXPECT_NEAR(rho(2e5), std::sqrt(0.9999), 1e-14);
  EXPECT_LT(rho(2e5), 1.0);

  EXPECT_NEAR(rho(2.1e5), 1.09995, 0.5e-5);
  EXPECT_NEAR(rho(2.1e5), 0.05 + std::sqrt(1.1024), 1e-14);
  const Eigenvalues2 e = EigenvaluesOf(ExplicitEulerMap(Make(1e-5, 1.0, 2.1e5, 1e6)).A);
  EXPECT_FALSE(e.complex_pair);
  EXPECT_LT(e.first.real(), -1.0);  // the growing mode flips sign every step
}

// Test B, semi-implicit Euler at the Fig. 2 settings h = 1e-3, m = 1, b = 1: det A = c =
// 1/(1 + h b/m) < 1 always, and an eigenvalue leaves the unit circle through -1 when
// h^2 k/m = 2 (2 + h b/m), i.e. at k = 4.002e6. At k = 1e6 (h^2 k/m = 1) trace A = 1 < 2 sqrt(c):
// a complex pair, rho = sqrt(c) = 0.9995. At k = 1e7 trace A = 1 - 9 c: real, rho = 7.864.
TEST(DrumwrightScalar, SemiImplicitEulerRadiiOfFigure2) {
  const auto rho = [](double k, double b = 1.0, double h = 1e-3) {
    return SpectralRadius(Integrator::kSemiImplicit, Make(h, 1.0, b, k));
  };
  EXPECT_NEAR(SemiImplicitStiffnessBound(Make(1e-3, 1.0, 1.0, 0.0)), 4.002e6, 1e-6);
  EXPECT_LT(rho(4.002e6 * (1.0 - 1e-6)), 1.0);
  EXPECT_GT(rho(4.002e6 * (1.0 + 1e-6)), 1.0);
  EXPECT_NEAR(rho(4.002e6), 1.0, 1e-9);

  EXPECT_NEAR(rho(1e6), 0.9995, 0.5e-4);
  EXPECT_NEAR(rho(1e6), std::sqrt(1.0 / 1.001), 1e-14);
  EXPECT_NEAR(rho(1e7), 7.864, 0.5e-3);
  EXPECT_GT(rho(1e7), 1.0);

  // Stable iff h^2 k/m < 2 (2 + h b/m) on a grid of damping, step and stiffness: for any b >= 0
  // but not any k (the paper's claim for this integrator). At b = 0 det A = 1 (symplectic), so
  // below the bound the pair sits on the unit circle: rho = 1 to round-off.
  for (double h : {1e-4, 1e-3, 1e-2}) {
    for (double b : {0.0, 1.0, 1e3, 1e6}) {
      const double bound = SemiImplicitStiffnessBound(Make(h, 1.0, b, 0.0));
      EXPECT_NEAR(bound * h * h, 2.0 * (2.0 + h * b), 1e-12 * bound * h * h);
      for (double ratio : {0.01, 0.5, 0.99, 1.01, 2.0, 100.0}) {
        const double r = rho(ratio * bound, b, h);
        if (ratio < 1.0) {
          EXPECT_LE(r, 1.0 + 1e-12) << "h " << h << " b " << b << " k/bound " << ratio;
        } else {
          EXPECT_GT(r, 1.0) << "h " << h << " b " << b << " k/bound " << ratio;
        }
      }
    }
  }
}

// Tests A and B, implicit Euler at the Fig. 3 settings k = 1e6, m = 1, b = 0: a complex pair with
// trace 2/D and det 1/D, D = 1 + h^2 k/m, so the amplification is 1/sqrt(1 + h^2 k/m):
// 0.99995 at h = 1e-5 and 1/sqrt(101) = 0.0995 at h = 1e-2. Stable at any step and stiffness
// (rho = 1 to round-off only at k = 0, where every x is a rest point).
TEST(DrumwrightScalar, ImplicitEulerAmplificationOfFigure3) {
  const auto rho = [](double h) {
    return SpectralRadius(Integrator::kImplicit, Make(h, 1.0, 0.0, 1e6));
  };
  EXPECT_NEAR(rho(1e-5), 0.99995, 0.5e-5);
  EXPECT_NEAR(rho(1e-5), 1.0 / std::sqrt(1.0001), 1e-14);
  EXPECT_NEAR(rho(1e-2), 0.0995, 0.5e-4);
  EXPECT_NEAR(rho(1e-2), 1.0 / std::sqrt(101.0), 1e-14);
  for (double h : {1e-8, 1e-5, 1e-2, 1.0}) {
    for (double b : {0.0, 1.0, 1e12}) {
      for (double k : {0.0, 1e3, 1e12, 1e15}) {
        EXPECT_LE(SpectralRadius(Integrator::kImplicit, Make(h, 1.0, b, k)), 1.0 + 1e-12)
            << "h " << h << " b " << b << " k " << k;
      }
    }
  }
}

// Explicit Euler at b = 1 (Fig. 1) grows by rho = 1.0000450 a step: over 1 s (1e5 steps, ~159
// periods) its modal norm grows by rho^N = e^4.5 and its amplitude sqrt(k x^2 + m v^2) about as
// much (it differs from the modal norm by a bounded, phase-dependent factor of 1 + O(h b/m)),
// where the exact solution decays by e^{-b t/(2m)} = e^{-0.5}. At b = 10 (det A = 1) it keeps.
TEST(DrumwrightScalar, ExplicitEulerTrajectoriesFollowTheirRadii) {
  const Eigen::Vector2d y0(1.0, 0.0);
  const int steps = 100000;
  for (double b : {1.0, 10.0}) {
    const Params p = Make(1e-5, 1.0, b, 1e6);
    const Eigen::Matrix2d a = ExplicitEulerMap(p).A;
    const std::vector<Eigen::Vector2d> y = Trajectory(Integrator::kExplicit, p, y0, steps);
    ASSERT_EQ(y.size(), static_cast<size_t>(steps) + 1);
    const double predicted = std::pow(SpectralRadius(a), steps);
    EXPECT_NEAR(ModalNorm(a, y.back()) / ModalNorm(a, y0) / predicted, 1.0, 1e-9) << "b " << b;
    const double growth = std::sqrt(Energy(p, y.back()) / Energy(p, y0));
    EXPECT_NEAR(growth / predicted, 1.0, 0.01) << "b " << b;
    const Eigen::Vector2d exact = ExactState(p, y0, steps * p.h);
    EXPECT_NEAR(std::sqrt(Energy(p, exact) / Energy(p, y0)), std::exp(-0.5 * b * steps * p.h),
                0.01 * std::exp(-0.5 * b * steps * p.h))
        << "b " << b;
  }
  EXPECT_GT(std::pow(SpectralRadius(Integrator::kExplicit, Make(1e-5, 1.0, 1.0, 1e6)), steps),
            80.0);
  // b = 2.1e5: the growing mode (eigenvalue -1.09995) takes over and flips sign every step.
  const Params p = Make(1e-5, 1.0, 2.1e5, 1e6);
  const std::vector<Eigen::Vector2d> y = Trajectory(Integrator::kExplicit, p, y0, 400);
  const double lambda = EigenvaluesOf(ExplicitEulerMap(p).A).first.real();
  EXPECT_NEAR(y[400][0] / y[399][0], lambda, 1e-9);
  EXPECT_GT(std::abs(y[400][0]), 1e10);
  // b = 2e5: both eigenvalues +-0.99995, so every state shrinks by exactly 0.9999 per two steps.
  const Params q = Make(1e-5, 1.0, 2e5, 1e6);
  const std::vector<Eigen::Vector2d> z = Trajectory(Integrator::kExplicit, q, y0, 1000);
  EXPECT_LT((z[1000] - std::pow(0.9999, 500) * y0).norm(), 1e-12);
}

// Semi-implicit Euler at k = 1e7 (Fig. 2 right): the state's ratio per step tends to the
// eigenvalue -7.864 (the other, det/lambda = -0.127, fades by (0.127/7.864)^N). At k = 1e6 the
// modal norm decays by sqrt(c) = 0.9995 per step, which matches the exact e^{-b h/(2m)} to
// O(h^2): the damping rate is right, the frequency (omega h = 1) is not.
TEST(DrumwrightScalar, SemiImplicitEulerTrajectoriesFollowTheirRadii) {
  const Eigen::Vector2d y0(1.0, 0.0);
  {
    const Params p = Make(1e-3, 1.0, 1.0, 1e7);
    const std::vector<Eigen::Vector2d> y = Trajectory(Integrator::kSemiImplicit, p, y0, 20);
    const double lambda = EigenvaluesOf(SemiImplicitEulerMap(p).A).first.real();
    EXPECT_NEAR(lambda, -7.864, 0.5e-3);
    EXPECT_NEAR(y[20][0] / y[19][0], lambda, 1e-9 * std::abs(lambda));
    EXPECT_GT(std::abs(y[20][0]), 1e17);
  }
  {
    const Params p = Make(1e-3, 1.0, 1.0, 1e6);
    const Eigen::Matrix2d a = SemiImplicitEulerMap(p).A;
    const int steps = 2000;
    const std::vector<Eigen::Vector2d> y = Trajectory(Integrator::kSemiImplicit, p, y0, steps);
    const double predicted = std::pow(SpectralRadius(a), steps);
    EXPECT_NEAR(ModalNorm(a, y.back()) / ModalNorm(a, y0) / predicted, 1.0, 1e-9);
    EXPECT_NEAR(predicted / std::exp(-0.5 * steps * p.h), 1.0, 1e-3);
  }
}

// Implicit Euler, b = 0: k x^2 + m v^2 shrinks by exactly 1/D a step, D = 1 + h^2 k/m (from
// (13)-(14): D x1 = x0 + h v0, D v1 = v0 - (h k/m) x0, whose cross terms cancel), so the amplitude
// after N steps is D^{-N/2} = rho^N to round-off, for both Fig. 3 steps.
TEST(DrumwrightScalar, ImplicitEulerDecaysAtItsRadius) {
  const Eigen::Vector2d y0(1.0, 0.0);
  for (double h : {1e-5, 1e-2}) {
    const Params p = Make(h, 1.0, 0.0, 1e6);
    const int steps = h < 1e-3 ? 10000 : 10;
    const std::vector<Eigen::Vector2d> y = Trajectory(Integrator::kImplicit, p, y0, steps);
    const double rho = SpectralRadius(Integrator::kImplicit, p);
    for (int i = 1; i <= steps; ++i) {
      ASSERT_NEAR(std::sqrt(Energy(p, y[i]) / Energy(p, y[i - 1])), rho, 1e-13) << "step " << i;
    }
    const double amplitude = std::sqrt(Energy(p, y.back()) / Energy(p, y0));
    EXPECT_NEAR(amplitude / std::pow(rho, steps), 1.0, 1e-10) << "h " << h;
    // The continuous system keeps its amplitude ("the amplitude should not attenuate").
    const Eigen::Vector2d exact = ExactState(p, y0, steps * h);
    EXPECT_NEAR(Energy(p, exact), Energy(p, y0), 1e-9 * Energy(p, y0));
  }
  EXPECT_NEAR(std::pow(1.0 / std::sqrt(1.0001), 10000), std::exp(-0.5), 1e-4);
}

// The exact reference solves eq. (3): its state's derivative matches (5)-(6) by central
// differences, under-, over- and critically damped, with a force.
TEST(DrumwrightScalar, ExactStateSolvesTheSystem) {
  const Eigen::Vector2d y0(0.7, -3.0);
  for (double b : {0.0, 1.0, 2000.0, 2e5}) {
    const Params p = Make(1e-5, 1.0, b, 1e6, 50.0);
    EXPECT_LT((ExactState(p, y0, 0.0) - y0).norm(), 1e-12) << "b " << b;
    const double t = 3e-3;
    const double dt = 1e-7;
    const Eigen::Vector2d y = ExactState(p, y0, t);
    const Eigen::Vector2d dy = (ExactState(p, y0, t + dt) - ExactState(p, y0, t - dt)) / (2 * dt);
    EXPECT_NEAR(dy[0], y[1], 1e-5 * (1.0 + std::abs(y[1]))) << "b " << b;
    EXPECT_NEAR(dy[1], (p.f - p.b * y[1] - p.k * y[0]) / p.m,
                1e-5 * (1.0 + p.k * std::abs(y[0]) + p.b * std::abs(y[1])))
        << "b " << b;
  }
}

}  // namespace
}  // namespace alsim::drumwright_scalar
