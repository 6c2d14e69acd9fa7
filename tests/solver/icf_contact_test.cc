// The contact of Irrotational Contact Fields (engine/solver/icf/icf_contact.h) against its own
// definition by finite differences (digest seed-000-icf.md section 15, tests 1-2): the impulse is
// minus the cost's gradient, the Hessian the impulse's negative Jacobian, symmetric and positive
// semi-definite, and N an antiderivative of n, constant from vhat on. Each regime is sampled:
// stiction (|v_t| << eps), sliding (|v_t| >> eps), v_t = 0, v_n on both sides of vhat, overlap
// and gap (phi0 < 0 and > 0), and no dissipation; and anisotropic friction (Appendix B) with its
// principal axes off the contact frame's, one of them frictionless.
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
  double mu_y = -1;  // >= 0: anisotropic, mu along the principal axis at 0.6 rad, mu_y across
};

// A geom turned by `angle` about the z axis.
Mat3 TurnedAboutZ(double angle) {
  return Eigen::AngleAxisd(angle, Eigen::Vector3d::UnitZ()).toRotationMatrix();
}

// The frame (columns: normal, tangent1, tangent2) of a contact on a floor: z, x, y.
Mat3 FloorFrame() {
  Mat3 frame;
  frame << Eigen::Vector3d::UnitZ(), Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY();
  return frame;
}

IcfContact Contact(const Case& k, double vn0 = -0.05) {
  IcfParameters p;
  p.stiction_speed = 1e-3;
  if (k.mu_y < 0)
    return MakeIcfContact(k.model, p, 1e-2, 1e5, k.dissipation, k.mu, k.phi0, vn0, 1.0);
  const IcfFriction friction = AnisotropicFriction(k.mu, k.mu_y, TurnedAboutZ(0.6), FloorFrame());
  return MakeIcfContact(k.model, p, 1e-2, 1e5, k.dissipation, friction, k.phi0, vn0, 1.0);
}

