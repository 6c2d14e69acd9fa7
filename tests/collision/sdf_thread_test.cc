// SdfThread, the M48 bolt's field (seed-004 section 8.1): closed forms at the crest, root, flank
// and pitch line of the ISO 68-1 basic profile; the header's accuracy claim (sign exact, kappa
// |phi| <= |d| <= |phi| for the thread, the bolt's bounds at its caps) against the Euclidean
// distance found by searching the true helical surface; screw symmetry and handedness; the
// gradient against central differences and its documented structure; the bounds; the one-sided
// values.
#include "engine/collision/sdf_thread.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace alsim {
namespace {

using Vec2 = Eigen::Vector2d;

constexpr double kPi = 3.14159265358979323846;
// M48 coarse (ISO 261 / 68-1), meters.
constexpr double kMajorRadius = 0.024, kPitch = 0.005;
const double kH = std::sqrt(3.0) / 2 * kPitch;          // the fundamental triangle's height
const double kMinorRadius = kMajorRadius - 5 * kH / 8;  // d1 / 2
constexpr double kLead = kPitch / (2 * kPi);            // b

SdfThread M48() { return SdfThread{}; }

double Uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

Mat3 RotationZ(double theta) { return Eigen::AngleAxisd(theta, Vec3::UnitZ()).toRotationMatrix(); }

Vec3 Cylindrical(double r, double theta, double z) {
  return Vec3(r * std::cos(theta), r * std::sin(theta), z);
}

// A point at radius r and angle theta whose screw coordinate u = z - h b theta is the given one.
Vec3 AtScrewCoordinate(double r, double theta, double u, double handedness = 1) {
  return Cylindrical(r, theta, u + handedness * kLead * theta);
}

// The basic profile over one period, u from -P/2 to P/2, as (radius, u) vertices: root, flank,
// crest, flank, root (ISO 68-1's figure read left to right), independent of the implementation's
// folded half period.
std::vector<Vec2> ProfilePeriod() {
  return {Vec2(kMinorRadius, -kPitch / 2),    Vec2(kMinorRadius, -3 * kPitch / 8),
          Vec2(kMajorRadius, -kPitch / 16),   Vec2(kMajorRadius, kPitch / 16),
          Vec2(kMinorRadius, 3 * kPitch / 8), Vec2(kMinorRadius, kPitch / 2)};
}

// R(u) by interpolating the period's vertices.
double ProfileRadius(double u) {
  const double reduced = u - kPitch * std::floor(u / kPitch + 0.5);
  const std::vector<Vec2> v = ProfilePeriod();
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    if (reduced <= v[i + 1].y()) {
      const double t = (reduced - v[i].y()) / (v[i + 1].y() - v[i].y());
      return v[i].x() + t * (v[i + 1].x() - v[i].x());
    }
  }
  return kMinorRadius;
}

double DistanceToSegment(const Vec2& q, const Vec2& p0, const Vec2& p1) {
  const Vec2 e = p1 - p0;
  const double t = std::clamp((q - p0).dot(e) / e.squaredNorm(), 0.0, 1.0);
  return (q - (p0 + t * e)).norm();
}

// The boundary of the bolt's section by the half-plane at angle theta, as segments in (radius, z):
// the profile shifted by h b theta, every period that meets [z_lo, z_hi] (a window about the query)
// clipped to the shank [z0, z1], and the caps from the axis to the thread there.
struct Section {
  std::vector<std::pair<Vec2, Vec2>> segments;
};

