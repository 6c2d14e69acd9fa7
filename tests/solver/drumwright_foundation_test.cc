// The cube on the elastic foundation (bench/drumwright_foundation.h; Drumwright Sec. 5.5, digest
// 9.4): the continuous model and its event-located reference against closed forms (the rest
// state carries m g with no acceleration; a small vertical drop is the damped oscillator
// m x'' + n B x' + n K x = 0; without damping and load the energy is conserved across lift-offs),
// the two reference integrators against each other, and the first-order step converging to the
// reference with order 1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "bench/drumwright_foundation.h"

namespace alsim::bench {
namespace {

// At the sink m g / (n K) every element carries m g / n: the law (68) gives v' = w' = 0, and the
// reference stays there.
TEST(DrumwrightFoundationTest, TheRestStateCarriesTheWeightWithoutAcceleration) {
  for (const int per_side : {10, 30}) {
    FoundationParameters s;
    s.per_side = per_side;
    s.load = 0;
    const std::vector<Eigen::Vector3d> elements = FoundationElements(s);
    const double sink = s.mass * s.gravity / (s.Elements() * s.Stiffness());
    CubeState rest = RestingCube(s);
    rest.position.z() -= sink;
    FoundationOde dydt;
    FoundationDerivative(s, elements, nullptr, ToOde(rest), dydt, 0.0);
    for (int i = 7; i < 13; ++i) EXPECT_NEAR(dydt[i], 0, 1e-9 * s.gravity) << i;
    const ReferenceRun run =
        IntegrateReference(s, elements, rest, 0.05, ReferenceMethod::kFehlberg78, 1e-12);
    ASSERT_TRUE(run.ok);
    EXPECT_EQ(run.events, 0);
    EXPECT_NEAR(run.end.position.z(), rest.position.z(), 1e-6 * sink);
    EXPECT_LT(run.end.orientation.vec().norm(), 1e-15);
  }
}

// Lifted by delta (< the sink: every element stays compressed) from rest, the cube is the damped
// oscillator m x'' + n B x' + n K x = 0, x = delta e^(-a t) (cos(w_d t) + a / w_d sin(w_d t)),
// a = n B / (2 m), w_d = sqrt(n K / m - a^2), by both reference integrators.
TEST(DrumwrightFoundationTest, ASmallVerticalDropIsTheDampedOscillator) {
  FoundationParameters s;
  s.load = 0;
  s.damping = 20;  // a visible decay over the run: a = 125 / s
  const std::vector<Eigen::Vector3d> elements = FoundationElements(s);
  const double n = s.Elements(), sink = s.mass * s.gravity / (n * s.Stiffness());
  const double delta = 0.3 * sink, a = n * s.damping / (2 * s.mass);
  const double wd = std::sqrt(n * s.Stiffness() / s.mass - a * a);
  CubeState start = RestingCube(s);
  start.position.z() += -sink + delta;
  const double t = 0.02;  // ~3.6 periods
  const double exact = delta * std::exp(-a * t) * (std::cos(wd * t) + a / wd * std::sin(wd * t));
  for (const ReferenceMethod method :
       {ReferenceMethod::kFehlberg78, ReferenceMethod::kDormandPrince5}) {
    const ReferenceRun run = IntegrateReference(s, elements, start, t, method, 1e-12);
    ASSERT_TRUE(run.ok);
    EXPECT_EQ(run.events, 0);
    const double x = run.end.position.z() - (s.side / 2 - sink);
    EXPECT_NEAR(x, exact, 1e-6 * delta) << ReferenceMethodName(method);
    std::printf("[ drop ] %s: x(%.2f) %.9e m, closed form %.9e m\n", ReferenceMethodName(method), t,
                x, exact);
  }
}

// Without damping and load the forces are conservative (1/2 K phi^2 per compressed element):
// dropped tilted, the cube rocks with elements lifting off and touching down, and the energy at
// the end equals the start's.
TEST(DrumwrightFoundationTest, WithoutDampingTheEnergyIsConservedAcrossLiftOffs) {
  FoundationParameters s;
  s.load = 0;
  s.damping = 0;
  s.modulus = 1e5;
  const std::vector<Eigen::Vector3d> elements = FoundationElements(s);
  CubeState start = RestingCube(s);
  start.orientation =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.002, Eigen::Vector3d(1, 1, 0).normalized()));
  start.position.z() += 0.0005;
  const double e0 = FoundationEnergy(s, elements, start);
  const ReferenceRun run =
      IntegrateReference(s, elements, start, 0.3, ReferenceMethod::kFehlberg78, 1e-12);
  ASSERT_TRUE(run.ok);
  EXPECT_GT(run.events, 20);
  EXPECT_LT(run.min_contacts, s.Elements());
  // The energy exchanged: the weight over the fall and the spring energy at the deepest point are
  // ~m g 1e-3 m; the drift is held to 1e-8 of it.
  const double scale = s.mass * s.gravity * 1e-3;
  EXPECT_NEAR(FoundationEnergy(s, elements, run.end), e0, 1e-8 * scale);
  std::printf("[ energy ] %ld events, min contacts %d, drift %.3e J of %.3e J\n", run.events,
              run.min_contacts, FoundationEnergy(s, elements, run.end) - e0, scale);
}

