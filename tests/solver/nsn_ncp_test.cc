// The non-smooth Newton solver's NCP functions, friction compliance and complementarity factors
// (engine/solver/nsn/ncp.h; issue 48, digest seed-002-nsn.md section 14 tests 1-3): values and
// derivatives against central differences away from the kinks, the (0, 0) convention, roots
// invariant under r, W_FB against the fixed point (35)/(99)-(101) (and not the misprinted (102)),
// sticking and sliding values, W_min (105), the guards, Fig 6's particle and Fig 9's scalar
// problem.
#include "engine/solver/nsn/ncp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace alsim {
namespace {

constexpr NcpFunction kFunctions[] = {NcpFunction::kFischerBurmeister, NcpFunction::kMinimumMap};

const char* Name(NcpFunction function) {
  return function == NcpFunction::kMinimumMap ? "min-map" : "Fischer-Burmeister";
}

// A log-uniform r in [1e-3, 1e2].
double RandomFactor(std::mt19937_64& rng) {
  return std::pow(10.0, std::uniform_real_distribution<double>(-3, 2)(rng));
}

// Central differences of phi(a, r b) in a and b, against the returned derivatives, away from the
// kinks (FB: (0, 0); min-map: a = r b).
TEST(NsnNcpTest, DerivativesMatchCentralDifferences) {
  std::mt19937_64 rng(48);
  std::uniform_real_distribution<double> side(-2, 2);
  for (NcpFunction function : kFunctions) {
    int checked = 0;
    for (int trial = 0; trial < 2000; ++trial) {
      const double a = side(rng), b = side(rng), r = RandomFactor(rng);
      const double scale = std::abs(a) + std::abs(r * b);
      if (function == NcpFunction::kFischerBurmeister && scale < 1e-2) continue;
      if (function == NcpFunction::kMinimumMap && std::abs(a - r * b) < 1e-3 * scale) continue;
      const double da = 1e-6 * std::max(1.0, std::abs(a));
      const double db = 1e-6 * std::max(1.0, std::abs(b)) / std::max(1.0, r);
      const NcpEvaluation e = EvaluateNcp(function, a, b, r);
      const double fd_a =
          (EvaluateNcp(function, a + da, b, r).phi - EvaluateNcp(function, a - da, b, r).phi) /
          (2 * da);
      const double fd_b =
          (EvaluateNcp(function, a, b + db, r).phi - EvaluateNcp(function, a, b - db, r).phi) /
          (2 * db);
      EXPECT_NEAR(e.dphi_da, fd_a, 1e-6 * (1 + std::abs(fd_a)))
          << Name(function) << " a " << a << " b " << b << " r " << r;
      EXPECT_NEAR(e.dphi_db, fd_b, 1e-6 * (1 + std::abs(fd_b)))
          << Name(function) << " a " << a << " b " << b << " r " << r;
      ++checked;
    }
    EXPECT_GT(checked, 1500) << Name(function);
  }
}

// The values: (93) and (96) as printed, and FB's cancellation-free form where a + r b > 0.
TEST(NsnNcpTest, ValuesAreTheScaledFormulas) {
  std::mt19937_64 rng(4848);
  std::uniform_real_distribution<double> side(-3, 3);
  for (int trial = 0; trial < 1000; ++trial) {
    const double a = side(rng), b = side(rng), r = RandomFactor(rng);
    const double q = std::sqrt(a * a + r * r * b * b);
    EXPECT_NEAR(FischerBurmeisterNcp(a, b, r).phi, a + r * b - q, 1e-12 * (1 + q));
    EXPECT_EQ(MinimumMapNcp(a, b, r).phi, std::min(a, r * b));
    // (94)-(95)
    EXPECT_NEAR(FischerBurmeisterNcp(a, b, r).dphi_da, 1 - a / q, 1e-14);
    EXPECT_NEAR(FischerBurmeisterNcp(a, b, r).dphi_db, (1 - r * b / q) * r, 1e-14 * r);
  }
  // Near the axis a + r b - q cancels; the product form keeps phi's digits: phi ~ 2 a r b / (2 r b)
  // = a for a << r b.
  const NcpEvaluation tiny = FischerBurmeisterNcp(1e-12, 1, 1);
  EXPECT_NEAR(tiny.phi, 1e-12, 1e-24);
}

// (26)-(27): alpha(0, 0) = 0, beta(0, 0) = 1, so dphi/db = r, for both functions; and digest
// 3.3's checks: a separated contact at lambda = 0 has alpha = 0, a penetrating one alpha = 2.
TEST(NsnNcpTest, KinkConvention) {
  for (NcpFunction function : kFunctions) {
    for (double r : {1e-3, 0.25, 1.0, 40.0}) {
      const NcpEvaluation e = EvaluateNcp(function, 0, 0, r);
      EXPECT_EQ(e.phi, 0) << Name(function);
      EXPECT_EQ(e.dphi_da, 0) << Name(function);
      EXPECT_EQ(e.dphi_db, r) << Name(function);
      // b = 0 with a != 0 and r b = 0 with b != 0 (r > 0, so none) are not the kink
    }
  }
  const NcpEvaluation separated = FischerBurmeisterNcp(0.3, 0, 2);
  EXPECT_EQ(separated.phi, 0);
  EXPECT_EQ(separated.dphi_da, 0);
  EXPECT_EQ(separated.dphi_db, 2);
  const NcpEvaluation penetrating = FischerBurmeisterNcp(-0.3, 0, 2);
  EXPECT_EQ(penetrating.phi, -0.6);
  EXPECT_EQ(penetrating.dphi_da, 2);
  EXPECT_EQ(penetrating.dphi_db, 2);
  // The minimum map's ties away from the origin follow (97)-(98)'s a <= r b branch.
  const NcpEvaluation tie = MinimumMapNcp(0.5, 0.25, 2);
  EXPECT_EQ(tie.phi, 0.5);
  EXPECT_EQ(tie.dphi_da, 1);
  EXPECT_EQ(tie.dphi_db, 0);
}

// Near the kink, not at it: Fischer-Burmeister's derivatives 1 - a / |(a, r b)| and
// r (1 - r b / |(a, r b)|) stay finite (here 1 - 1 / sqrt(2)) where a a + rb rb underflows (a
// limit row at rest whose velocity decays geometrically went NaN at a = r b = 1e-170), and the
// friction compliance of a tiny slip is finite too.
TEST(NsnNcpTest, FischerBurmeisterIsFiniteNearItsKink) {
  for (const double tiny : {1e-170, 1e-200, 1e-310}) {
    const NcpEvaluation e = FischerBurmeisterNcp(tiny, tiny, 1);
    EXPECT_NEAR(e.dphi_da, 1 - 1 / std::sqrt(2.0), 1e-12) << tiny;  // subnormals: fewer bits
    EXPECT_NEAR(e.dphi_db, 1 - 1 / std::sqrt(2.0), 1e-12) << tiny;
    EXPECT_TRUE(std::isfinite(e.phi)) << tiny;
    EXPECT_GE(e.phi, 0) << tiny;
    const FrictionCompliance w = FischerBurmeisterFrictionCompliance(tiny, 1, 0.5, 1);
    EXPECT_TRUE(std::isfinite(w.w)) << tiny;
    EXPECT_TRUE(std::isfinite(w.psi)) << tiny;
  }
}

// phi(a, r b) = 0 iff a >= 0, b >= 0, a b = 0, on a grid, for every r (5.1).
TEST(NsnNcpTest, RootsAreInvariantUnderTheFactor) {
  const std::vector<double> grid = {-2, -1, -0.5, -1e-9, 0, 1e-9, 0.5, 1, 2};
  for (NcpFunction function : kFunctions) {
    for (double r : {1e-4, 1e-2, 0.25, 1.0, 3.0, 1e3}) {
      for (double a : grid) {
        for (double b : grid) {
          const bool complementary = a >= 0 && b >= 0 && a * b == 0;
          EXPECT_EQ(EvaluateNcp(function, a, b, r).phi == 0, complementary)
              << Name(function) << " a " << a << " b " << b << " r " << r;
        }
      }
    }
  }
}

// (35) with (99)-(101): W = (s - psi) / (|lambda_f| + psi / r).
double FixedPointCompliance(NcpFunction function, double s, double m, double f, double r) {
  const double psi = EvaluateNcp(function, s, m - f, r).phi;
  return (s - psi) / (f + psi / r);
}

// W_FB (104), s not squared, is the fixed point's W on random inputs where its denominator is
// positive (not near the floor); (102)-(104) as printed, with s^2, is not.
TEST(NsnNcpTest, FischerBurmeisterComplianceIsTheFixedPoint) {
  std::mt19937_64 rng(1048);
  std::uniform_real_distribution<double> unit(0, 1);
  int checked = 0, misprint_differs = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const double m = 0.1 + 10 * unit(rng);
    const double s = 3 * unit(rng);
    const double f = 2.2 * m * unit(rng);
    const double r = RandomFactor(rng);
    const double psi = FischerBurmeisterNcp(s, m - f, r).phi;
    if (!(f + psi / r > 1e-3 * m)) continue;
    const FrictionCompliance w = FischerBurmeisterFrictionCompliance(s, m, f, r);
    ASSERT_TRUE(w.active);
    EXPECT_FALSE(w.clamped);
    EXPECT_EQ(w.psi, psi);
    const double reference = FixedPointCompliance(NcpFunction::kFischerBurmeister, s, m, f, r);
    EXPECT_NEAR(w.w, reference, 1e-9 * (1 + std::abs(reference)))
        << "s " << s << " m " << m << " f " << f << " r " << r;
    EXPECT_GE(w.w, 0);
    // (104) as the digest fixes it, and as printed.
    const double g = m - f, q = std::sqrt(s * s + r * r * g * g);
    const double fixed = r * (q - r * g) / (s + r * m - q);
    EXPECT_NEAR(w.w, fixed, 1e-6 * (1 + std::abs(fixed)));
    const double printed = r * (q - r * g) / (s * s + r * m - q);
    if (std::abs(printed - reference) > 1e-3 * (1 + std::abs(reference))) ++misprint_differs;
    ++checked;
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(misprint_differs, checked / 2);
}

// W_min (105) on random inputs, which is also the fixed point of the minimum map.
TEST(NsnNcpTest, MinimumMapComplianceIsEquation105AndTheFixedPoint) {
  std::mt19937_64 rng(2048);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 4000; ++trial) {
    const double m = 0.1 + 10 * unit(rng);
    const double s = 3 * unit(rng);
    const double f = 2.5 * m * unit(rng);
    const double r = RandomFactor(rng);
    const FrictionCompliance w = MinimumMapFrictionCompliance(s, m, f, r);
    ASSERT_TRUE(w.active);
    EXPECT_FALSE(w.clamped);
    const double rg = r * (m - f);
    const double expected = s <= rg ? 0 : (s - rg) / m;
    EXPECT_EQ(w.w, expected);
    EXPECT_EQ(w.psi, std::min(s, rg));
    EXPECT_GE(w.w, 0);
    const double reference = FixedPointCompliance(NcpFunction::kMinimumMap, s, m, f, r);
    EXPECT_NEAR(w.w, reference, 1e-9 * (1 + std::abs(reference)));
  }
}