Section BoltSection(const SdfThread& bolt, double theta, double z_lo, double z_hi) {
  const double h = bolt.right_handed ? 1 : -1, shift = h * kLead * theta;
  Section section;
  const std::vector<Vec2> v = ProfilePeriod();
  const int k_lo = int(std::floor((z_lo - shift) / kPitch)) - 1;
  const int k_hi = int(std::ceil((z_hi - shift) / kPitch)) + 1;
  for (int k = k_lo; k <= k_hi; ++k) {
    for (size_t i = 0; i + 1 < v.size(); ++i) {
      Vec2 a = v[i] + Vec2(0, shift + k * kPitch), b = v[i + 1] + Vec2(0, shift + k * kPitch);
      // Clip to z0 <= z <= z1 (every segment rises in z).
      if (b.y() <= bolt.z0 || a.y() >= bolt.z1) continue;
      const auto at = [&](double z) { return a + (z - a.y()) / (b.y() - a.y()) * (b - a); };
      const Vec2 a_clipped = a.y() < bolt.z0 ? at(bolt.z0) : a;
      const Vec2 b_clipped = b.y() > bolt.z1 ? at(bolt.z1) : b;
      section.segments.emplace_back(a_clipped, b_clipped);
    }
  }
  for (const double z : {bolt.z0, bolt.z1}) {
    section.segments.emplace_back(Vec2(0, z), Vec2(ProfileRadius(z - shift), z));
  }
  return section;
}

// The Euclidean signed distance from p to the bolt, by search over the angle of the surface point.
// A surface point w at angle theta_p + t is |p - w|^2 = (r cos t - r_w)^2 + (z - z_w)^2 +
// r^2 sin^2 t away, so d^2 = min over t of the planar distance from (r cos t, z) to the section
// at theta_p + t, squared, plus r^2 sin^2 t: a grid over t in [-0.6, 0.6] (the nearest point of a
// point within 5 mm of the surface at r >= 15 mm is within 0.3 rad), then every grid minimum
// refined by golden sections. Inside is r < R(u) between the caps.
double SearchedSignedDistance(const SdfThread& bolt, const Vec3& p) {
  const double r = std::hypot(p.x(), p.y()), theta = std::atan2(p.y(), p.x());
  const auto squared = [&](double t) {
    const Section section = BoltSection(bolt, theta + t, p.z() - 0.012, p.z() + 0.012);
    const Vec2 q(r * std::cos(t), p.z());
    double best = std::numeric_limits<double>::infinity();
    for (const auto& [a, b] : section.segments) best = std::min(best, DistanceToSegment(q, a, b));
    return best * best + r * r * std::sin(t) * std::sin(t);
  };
  constexpr int kGrid = 1200;
  constexpr double kWindow = 0.6;
  std::vector<double> values(kGrid + 1);
  for (int i = 0; i <= kGrid; ++i) values[i] = squared(-kWindow + 2 * kWindow * i / kGrid);
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= kGrid; ++i) {
    if ((i > 0 && values[i - 1] < values[i]) || (i < kGrid && values[i + 1] < values[i])) continue;
    double lo = -kWindow + 2 * kWindow * (i - 1) / kGrid, hi = lo + 4 * kWindow / kGrid;
    const double golden = (std::sqrt(5.0) - 1) / 2;
    double x1 = hi - golden * (hi - lo), x2 = lo + golden * (hi - lo);
    double f1 = squared(x1), f2 = squared(x2);
    for (int round = 0; round < 60; ++round) {
      if (f1 < f2) {
        hi = x2, x2 = x1, f2 = f1, x1 = hi - golden * (hi - lo), f1 = squared(x1);
      } else {
        lo = x1, x1 = x2, f1 = f2, x2 = lo + golden * (hi - lo), f2 = squared(x2);
      }
    }
    best = std::min({best, values[i], f1, f2});
  }
  const double h = bolt.right_handed ? 1 : -1;
  const bool inside =
      r < ProfileRadius(p.z() - h * kLead * theta) && p.z() > bolt.z0 && p.z() < bolt.z1;
  return inside ? -std::sqrt(best) : std::sqrt(best);
}

// The header's kappa at p for a thread value phi_t.
double Kappa(const Vec3& p, double phi_t) {
  const double rho = std::sqrt(std::hypot(p.x(), p.y()) * kMinorRadius);
  const double g = std::asin(std::min(1.0, std::abs(phi_t) / (2 * rho)));
  const double sigma = g > 0 ? std::sin(g) / g : 1;
  return 1 / std::sqrt(1 + std::pow(kLead / (sigma * rho), 2));
}

