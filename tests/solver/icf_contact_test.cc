// The contact of Irrotational Contact Fields (engine/solver/icf/icf_contact.h) against its own
// definition by finite differences (digest seed-000-icf.md section 15, tests 1-2): the impulse is
// minus the cost's gradient, the Hessian the impulse's negative Jacobian, symmetric and positive
// semi-definite, and N an antiderivative of n, constant from vhat on. Each regime is sampled:
// stiction (|v_t| << eps), sliding (|v_t| >> eps), v_t = 0, v_n on both sides of vhat, overlap
// and gap (phi0 < 0 and > 0), and no dissipation.
#include "engine/solver/icf/icf_contact.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace alsim {
namespace {

struct Case {
  IcfModel model;
  double phi0;
  double dissipation;
  double mu;
};

IcfContact Contact(const Case& k, double vn0 = -0.05) {
  IcfParameters p;
  p.stiction_speed = 1e-3;
  return MakeIcfContact(k.model, p, 1e-2, 1e5, k.dissipation, k.mu, k.phi0, vn0, 1.0);
}

std::string Name(const Case& k) {
  return std::string(k.model == IcfModel::kLagged ? "lagged" : "similar") + " phi0 " +
         std::to_string(k.phi0) + " d " + std::to_string(k.dissipation) + " mu " +
         std::to_string(k.mu);
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const IcfModel model : {IcfModel::kLagged, IcfModel::kSimilar}) {
    for (const double phi0 : {-2e-3, 1e-3}) {
      for (const double dissipation : {0.0, 5.0}) {
        for (const double mu : {0.0, 0.8}) cases.push_back({model, phi0, dissipation, mu});
      }
    }
  }
  return cases;
}

// Contact velocities around the kinks: v_n on both sides of vhat (away from it by more than the
// differences' step), v_t zero, inside the stiction band and far past it.
std::vector<Eigen::Vector3d> Velocities(const IcfContact& c) {
  std::vector<Eigen::Vector3d> out;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(-1, 1);
  const double eps = c.stiction;
  for (const double vn : {c.vhat - 0.3, c.vhat - 0.01, c.vhat - 1e-4, c.vhat + 0.02}) {
    for (const double speed : {0.0, 0.1 * eps, 2 * eps, 300 * eps}) {
      const double angle = M_PI * unit(rng);
      out.emplace_back(vn, speed * std::cos(angle), speed * std::sin(angle));
    }
  }
  return out;
}

TEST(IcfContact, ImpulseIsMinusTheCostsGradient) {
  for (const Case& k : Cases()) {
    const IcfContact c = Contact(k);
    for (const Eigen::Vector3d& v : Velocities(c)) {
      const IcfContactState state = IcfContactAt(c, v.data(), nullptr);
      for (int j = 0; j < 3; ++j) {
        const double step = 1e-7 * std::max(1.0, std::abs(v[j]));
        Eigen::Vector3d plus = v, minus = v;
        plus[j] += step;
        minus[j] -= step;
        const double up = IcfContactAt(c, plus.data(), nullptr).cost;
        const double down = IcfContactAt(c, minus.data(), nullptr).cost;
        const double fd = -(up - down) / (2 * step);
        // Truncation relative to the impulse, plus the costs' rounding over the step.
        const double impulse = Eigen::Vector3d(state.impulse).cwiseAbs().maxCoeff();
        const double rounding = 1e-15 * std::max(std::abs(up), std::abs(down)) / step;
        EXPECT_NEAR(state.impulse[j], fd, 1e-6 * impulse + rounding + 1e-18)
            << Name(k) << " v " << v.transpose() << " component " << j;
      }
    }
  }
}

TEST(IcfContact, HessianIsMinusTheImpulsesJacobianSymmetricAndPositive) {
  for (const Case& k : Cases()) {
    const IcfContact c = Contact(k);
    for (const Eigen::Vector3d& v : Velocities(c)) {
      Eigen::Matrix3d g;
      const IcfContactState state = IcfContactAt(c, v.data(), g.data());
      Eigen::Matrix3d fd;
      for (int j = 0; j < 3; ++j) {
        const double step = 1e-4 * (j == 0 ? 0.01 : c.stiction);
        Eigen::Vector3d plus = v, minus = v;
        plus[j] += step;
        minus[j] -= step;
        const IcfContactState up = IcfContactAt(c, plus.data(), nullptr);
        const IcfContactState down = IcfContactAt(c, minus.data(), nullptr);
        for (int i = 0; i < 3; ++i) fd(i, j) = -(up.impulse[i] - down.impulse[i]) / (2 * step);
      }
      const double scale = std::max(1e-12, fd.cwiseAbs().maxCoeff());
      EXPECT_LE((g - fd).cwiseAbs().maxCoeff(), 1e-5 * scale)
          << Name(k) << " v " << v.transpose() << "\nG\n"
          << g << "\nfinite differences\n"
          << fd;
      EXPECT_EQ((g - g.transpose()).cwiseAbs().maxCoeff(), 0.0) << Name(k);
      const double lowest = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(g).eigenvalues()[0];
      EXPECT_GE(lowest, -1e-12 * scale) << Name(k) << " v " << v.transpose();
      EXPECT_EQ(state.acts, g.cwiseAbs().maxCoeff() > 0) << Name(k) << " v " << v.transpose();
    }
  }
}