// Sticking inside the cone (s = 0, g > 0, |lambda_f| > 0): W = 0; the 0/0 corner (s = 0,
// |lambda_f| = 0): W = 0, not NaN.
TEST(NsnNcpTest, StickingInsideTheConeHasNoCompliance) {
  for (NcpFunction function : kFunctions) {
    for (double r : {1e-3, 1.0, 50.0}) {
      for (double f : {0.0, 1e-300, 0.5, 2.0, 3.999}) {
        const FrictionCompliance w = EvaluateFrictionCompliance(function, 0, 4, f, r);
        EXPECT_TRUE(w.active);
        EXPECT_EQ(w.w, 0) << Name(function) << " f " << f << " r " << r;
        EXPECT_EQ(w.psi, 0) << Name(function);
      }
    }
  }
  // Near the corner W stays small and continuous: W_FB -> s / (2 m) as |lambda_f| -> 0.
  const FrictionCompliance near = FischerBurmeisterFrictionCompliance(1e-3, 4, 0, 1);
  EXPECT_NEAR(near.w, 1e-3 / 8, 1e-3 * 1e-3 / 8);
}

// Sliding on the cone (g = 0, s > 0): W = s / (mu lambda_n), the sliding law, for both.
TEST(NsnNcpTest, SlidingOnTheConeIsTheSlidingLaw) {
  std::mt19937_64 rng(3048);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int trial = 0; trial < 500; ++trial) {
    const double m = 0.1 + 10 * unit(rng), s = 1e-3 + 3 * unit(rng), r = RandomFactor(rng);
    for (NcpFunction function : kFunctions) {
      const FrictionCompliance w = EvaluateFrictionCompliance(function, s, m, m, r);
      EXPECT_NEAR(w.w, s / m, 1e-14 * s / m) << Name(function);
      EXPECT_EQ(w.psi, 0) << Name(function);
    }
  }
}