TEST(SdfThread, M48DefaultsAreValidAndBadParametersAreNot) {
  const SdfThread bolt = M48();
  EXPECT_TRUE(bolt.IsValid());
  EXPECT_EQ(bolt.major_diameter, 0.048);
  EXPECT_EQ(bolt.pitch, 0.005);
  EXPECT_TRUE(bolt.right_handed);
  // ISO 724's tabulated M48 x 5 minor diameter: D1 = d1 = 42.587 mm.
  EXPECT_NEAR(bolt.MinorDiameter(), 0.042587, 5e-7);
  const auto with = [&](auto edit) {
    SdfThread changed = bolt;
    edit(changed);
    return changed.IsValid();
  };
  EXPECT_FALSE(with([](SdfThread& s) { s.pitch = 0; }));
  EXPECT_FALSE(with([](SdfThread& s) { s.pitch = -0.005; }));
  EXPECT_FALSE(with([](SdfThread& s) { s.pitch = NAN; }));
  EXPECT_FALSE(with([](SdfThread& s) { s.major_diameter = INFINITY; }));
  EXPECT_FALSE(with([](SdfThread& s) { s.major_diameter = 1.08 * s.pitch; }));  // no core left
  EXPECT_TRUE(with([](SdfThread& s) { s.major_diameter = 1.09 * s.pitch; }));
  EXPECT_FALSE(with([](SdfThread& s) { s.z1 = s.z0; }));
  EXPECT_FALSE(with([](SdfThread& s) { s.z0 = NAN; }));
  EXPECT_FALSE(with([](SdfThread& s) { s.z1 = -INFINITY; }));
  EXPECT_TRUE(with([](SdfThread& s) { s.right_handed = false; }));
  // FromParameters: major_diameter, pitch, z0, z1, handedness.
  const double right[SdfThread::kParameterCount] = {0.048, 0.005, -0.05, 0.05, 1};
  const SdfThread parsed = SdfThread::FromParameters(right);
  EXPECT_EQ(parsed.major_diameter, bolt.major_diameter);
  EXPECT_EQ(parsed.pitch, bolt.pitch);
  EXPECT_EQ(parsed.z0, bolt.z0);
  EXPECT_EQ(parsed.z1, bolt.z1);
  EXPECT_TRUE(parsed.right_handed);
  const double left[SdfThread::kParameterCount] = {0.03, 0.0035, 0.01, 0.07, -1};
  const SdfThread m30 = SdfThread::FromParameters(left);
  EXPECT_EQ(m30.major_diameter, 0.03);
  EXPECT_EQ(m30.pitch, 0.0035);
  EXPECT_EQ(m30.z0, 0.01);
  EXPECT_EQ(m30.z1, 0.07);
  EXPECT_FALSE(m30.right_handed);
}