std::string Name(const Case& k) {
  return std::string(k.model == IcfModel::kLagged ? "lagged" : "similar") + " phi0 " +
         std::to_string(k.phi0) + " d " + std::to_string(k.dissipation) + " mu " +
         std::to_string(k.mu) + (k.mu_y >= 0 ? " mu_y " + std::to_string(k.mu_y) : "");
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (const IcfModel model : {IcfModel::kLagged, IcfModel::kSimilar}) {
    for (const double phi0 : {-2e-3, 1e-3}) {
      for (const double dissipation : {0.0, 5.0}) {
        for (const double mu : {0.0, 0.8}) cases.push_back({model, phi0, dissipation, mu});
        for (const double mu_y : {0.25, 0.0}) {
          cases.push_back({model, phi0, dissipation, 0.8, mu_y});
        }
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
      // Truncation relative to G, plus the impulses' rounding over the smallest step (it shows
      // where G is small against the impulse: fast slip across a frictionless principal axis).
      const double impulse = Eigen::Vector3d(state.impulse).cwiseAbs().maxCoeff();
      const double rounding = 1e-15 * impulse / (1e-4 * c.stiction);
      EXPECT_LE((g - fd).cwiseAbs().maxCoeff(), 1e-5 * scale + rounding)
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
  // Anisotropic friction: eq. (26) reads mu as the largest principal coefficient (here mu).
  const IcfFriction friction = AnisotropicFriction(0.2, mu, TurnedAboutZ(0.3), FloorFrame());
  const IcfContact anisotropic =
      MakeIcfContact(IcfModel::kLagged, p, dt, k, d, friction, -1e-3, -1.0, w);
  EXPECT_TRUE(anisotropic.anisotropic);
  EXPECT_EQ(anisotropic.stiction, impact.stiction);
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

// The tensor of AnisotropicFriction against M = R diag(mu_x, mu_y) R^T written out: a geom turned
// by a about the contact's normal has principal directions (cos a, sin a) and (-sin a, cos a) in
// the tangent basis. On the faces whose normal is the geom's x axis, mu_x acts along its z axis.
TEST(IcfContact, FrictionTensorFollowsTheGeomsAxes) {
  const double a = 0.6, c = std::cos(a), s = std::sin(a);
  const IcfFriction turned = AnisotropicFriction(0.8, 0.25, TurnedAboutZ(a), FloorFrame());
  EXPECT_TRUE(turned.anisotropic);
  EXPECT_EQ(turned.mu, 0.8);
  EXPECT_NEAR(turned.tensor[0], 0.8 * c * c + 0.25 * s * s, 1e-15);
  EXPECT_NEAR(turned.tensor[1], (0.8 - 0.25) * c * s, 1e-15);
  EXPECT_NEAR(turned.tensor[2], 0.8 * s * s + 0.25 * c * c, 1e-15);
  // The contact frame tilted off the geom's z by 0.3 rad about the geom's y axis: the projected x
  // axis is (cos 0.3, 0, sin 0.3) normalized, i.e. the frame's tangent1 exactly.
  const Mat3 tilted = Eigen::AngleAxisd(0.3, Eigen::Vector3d::UnitY()).toRotationMatrix();
  Mat3 frame;  // normal, tangent1, tangent2
  frame << tilted.col(2), tilted.col(0), tilted.col(1);
  const IcfFriction tilt = AnisotropicFriction(0.8, 0.25, Mat3::Identity(), frame);
  EXPECT_NEAR(tilt.tensor[0], 0.8, 1e-15);
  EXPECT_NEAR(tilt.tensor[1], 0, 1e-15);
  EXPECT_NEAR(tilt.tensor[2], 0.25, 1e-15);
  // A contact on the geom's +x face (normal x, tangents y and z): the projected y axis is e2, so
  // mu_y acts along y and mu_x along z.
  Mat3 side;
  side << Eigen::Vector3d::UnitX(), Eigen::Vector3d::UnitY(), Eigen::Vector3d::UnitZ();
  const IcfFriction face = AnisotropicFriction(0.8, 0.25, Mat3::Identity(), side);
  EXPECT_NEAR(face.tensor[0], 0.25, 1e-15);
  EXPECT_NEAR(face.tensor[1], 0, 1e-15);
  EXPECT_NEAR(face.tensor[2], 0.8, 1e-15);
  // Equal coefficients are the isotropic friction, whatever the axes.
  const IcfFriction equal = AnisotropicFriction(0.7, 0.7, TurnedAboutZ(a), side);
  EXPECT_FALSE(equal.anisotropic);
  EXPECT_EQ(equal.mu, 0.7);
}

// With M = mu I the anisotropic forms are eqs. (18) and (19)-(21): |mu v_t|_s' = mu |v_t|_s with
// eps' = mu eps. The forced anisotropic path matches the isotropic one to rounding.
TEST(IcfContact, AnisotropicFormsWithEqualCoefficientsAreTheIsotropicOnes) {
  for (const IcfModel model : {IcfModel::kLagged, IcfModel::kSimilar}) {
    const Case k{model, -2e-3, 5.0, 0.7};
    const IcfContact isotropic = Contact(k);
    IcfContact forced = isotropic;
    forced.anisotropic = true;
    forced.friction_tensor[0] = forced.friction_tensor[2] = 0.7;
    forced.friction_tensor[1] = 0;
    for (const Eigen::Vector3d& v : Velocities(isotropic)) {
      Eigen::Matrix3d g_iso, g_forced;
      const IcfContactState a = IcfContactAt(isotropic, v.data(), g_iso.data());
      const IcfContactState b = IcfContactAt(forced, v.data(), g_forced.data());
      const double impulse = Eigen::Vector3d(a.impulse).cwiseAbs().maxCoeff();
      EXPECT_NEAR(a.cost, b.cost, 1e-14 * std::max(1e-12, std::abs(a.cost))) << Name(k);
      for (int j = 0; j < 3; ++j) {
        EXPECT_NEAR(a.impulse[j], b.impulse[j], 1e-14 * impulse)
            << Name(k) << " v " << v.transpose();
      }
      EXPECT_LE((g_iso - g_forced).cwiseAbs().maxCoeff(), 1e-12 * g_iso.cwiseAbs().maxCoeff())
          << Name(k) << " v " << v.transpose() << "\n"
          << g_iso << "\n"
          << g_forced;
      EXPECT_EQ(a.acts, b.acts) << Name(k);
    }
  }
}

// Eq. (30) by hand: the Coulomb impulse maximizes the dissipation -v . xi over the ellipse
// {xi: |M^-1 xi| <= gamma_n}. In the principal frame xi = gamma_n (mu_x cos p, mu_y sin p), and
// -v . xi = -gamma_n (mu_x v_x cos p + mu_y v_y sin p) is largest at (cos p, sin p) = -(mu_x v_x,
// mu_y v_y) / r, r = sqrt(mu_x^2 v_x^2 + mu_y^2 v_y^2): xi = -gamma_n (mu_x^2 v_x, mu_y^2 v_y) / r,
// which for mu_x = 0.8, mu_y = 0.2 and slip along the diagonal v = s (1, 1) / sqrt(2) is
// -gamma_n (0.64, 0.04) / sqrt(0.68): not opposite to the slip. Lagged in fast slip (s = 1000
// eps') reaches it up to the soft norm's f(s) = 1 - O(1e-6), in the contact's tangent basis with
// the axes turned by 0.6 rad.
TEST(IcfContact, DiagonalSlipMaximizesDissipationOverTheEllipse) {
  const double a = 0.6, c = std::cos(a), s = std::sin(a);
  const Case k{IcfModel::kLagged, -2e-3, 5.0, 0.8, 0.2};
  const IcfContact contact = Contact(k);
  const double speed = 1000 * contact.mu * contact.stiction;
  // v = speed (e1 + e2) / sqrt(2), e1 = (c, s), e2 = (-s, c) in the tangent basis.
  const double v[3] = {-0.01, speed * (c - s) / std::sqrt(2.0), speed * (s + c) / std::sqrt(2.0)};
  const IcfContactState state = IcfContactAt(contact, v, nullptr);
  const double gn = contact.friction_impulse;
  const double along1 = -gn * 0.64 / std::sqrt(0.68), along2 = -gn * 0.04 / std::sqrt(0.68);
  EXPECT_NEAR(state.impulse[1], along1 * c - along2 * s, 1e-5 * gn);
  EXPECT_NEAR(state.impulse[2], along1 * s + along2 * c, 1e-5 * gn);
  // On the ellipse: |M^-1 gamma_t| = gamma_n0 (principal components over mu_x, mu_y).
  const double p1 = state.impulse[1] * c + state.impulse[2] * s;
  const double p2 = -state.impulse[1] * s + state.impulse[2] * c;
  EXPECT_NEAR(std::hypot(p1 / 0.8, p2 / 0.2), gn, 1e-5 * gn);
  // Along a principal axis it opposes the slip with mu_i gamma_n0 (|w| = 2e4 eps').
  const double along_e2[3] = {-0.01, -100 * speed * s, 100 * speed * c};
  const IcfContactState across = IcfContactAt(contact, along_e2, nullptr);
  EXPECT_NEAR(across.impulse[1], 0.2 * gn * s, 1e-6 * gn);
  EXPECT_NEAR(across.impulse[2], -0.2 * gn * c, 1e-6 * gn);
}

}  // namespace
}  // namespace alsim