// mu lambda_n <= 0: inactive, W block 1 (106), the caller zeroes the rows.
TEST(NsnNcpTest, InactiveContactsReportTheIdentityBlock) {
  for (NcpFunction function : kFunctions) {
    for (double m : {0.0, -1.0, -0.0}) {
      const FrictionCompliance w = EvaluateFrictionCompliance(function, 0.7, m, 0.3, 1);
      EXPECT_FALSE(w.active) << Name(function);
      EXPECT_EQ(w.w, 1) << Name(function);
      EXPECT_EQ(w.psi, 0) << Name(function);
    }
  }
}

// Beyond twice the cone (104)'s denominator r |lambda_f|' >= r (2 m - |lambda_f|) reaches 0: the
// floor keeps W positive, finite and bounded by s' / (floor m), and W grows into it continuously
// from the cone on (inside the cone, with s > 0, W_FB need not be monotone in |lambda_f|).
TEST(NsnNcpTest, FischerBurmeisterDenominatorIsFloored) {
  const double m = 2, r = 0.5;
  for (double s : {0.0, 0.3}) {
    double previous = 0;
    for (double f = 0; f <= 3 * m; f += 0.01) {
      const FrictionCompliance w = FischerBurmeisterFrictionCompliance(s, m, f, r);
      ASSERT_TRUE(std::isfinite(w.w)) << "f " << f;
      if (f >= m) {  // beyond the cone W grows with |lambda_f|
        EXPECT_GE(w.w, previous) << "s " << s << " f " << f;
      }
      const double g = m - f, q = std::hypot(s, r * g);
      const double next_slip = q - r * g;
      EXPECT_LE(w.w, next_slip / (kFrictionComplianceFloor * m) * (1 + 1e-12));
      if (f < 2 * m - 1e-3 && s == 0) {
        EXPECT_FALSE(w.clamped) << "f " << f;
      }
      if (w.clamped) {
        EXPECT_DOUBLE_EQ(w.w, next_slip / (kFrictionComplianceFloor * m));
      }
      previous = w.w;
    }
    EXPECT_TRUE(FischerBurmeisterFrictionCompliance(s, m, 2.5 * m, r).clamped);
  }
}