// Along the helices of the profile's features the field is the planar distance: h off the crest
// flat (u = 0) radially, h off the root flat (u = P/2), t along the flank's normal (1/2, sqrt(3)/2)
// in (r, u) from its midpoint, h from a crest corner in any direction of its outer wedge; the
// gradient is g_r e_r + g_u grad u with grad u = e_z - (b / r) e_theta.
TEST(SdfThread, ClosedFormsAtCrestRootAndFlank) {
  const SdfThread bolt = M48();
  const auto expected_gradient = [](double r, double theta, double g_r, double g_u) {
    const Vec3 e_r(std::cos(theta), std::sin(theta), 0),
        e_theta(-std::sin(theta), std::cos(theta), 0);
    return Vec3(g_r * e_r + g_u * (Vec3::UnitZ() - kLead / r * e_theta));
  };
  for (const double theta : {0.0, 0.9, -2.5, 3.1}) {
    for (const double h : {-0.002, -0.0003, 0.0, 0.0004, 0.003}) {
      // Crest: inside, the flanks are sqrt(3)/2 P/16 + |h|/2 away, farther than the flat while
      // |h| < sqrt(3) P/16 = 0.54 mm.
      if (h >= -0.0005) {
        const Vec3 p = AtScrewCoordinate(kMajorRadius + h, theta, 0);
        Vec3 g;
        EXPECT_NEAR(bolt.DistanceAndGradient(p, &g), h, 1e-15) << theta << " " << h;
        EXPECT_LT((g - expected_gradient(kMajorRadius + h, theta, 1, 0)).norm(), 1e-12);
      }
      // Root: the groove's flat at d1, P/4 wide; outside, its corners are over P/8 away.
      if (h <= 0.0004) {
        const Vec3 p = AtScrewCoordinate(kMinorRadius + h, theta, kPitch / 2 - 1e-5);
        Vec3 g;
        EXPECT_NEAR(bolt.DistanceAndGradient(p, &g), h, 1e-15) << theta << " " << h;
        EXPECT_LT((g - expected_gradient(kMinorRadius + h, theta, 1, 0)).norm(), 1e-12);
      }
    }
    // The flank, on both sides of the crest: the midpoint of (r_maj, P/16)-(r_min, 3P/8) and its
    // outward normal (1/2, +-sqrt(3)/2).
    for (const double side : {1.0, -1.0}) {
      const Vec2 middle((kMajorRadius + kMinorRadius) / 2, side * 7 * kPitch / 32);
      const Vec2 normal(0.5, side * std::sqrt(3.0) / 2);
      for (const double t : {-0.0008, -0.0001, 0.0, 0.0002, 0.0007}) {
        const Vec2 q = middle + t * normal;
        Vec3 g;
        const double phi = bolt.DistanceAndGradient(AtScrewCoordinate(q.x(), theta, q.y()), &g);
        EXPECT_NEAR(phi, t, 2e-15) << theta << " " << t;
        EXPECT_LT((g - expected_gradient(q.x(), theta, normal.x(), normal.y())).norm(), 1e-12);
      }
    }
    // Off a crest corner, between the crest's normal (0 deg) and the flank's (60 deg from e_r).
    for (const double angle : {0.2, 0.5, 0.9}) {
      const double h = 0.0006;
      const Vec2 q = Vec2(kMajorRadius, kPitch / 16) + h * Vec2(std::cos(angle), std::sin(angle));
      Vec3 g;
      EXPECT_NEAR(bolt.DistanceAndGradient(AtScrewCoordinate(q.x(), theta, q.y()), &g), h, 1e-15);
      EXPECT_LT((g - expected_gradient(q.x(), theta, std::cos(angle), std::sin(angle))).norm(),
                1e-12);
    }
    // ISO 68-1: the pitch line d2 = d - 0.649519 P is where the thread is P/2 wide, u = +-P/4.
    const double pitch_radius = (0.048 - 0.649519 * kPitch) / 2;
    EXPECT_NEAR(bolt.Distance(AtScrewCoordinate(pitch_radius, theta, kPitch / 4)), 0, 2e-8);
    EXPECT_NEAR(bolt.Distance(AtScrewCoordinate(pitch_radius, theta, -kPitch / 4)), 0, 2e-8);
  }
}

// The header's claim for the thread: the sign exact, kappa |phi| <= |d| <= |phi|, against the
// searched Euclidean distance, at random points within 3 mm of the thread's radii. The claim is
// also tight: somewhere the field overestimates by more than half the bound's 1 - kappa.
TEST(SdfThread, ErrorAgainstTheTrueHelicalSurfaceIsWithinKappa) {
  const SdfThread bolt = M48();
  std::mt19937 rng(46);
  double worst_relative = 0, worst_allowed = 0;
  for (int k = 0; k < 300; ++k) {
    const Vec3 p = Cylindrical(Uniform(rng, kMinorRadius - 0.003, kMajorRadius + 0.003),
                               Uniform(rng, -kPi, kPi), Uniform(rng, -0.01, 0.01));
    const double phi = bolt.Distance(p), d = SearchedSignedDistance(bolt, p);
    const double kappa = Kappa(p, phi);
    EXPECT_EQ(phi < 0, d < 0) << p.transpose();
    EXPECT_LE(std::abs(d), std::abs(phi) + 1e-12) << p.transpose() << " phi=" << phi;
    EXPECT_GE(std::abs(d), kappa * std::abs(phi) - 1e-12) << p.transpose() << " phi=" << phi;
    if (std::abs(phi) > 1e-4) {
      worst_relative = std::max(worst_relative, 1 - std::abs(d) / std::abs(phi));
      worst_allowed = std::max(worst_allowed, 1 - kappa);
    }
  }
  EXPECT_GT(worst_relative, 0.5 * worst_allowed);
  EXPECT_LT(worst_allowed, 8.2e-4);  // r >= r_min - 3 mm: rho >= 19.8 mm
}