TEST(IcfContact, NormalAntiderivativeIsContinuousAndConstantFromVhat) {
  for (const Case& k : Cases()) {
    const IcfContact c = Contact(k);
    for (const double vn : {c.vhat - 0.5, c.vhat - 0.05, c.vhat - 1e-3}) {
      const double step = 1e-6;
      const double fd =
          (IcfNormalAntiderivative(c, vn + step) - IcfNormalAntiderivative(c, vn - step)) /
          (2 * step);
      EXPECT_NEAR(fd, IcfNormalImpulse(c, vn), 1e-7 * std::max(1.0, std::abs(fd))) << Name(k);
      EXPECT_GT(IcfNormalImpulse(c, vn), 0) << Name(k);
    }
    const double at = IcfNormalAntiderivative(c, c.vhat);
    EXPECT_NEAR(IcfNormalAntiderivative(c, c.vhat - 1e-9), at, 1e-12) << Name(k);
    EXPECT_EQ(IcfNormalAntiderivative(c, c.vhat + 0.3), at) << Name(k);
    EXPECT_EQ(IcfNormalImpulse(c, c.vhat + 1e-9), 0) << Name(k);
  }
}

// The invariants: vhat = min(-phi0 / dt, 1 / d); gamma_n0 = dt k (-phi0)_+ (1 - d v_n0)_+; the
// regularized Lagged model's eps = max(v_s, sigma w mu gamma_n0) (eq. 26).
TEST(IcfContact, InvariantsFollowEquations18To26) {
  IcfParameters p;
  p.stiction_speed = 1e-4;
  const double dt = 2e-3, k = 1e7, d = 10, mu = 0.5, w = 2.0;
  const IcfContact rest = MakeIcfContact(IcfModel::kLagged, p, dt, k, d, mu, -1e-6, -0.01, w);
  EXPECT_DOUBLE_EQ(rest.vhat, 1e-6 / dt);
  EXPECT_DOUBLE_EQ(rest.friction_impulse, dt * k * 1e-6 * (1 + d * 0.01));
  EXPECT_EQ(rest.stiction, 1e-4);
  const IcfContact fast = MakeIcfContact(IcfModel::kLagged, p, dt, k, d, mu, -1e-2, -0.01, w);
  EXPECT_DOUBLE_EQ(fast.vhat, 1 / d);  // 1 / d = 0.1 < 1e-2 / 2e-3 = 5
  const IcfContact gap = MakeIcfContact(IcfModel::kLagged, p, dt, k, d, mu, 1e-3, -1.0, w);
  EXPECT_DOUBLE_EQ(gap.vhat, -1e-3 / dt);
  EXPECT_EQ(gap.friction_impulse, 0);
  const IcfContact leaving = MakeIcfContact(IcfModel::kLagged, p, dt, k, d, mu, -1e-3, 0.2, w);
  EXPECT_EQ(leaving.friction_impulse, 0);  // (1 - d v_n0)_+ = 0
  p.regularized = true;
  const IcfContact impact = MakeIcfContact(IcfModel::kLagged, p, dt, k, d, mu, -1e-3, -1.0, w);
  EXPECT_DOUBLE_EQ(impact.stiction, 1e-3 * w * mu * impact.friction_impulse);
  EXPECT_GT(impact.stiction, 1e-4);
  const IcfContact resting = MakeIcfContact(IcfModel::kLagged, p, dt, k, d, mu, -1e-9, 0, w);
  EXPECT_EQ(resting.stiction, 1e-4);
}

// Lagged friction in steady sliding is Coulomb's with the lagged normal impulse, the soft norm's
// f(s) = s / sqrt(1 + s^2) of eq. (9); Similar's carries the implicit n(z) instead.
TEST(IcfContact, FrictionFollowsEquation9) {
  const Case lagged{IcfModel::kLagged, -2e-3, 5.0, 0.8};
  const IcfContact c = Contact(lagged);
  for (const double slip : {1e-4, 1e-3, 1e-1}) {
    const double v[3] = {0, slip, 0};
    const IcfContactState state = IcfContactAt(c, v, nullptr);
    const double s = slip / c.stiction;
    EXPECT_NEAR(state.impulse[1], -0.8 * c.friction_impulse * s / std::sqrt(1 + s * s),
                1e-12 * c.friction_impulse);
    EXPECT_EQ(state.impulse[2], 0);
  }
  const Case similar{IcfModel::kSimilar, -2e-3, 5.0, 0.8};
  const IcfContact cs = Contact(similar);
  const double v[3] = {-0.01, 0.05, 0};
  const IcfContactState state = IcfContactAt(cs, v, nullptr);
  const double soft = std::sqrt(0.05 * 0.05 + cs.stiction * cs.stiction) - cs.stiction;
  const double n = IcfNormalImpulse(cs, -0.01 - 0.8 * soft);
  EXPECT_DOUBLE_EQ(state.impulse[0], n);
  EXPECT_NEAR(state.impulse[1], -0.8 * n * 0.05 / (soft + cs.stiction), 1e-12 * n);
}

}  // namespace
}  // namespace alsim