// Fig 6: a 1-D particle sliding at 0.5 m/s, lambda_n = 10 N, mu = 0.5 (r = 1): the friction NCP
// psi_f(s, mu lambda_n - |lambda_f|) and phi_f = s - W |lambda_f| (lambda_f opposes the slip)
// vanish at the cone limit |lambda_f| = 5 N for both functions, nowhere below it, and W grows
// steeply beyond it.
TEST(NsnNcpTest, Figure6SlidingParticle) {
  const double s = 0.5, m = 0.5 * 10, r = 1;
  for (NcpFunction function : kFunctions) {
    const FrictionCompliance at = EvaluateFrictionCompliance(function, s, m, 5, r);
    EXPECT_EQ(at.psi, 0) << Name(function);
    EXPECT_NEAR(s - at.w * 5, 0, 1e-15) << Name(function);
    EXPECT_NEAR(at.w, 0.1, 1e-15) << Name(function);
    for (double f = 0; f < 4.999; f += 0.05) {
      EXPECT_NE(EvaluateFrictionCompliance(function, s, m, f, r).psi, 0) << Name(function);
      EXPECT_GT(s - EvaluateFrictionCompliance(function, s, m, f, r).w * f, 1e-3)
          << Name(function) << " f " << f;
    }
  }
  auto fb = [&](double f) { return FischerBurmeisterFrictionCompliance(s, m, f, r).w; };
  // Below the limit W stays under s / m; a newton beyond it adds five times what the newton before
  // it did, and at 9 N W is more than 50 times its value at the limit.
  EXPECT_LT(fb(4), 0.1);
  EXPECT_GT(fb(6) - fb(5), 4 * (fb(5) - fb(4)));
  EXPECT_GT(fb(9), 50 * fb(5));
  for (double f = 5; f < 9.9; f += 0.1) EXPECT_GT(fb(f + 0.1), fb(f));
  // The minimum map's W is 0 while s <= r g (|lambda_f| <= 4.5 N), then (s - r g) / m.
  EXPECT_EQ(MinimumMapFrictionCompliance(s, m, 4, r).w, 0);
  EXPECT_NEAR(MinimumMapFrictionCompliance(s, m, 9, r).w, 0.9, 1e-15);
}