// The bolt at its caps, by the same search with the caps in the section: the sign exact; inside
// phi <= d <= kappa phi; outside d >= kappa phi. Straight above the core the cap's face is nearest:
// z - z1, gradient +e_z; just under it, inside, the depth to the face.
TEST(SdfThread, CapsBoundTheShank) {
  SdfThread bolt = M48();
  bolt.z0 = -0.0113;
  bolt.z1 = 0.0171;
  std::mt19937 rng(8);
  int inside = 0, outside = 0;
  for (int k = 0; k < 300; ++k) {
    const double z = k % 2 ? Uniform(rng, bolt.z1 - 0.004, bolt.z1 + 0.003)
                           : Uniform(rng, bolt.z0 - 0.003, bolt.z0 + 0.004);
    const Vec3 p = Cylindrical(Uniform(rng, kMinorRadius - 0.003, kMajorRadius + 0.003),
                               Uniform(rng, -kPi, kPi), z);
    Vec3 g;
    const double phi = bolt.DistanceAndGradient(p, &g), d = SearchedSignedDistance(bolt, p);
    SdfThread thread_only = bolt;
    thread_only.z0 = -1, thread_only.z1 = 1;
    const double kappa = Kappa(p, thread_only.Distance(p));
    EXPECT_EQ(phi < 0, d < 0) << p.transpose();
    if (phi <= 0) {
      ++inside;
      EXPECT_LE(phi, d + 1e-12) << p.transpose();
      EXPECT_LE(d, kappa * phi + 1e-12) << p.transpose();
    } else {
      ++outside;
      EXPECT_GE(d, kappa * phi - 1e-12) << p.transpose();
    }
  }
  EXPECT_GT(inside, 60);
  EXPECT_GT(outside, 60);
  for (const double theta : {0.0, 1.7, -2.2}) {
    for (const double r : {0.0, 0.005, kMinorRadius - 0.001}) {
      for (const double h : {0.0002, 0.003}) {
        Vec3 g;
        EXPECT_NEAR(bolt.DistanceAndGradient(Cylindrical(r, theta, bolt.z1 + h), &g), h, 1e-15);
        EXPECT_EQ(g, Vec3(0, 0, 1));
        EXPECT_NEAR(bolt.DistanceAndGradient(Cylindrical(r, theta, bolt.z0 - h), &g), h, 1e-15);
        EXPECT_EQ(g, Vec3(0, 0, -1));
      }
      EXPECT_NEAR(bolt.Distance(Cylindrical(r, theta, bolt.z1 - 0.0006)), -0.0006, 1e-15);
    }
  }
}

// Screw symmetry: turning by dtheta about z and advancing h b dtheta along it maps the thread onto
// itself, so phi(Rz p + h b dtheta e_z) = phi(p) and the gradient turns with it; so does a shift
// by P alone (the caps aside). A left-handed thread is the right-handed one's mirror image through
// the xz plane.
TEST(SdfThread, ScrewSymmetryAndHandedness) {
  SdfThread bolt = M48();
  bolt.z0 = -1, bolt.z1 = 1;  // the caps are no screw's symmetry
  SdfThread left = bolt;
  left.right_handed = false;
  std::mt19937 rng(5);
  for (int k = 0; k < 2000; ++k) {
    const Vec3 p =
        Cylindrical(Uniform(rng, 0.001, 0.03), Uniform(rng, -kPi, kPi), Uniform(rng, -0.03, 0.03));
    const double turn = Uniform(rng, -7, 7);
    const Vec3 moved = RotationZ(turn) * p + Vec3(0, 0, kLead * turn);
    Vec3 g, g_moved;
    const double phi = bolt.DistanceAndGradient(p, &g);
    EXPECT_NEAR(bolt.DistanceAndGradient(moved, &g_moved), phi, 1e-15) << p.transpose();
    // Off the kinks (where a rounding may pick the other side) the gradient turns with p.
    if (std::abs(phi) > 1e-9 && (g_moved - RotationZ(turn) * g).norm() > 1e-9) {
      const double off = (bolt.Distance(p + 1e-7 * g) - phi) / 1e-7;
      EXPECT_LT(off, 0.999 * g.norm()) << "gradient differs away from a kink at " << p.transpose();
    }
    EXPECT_NEAR(bolt.Distance(p + Vec3(0, 0, kPitch)), phi, 1e-15);
    const Vec3 mirrored(p.x(), -p.y(), p.z());
    Vec3 g_left;
    EXPECT_NEAR(left.DistanceAndGradient(mirrored, &g_left), phi, 1e-15);
    if (std::abs(p.y()) > 1e-9) {
      EXPECT_LT((g_left - Vec3(g.x(), -g.y(), g.z())).norm(), 1e-9);
    }
  }
}