// The paper's 50 N load on 100 elements (E 1e7) rocks the cube off part of the foundation: the two
// reference integrators, each with its switches located, agree.
TEST(DrumwrightFoundationTest, TheTwoReferenceIntegratorsAgree) {
  FoundationParameters s;
  s.load = 50;
  const std::vector<Eigen::Vector3d> elements = FoundationElements(s);
  const CubeState start = RestingCube(s);
  const ReferenceRun a =
      IntegrateReference(s, elements, start, 0.2, ReferenceMethod::kFehlberg78, 1e-12);
  const ReferenceRun b =
      IntegrateReference(s, elements, start, 0.2, ReferenceMethod::kDormandPrince5, 1e-12);
  ASSERT_TRUE(a.ok);
  ASSERT_TRUE(b.ok);
  EXPECT_GT(a.events, 100);
  EXPECT_LT(a.min_contacts, 60);  // lifted off
  const double tilt = 2 * a.end.orientation.vec().norm();
  EXPECT_GT(tilt, 1e-5);
  EXPECT_LT(CoordinateError(a.end, b.end), 1e-5 * tilt);
  std::printf(
      "[ two integrators ] %ld / %ld events, min contacts %d, tilt %.3e rad, |qa - qb| %.3e\n",
      a.events, b.events, a.min_contacts, tilt, CoordinateError(a.end, b.end));
}

// The first-order step converges to the reference with order 1, on a foundation soft enough
// (E 1e4: omega = sqrt(n K / m) = 35 rad/s, omega h <= 0.14) for the asymptotic regime, under the
// 50 N load that lifts part of the face off.
TEST(DrumwrightFoundationTest, TheStepConvergesToTheReferenceWithOrderOne) {
  FoundationParameters s;
  s.load = 50;
  s.modulus = 1e4;
  const std::vector<Eigen::Vector3d> elements = FoundationElements(s);
  const double t_end = 0.2;
  const ReferenceRun reference =
      IntegrateReference(s, elements, RestingCube(s), t_end, ReferenceMethod::kFehlberg78, 1e-12);
  ASSERT_TRUE(reference.ok);
  std::vector<double> errors;
  int min_rows = s.Elements();
  for (const double h : {4e-3, 2e-3, 1e-3}) {
    CubeState state = RestingCube(s);
    const int steps = static_cast<int>(std::lround(t_end / h));
    for (int k = 0; k < steps; ++k) {
      const FoundationStep step = StepFoundation(s, elements, k * h, h, &state);
      ASSERT_TRUE(step.ok) << h << " " << k;
      min_rows = std::min(min_rows, step.rows);
    }
    errors.push_back(CoordinateError(state, reference.end));
  }
  EXPECT_LT(min_rows, 70);  // the load lifted part of the face
  for (size_t k = 1; k < errors.size(); ++k) {
    const double order = std::log2(errors[k - 1] / errors[k]);
    EXPECT_GT(order, 0.8) << k;
    EXPECT_LT(order, 1.2) << k;
  }
  std::printf("[ convergence ] errors %.3e %.3e %.3e, orders %.3f %.3f, min rows %d\n", errors[0],
              errors[1], errors[2], std::log2(errors[0] / errors[1]),
              std::log2(errors[1] / errors[2]), min_rows);
}

}  // namespace
}  // namespace alsim::bench