// Newton on phi(lambda) = phi(c(lambda), r lambda) with dphi/dlambda = alpha c' + beta r; the
// number of steps until lambda = 1/2 to 1e-12 (at most `limit`).
int NewtonSteps(NcpFunction function, double r, double lambda, int limit) {
  auto c = [](double l) { return l / 4 - 1.0 / 8; };
  for (int step = 0; step < limit; ++step) {
    if (std::abs(lambda - 0.5) <= 1e-12) return step;
    const NcpEvaluation e = EvaluateNcp(function, c(lambda), lambda, r);
    lambda -= e.phi / (e.dphi_da / 4 + e.dphi_db);
  }
  return std::abs(lambda - 0.5) <= 1e-12 ? limit : limit + 1;
}

// Fig 9: c(lambda) = lambda / 4 - 1/8 >= 0, lambda >= 0, complementary (lambda = 1/2). With the
// effective-slope factor r = 1/4 both arguments of the minimum map are parallel and Newton lands
// on the solution in exactly one step from any start; with r = 1 the kink costs more from -1; FB
// converges in a few steps.
TEST(NsnNcpTest, Figure9ScalarProblem) {
  for (double start : {-1.0, 0.0, 3.0, 100.0}) {
    EXPECT_EQ(NewtonSteps(NcpFunction::kMinimumMap, 0.25, start, 50), 1) << "start " << start;
    EXPECT_LE(NewtonSteps(NcpFunction::kFischerBurmeister, 0.25, start, 50), 8)
        << "start " << start;
    EXPECT_LE(NewtonSteps(NcpFunction::kFischerBurmeister, 1, start, 50), 8) << "start " << start;
  }
  EXPECT_GT(NewtonSteps(NcpFunction::kMinimumMap, 1, -1, 50), 1);
  EXPECT_EQ(NewtonSteps(NcpFunction::kMinimumMap, 1, -1, 50), 2);
}

// (66): effective mass h^2 d_nn and h (d_t1 + d_t2) / 2; the ablations 1 and h^2; a degenerate
// diagonal falls back to h^2.
TEST(NsnNcpTest, ComplementarityFactors) {
  const double h = 0.0083, d = 1 / 3.0;
  using S = ComplementarityScaling;
  EXPECT_DOUBLE_EQ(NormalComplementarityFactor(S::kEffectiveMass, h, d), h * h * d);
  EXPECT_DOUBLE_EQ(FrictionComplementarityFactor(S::kEffectiveMass, h, d, 3 * d), 2 * h * d);
  EXPECT_EQ(NormalComplementarityFactor(S::kIdentity, h, d), 1);
  EXPECT_EQ(FrictionComplementarityFactor(S::kIdentity, h, d, d), 1);
  EXPECT_EQ(NormalComplementarityFactor(S::kTimeStepSquared, h, d), h * h);
  EXPECT_EQ(FrictionComplementarityFactor(S::kTimeStepSquared, h, d, d), h * h);
  for (double bad : {0.0, -1.0, std::nan(""), HUGE_VAL * 2}) {
    EXPECT_EQ(NormalComplementarityFactor(S::kEffectiveMass, h, bad), h * h);
    EXPECT_EQ(FrictionComplementarityFactor(S::kEffectiveMass, h, bad, bad), h * h);
  }
  // The friction factor is half the trace of the contact's tangent block: rotating the tangent
  // pair about the normal leaves it alone.
  const double b11 = 0.7, b22 = 0.2, b12 = 0.15;
  const double reference = FrictionComplementarityFactor(S::kEffectiveMass, h, b11, b22);
  for (double angle : {0.3, 1.1, 2.5}) {
    const double c = std::cos(angle), sn = std::sin(angle);
    const double d1 = c * c * b11 + 2 * c * sn * b12 + sn * sn * b22;
    const double d2 = sn * sn * b11 - 2 * c * sn * b12 + c * c * b22;
    EXPECT_NEAR(FrictionComplementarityFactor(S::kEffectiveMass, h, d1, d2), reference, 1e-16);
  }
  // A particle of mass 2 kg on a plane: d = 1 / 2, so r lambda_n = h^2 lambda_n / 2 is the
  // distance the impulse h lambda_n moves it in one step (units of C_n).
  EXPECT_DOUBLE_EQ(NormalComplementarityFactor(S::kEffectiveMass, h, 0.5) * 10, h * h * 10 / 2);
}

}  // namespace
}  // namespace alsim