// The gradient against central differences at random points, away from the kinks (where the two
// one-sided differences disagree) and the caps; and its documented structure: (g_r, g_u) =
// (grad.e_r, grad.e_z) is a unit vector and grad.e_theta = -h (b / r) g_u, so |grad| = sqrt(1 +
// g_u^2 tan^2 alpha) <= sec alpha(r).
TEST(SdfThread, GradientMatchesCentralDifferences) {
  for (const bool right_handed : {true, false}) {
    SdfThread bolt = M48();
    bolt.right_handed = right_handed;
    const double h = right_handed ? 1 : -1;
    std::mt19937 rng(right_handed ? 13 : 14);
    constexpr double kStep = 1e-7;
    int tested = 0;
    constexpr int kPoints = 3000;
    for (int k = 0; k < kPoints; ++k) {
      const double r = Uniform(rng, 0.004, 0.03), theta = Uniform(rng, -kPi, kPi);
      const Vec3 p = Cylindrical(r, theta, Uniform(rng, -0.045, 0.045));
      Vec3 gradient;
      const double phi = bolt.DistanceAndGradient(p, &gradient);
      EXPECT_EQ(phi, bolt.Distance(p));
      Vec3 central;
      bool smooth = true;
      for (int i = 0; i < 3; ++i) {
        const Vec3 step = kStep * Vec3::Unit(i);
        const double plus = bolt.Distance(p + step), minus = bolt.Distance(p - step);
        central[i] = (plus - minus) / (2 * kStep);
        // A kink within the step: the one-sided slopes differ by more than curvature explains.
        if (std::abs((plus - phi) - (phi - minus)) > 1e-3 * kStep) smooth = false;
      }
      const Vec3 e_r(std::cos(theta), std::sin(theta), 0),
          e_theta(-std::sin(theta), std::cos(theta), 0);
      const double g_r = gradient.dot(e_r), g_u = gradient.z();
      EXPECT_NEAR(std::hypot(g_r, g_u), 1, 1e-12) << p.transpose();
      if (std::abs(p.z()) < 0.045 - 0.03) {  // the caps' term is (0, 0, +-1), structured too
        EXPECT_NEAR(gradient.dot(e_theta), -h * kLead / r * g_u, 1e-12) << p.transpose();
      }
      EXPECT_LE(gradient.norm(), std::sqrt(1 + std::pow(kLead / r, 2)) + 1e-12);
      if (!smooth) continue;
      ++tested;
      EXPECT_LT((gradient - central).lpNorm<Eigen::Infinity>(), 1e-6)
          << p.transpose() << " grad=" << gradient.transpose() << " fd=" << central.transpose();
    }
    EXPECT_GE(tested, kPoints * 9 / 10);
  }
}

// Every point of the solid lies in LocalBox and within BoundingRadius, and both are reached: a
// crest at the cap's rim, in each axis direction.
TEST(SdfThread, BoundsHoldTheSolidAndAreTight) {
  SdfThread bolt = M48();
  bolt.z0 = -0.02;
  bolt.z1 = 0.035;
  const SdfBox box = bolt.LocalBox();
  std::mt19937 rng(11);
  for (int k = 0; k < 20000; ++k) {
    const Vec3 p(Uniform(rng, -0.03, 0.03), Uniform(rng, -0.03, 0.03), Uniform(rng, -0.03, 0.045));
    if (bolt.Distance(p) > 0) continue;
    EXPECT_TRUE((p.array() >= box.lo.array()).all() && (p.array() <= box.hi.array()).all())
        << p.transpose();
    EXPECT_LE(p.norm(), bolt.BoundingRadius()) << p.transpose();
  }
  EXPECT_EQ(box.lo, Vec3(-0.024, -0.024, -0.02));
  EXPECT_EQ(box.hi, Vec3(0.024, 0.024, 0.035));
  for (const double theta : {0.0, kPi / 2, kPi, -kPi / 2}) {
    // A crest at this angle near the top cap: u = 0 at z = b theta + k P <= z1 - P/2.
    const double z = kLead * theta + kPitch * std::floor((bolt.z1 - kLead * theta) / kPitch - 0.5);
    EXPECT_NEAR(bolt.Distance(Cylindrical(kMajorRadius, theta, z)), 0, 1e-15);
    EXPECT_NEAR(bolt.Distance(Cylindrical(kMajorRadius - 1e-6, theta, z)), -1e-6, 1e-15);
  }
  // Where a crest reaches the top cap's rim (u in [-P/16, P/16] at z = z1), that rim point is on
  // the surface, BoundingRadius away.
  const double theta = (bolt.z1 - kPitch * std::floor(bolt.z1 / kPitch)) / kLead;
  const Vec3 rim = Cylindrical(kMajorRadius, theta, bolt.z1);
  EXPECT_NEAR(bolt.Distance(rim), 0, 1e-15);
  EXPECT_NEAR(rim.norm(), bolt.BoundingRadius(), 1e-15);
}

// The documented one-sided values. On the crest (s = 0) the outward normal e_r; at the crest
// corner the crest's; on the root flat e_r; a point deep under a crest center (u = 0), equally far
// from both flanks, takes the u >= 0 side's flank; on the axis, (g_r, 0, g_u).
TEST(SdfThread, KinkValuesAreTheDocumentedOnes) {
  const SdfThread bolt = M48();
  Vec3 g;
  EXPECT_EQ(bolt.DistanceAndGradient(Vec3(kMajorRadius, 0, 0), &g), 0);
  EXPECT_EQ(g, Vec3(1, 0, 0));
  EXPECT_NEAR(bolt.DistanceAndGradient(Vec3(kMajorRadius, 0, kPitch / 16), &g), 0, 1e-18);
  EXPECT_LT((g - Vec3(1, 0, 0)).norm(), 1e-15);
  EXPECT_NEAR(bolt.DistanceAndGradient(Vec3(kMinorRadius, 0, kPitch / 2 - 1e-4), &g), 0, 1e-17);
  EXPECT_LT((g - Vec3(1, 0, 0)).norm(), 1e-15);
  // Under the crest center at theta = 0 (u = z = 0), 1 mm inside, both flanks are nearer than
  // the crest: sqrt(3)/2 P/16 + 1 mm / 2 away. The u >= 0 side's is taken, its outward normal
  // (1/2, sqrt(3)/2) in (r, u).
  const double r = kMajorRadius - 0.001;
  EXPECT_NEAR(bolt.DistanceAndGradient(Vec3(r, 0, 0), &g),
              -(std::sqrt(3.0) / 2 * kPitch / 16 + 0.0005), 1e-15);
  const Vec3 flank_side = 0.5 * Vec3::UnitX() + std::sqrt(3.0) / 2 * Vec3(0, -kLead / r, 1);
  EXPECT_LT((g - flank_side).norm(), 1e-12);
  // Just to the u < 0 side the other flank: g_u flips.
  bolt.DistanceAndGradient(Vec3(r, 0, -1e-9), &g);
  EXPECT_LT((g - Vec3(0.5, std::sqrt(3.0) / 2 * kLead / r, -std::sqrt(3.0) / 2)).norm(), 1e-12);
  // On the axis (theta = 0, u = z): deeper than the root flats, and the gradient (g_r, 0, g_u).
  const double axis = bolt.DistanceAndGradient(Vec3(0, 0, 0.001), &g);
  EXPECT_LT(axis, -kMinorRadius);
  EXPECT_EQ(g.y(), 0);
  EXPECT_NEAR(std::hypot(g.x(), g.z()), 1, 1e-15);
}

}  // namespace
}  // namespace alsim
