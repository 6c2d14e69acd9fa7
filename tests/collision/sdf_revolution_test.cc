// SdfRevolution, eq. (45)'s dish field, on the digest's dish profiles (seed-004 section 8.2):
// closed forms on the axis, at the rim, inside a wall and far away; the distance against a search
// over the swept profile's own parametrization (no use of the planar reduction); the gradient
// against central differences with |grad| = 1 off the medial set; the documented values on it;
// the sign; symmetry about z; the bounds.
#include "engine/collision/sdf_revolution.h"

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace alsim {
namespace {

using Vec2 = Eigen::Vector2d;

constexpr double kPi = 3.14159265358979323846;

SdfRevolution Profile(double a_r, double a_z, double b_r, double b_z, double padding) {
  SdfRevolution shape;
  shape.a = Vec2(a_r, a_z);
  shape.b = Vec2(b_r, b_z);
  shape.padding = padding;
  return shape;
}

// The digest's 8.2 dishes (meters).
SdfRevolution Bowl() { return Profile(0.04, 0, 0.08, 0.06, 0.003); }
SdfRevolution Plate() { return Profile(0.08, 0, 0.12, 0.02, 0.003); }
SdfRevolution Pot() { return Profile(0.10, 0, 0.10, 0.12, 0.004); }

struct NamedShape {
  std::string name;
  SdfRevolution shape;
};

std::vector<NamedShape> Dishes() {
  return {{"bowl", Bowl()},
          {"plate", Plate()},
          {"pot", Pot()},
          // Ours: a jar whose wall narrows toward its mouth and whose bottom is a shallow cone.
          {"jar", Profile(0.05, -0.01, 0.03, 0.09, 0.002)},
          // Ours: a funnel, its bottom a cone rising from O, so O is the lowest profile point.
          {"funnel", Profile(0.03, 0.03, 0.08, 0.09, 0.002)}};
}

Vec3 Swept(const Vec2& q, double theta) {
  return Vec3(q.x() * std::cos(theta), q.x() * std::sin(theta), q.y());
}

Mat3 RotationZ(double theta) { return Eigen::AngleAxisd(theta, Vec3::UnitZ()).toRotationMatrix(); }

double Uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  const double x = normal(rng), y = normal(rng), z = normal(rng);
  return Vec3(x, y, z).normalized();
}

Vec3 RandomInBox(std::mt19937& rng, const SdfBox& box, double grow) {
  const Vec3 center = 0.5 * (box.lo + box.hi), half = 0.5 * grow * (box.hi - box.lo);
  const double x = Uniform(rng, -1, 1), y = Uniform(rng, -1, 1), z = Uniform(rng, -1, 1);
  return center + half.cwiseProduct(Vec3(x, y, z));
}

// The profile's segments OA and AB as end points.
std::pair<Vec2, Vec2> Segment(const SdfRevolution& shape, int i) {
  return i == 0 ? std::make_pair(Vec2(Vec2::Zero()), shape.a) : std::make_pair(shape.a, shape.b);
}

// The distance from p to the swept profile S by searching S's parametrization: the segment
// parameter t in [0, 1] and the angle theta. A coarse grid, then every local minimum of it refined
// by shrinking grids. This never uses the planar reduction of eq. (45).
double SearchedDistanceToSweptProfile(const SdfRevolution& shape, const Vec3& p) {
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 2; ++i) {
    const Vec2 p0 = Segment(shape, i).first, p1 = Segment(shape, i).second;
    const auto squared = [&](double t, double theta) {
      return (p - Swept(p0 + t * (p1 - p0), theta)).squaredNorm();
    };
    constexpr int kT = 60, kTheta = 120;
    std::vector<double> grid((kT + 1) * kTheta);
    for (int it = 0; it <= kT; ++it) {
      for (int ith = 0; ith < kTheta; ++ith) {
        grid[it * kTheta + ith] = squared(double(it) / kT, 2 * kPi * ith / kTheta);
      }
    }
    for (int it = 0; it <= kT; ++it) {
      for (int ith = 0; ith < kTheta; ++ith) {
        const double value = grid[it * kTheta + ith];
        bool local_minimum = true;
        for (int dt = -1; dt <= 1 && local_minimum; ++dt) {
          for (int dth = -1; dth <= 1; ++dth) {
            const int jt = it + dt, jth = (ith + dth + kTheta) % kTheta;
            if (jt < 0 || jt > kT) continue;
            if (grid[jt * kTheta + jth] < value) local_minimum = false;
          }
        }
        if (!local_minimum) continue;
        double t = double(it) / kT, theta = 2 * kPi * ith / kTheta, value_here = value;
        double step_t = 1.0 / kT, step_theta = 2 * kPi / kTheta;
        for (int round = 0; round < 14; ++round) {
          double best_t = t, best_theta = theta;
          for (int jt = -5; jt <= 5; ++jt) {
            const double tt = std::clamp(t + jt * step_t / 5, 0.0, 1.0);
            for (int jth = -5; jth <= 5; ++jth) {
              const double th = theta + jth * step_theta / 5;
              const double v = squared(tt, th);
              if (v < value_here) value_here = v, best_t = tt, best_theta = th;
            }
          }
          t = best_t, theta = best_theta;
          step_t /= 5, step_theta /= 5;
        }
        best = std::min(best, value_here);
      }
    }
  }
  return std::sqrt(best);
}

// The nearest point of segment p0-p1 to q in the plane, by the clamped projection.
Vec2 NearestOnSegment(const Vec2& q, const Vec2& p0, const Vec2& p1) {
  const Vec2 e = p1 - p0;
  const double t =
      e.squaredNorm() > 0 ? std::clamp((q - p0).dot(e) / e.squaredNorm(), 0.0, 1.0) : 0;
  return p0 + t * e;
}

// Whether p lies at least `margin` from where eq. (45)'s field has a kink: the profile itself, the
// axis, and the points equally near both segments through different nearest points.
bool AwayFromMedialSet(const SdfRevolution& shape, const Vec3& p, double margin) {
  const Vec2 q(std::hypot(p.x(), p.y()), p.z());
  const Vec2 c0 = NearestOnSegment(q, Vec2::Zero(), shape.a);
  const Vec2 c1 = NearestOnSegment(q, shape.a, shape.b);
  const double d0 = (q - c0).norm(), d1 = (q - c1).norm();
  if (std::min(d0, d1) < margin || q.x() < margin) return false;
  return std::abs(d0 - d1) >= margin || (c0 - c1).norm() < 1e-12;
}

Vec3 GradientOf(const SdfRevolution& shape, const Vec3& p) {
  Vec3 gradient = Vec3::Constant(NAN);
  shape.DistanceAndGradient(p, &gradient);
  return gradient;
}

TEST(SdfRevolution, DishProfilesAreValidAndBadOnesAreNot) {
  for (const NamedShape& dish : Dishes()) EXPECT_TRUE(dish.shape.IsValid()) << dish.name;
  EXPECT_FALSE(Profile(0.04, 0, 0.08, 0.06, 0).IsValid());
  EXPECT_FALSE(Profile(0.04, 0, 0.08, 0.06, -0.001).IsValid());
  EXPECT_FALSE(Profile(-0.04, 0, 0.08, 0.06, 0.003).IsValid());
  EXPECT_FALSE(Profile(0.04, 0, -0.08, 0.06, 0.003).IsValid());
  EXPECT_FALSE(Profile(0.04, NAN, 0.08, 0.06, 0.003).IsValid());
  EXPECT_FALSE(Profile(0.04, 0, 0.08, 0.06, INFINITY).IsValid());
}

// On the axis the nearest profile point is O while |z| is below the distance to the wall: the
// field is |z| - d with gradient (0, 0, sign z). High above the pot's floor the rim circle is
// nearer: sqrt(b_r^2 + (z - b_z)^2) - d, a kink whose documented value takes +x as the radial unit.
TEST(SdfRevolution, OnTheAxis) {
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    if (s.a.y() != 0) continue;  // the jar's conical bottom is not flat at O
    for (const double z : {0.02, 0.003, 0.001, -0.001, -0.02, -0.5}) {
      Vec3 gradient;
      EXPECT_NEAR(s.DistanceAndGradient(Vec3(0, 0, z), &gradient), std::abs(z) - s.padding, 1e-16)
          << dish.name << " z=" << z;
      EXPECT_EQ(gradient, Vec3(0, 0, z > 0 ? 1 : -1)) << dish.name << " z=" << z;
    }
  }
  const SdfRevolution pot = Pot();
  const double z = 0.5, reach = std::hypot(0.10, z - 0.12);
  Vec3 gradient;
  EXPECT_NEAR(pot.DistanceAndGradient(Vec3(0, 0, z), &gradient), reach - 0.004, 1e-15);
  EXPECT_LT((gradient - Vec3(-0.10 / reach, 0, (z - 0.12) / reach)).norm(), 1e-15);
  // Just off the axis the field is smooth again and its gradient points away from the rim.
  const double r = 1e-6, reach_off = std::hypot(0.10 - r, z - 0.12);
  const Vec3 off(r * std::cos(1.0), r * std::sin(1.0), z);
  const Vec3 expected((r - 0.10) / reach_off * std::cos(1.0),
                      (r - 0.10) / reach_off * std::sin(1.0), (z - 0.12) / reach_off);
  EXPECT_LT((GradientOf(pot, off) - expected).norm(), 1e-12);
}

// At the rim the solid is a torus of tube radius d about B's circle: a point h along AB's
// direction beyond B, or h straight above B, is h - d away, with that direction as gradient.
TEST(SdfRevolution, AtTheRim) {
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    const Vec2 along = (s.b - s.a).normalized();
    for (const double theta : {0.0, 0.7, 2.0, -2.9}) {
      for (const double h : {0.0005, s.padding, 0.01, 0.3}) {
        for (const Vec2& direction : {along, Vec2(Vec2::UnitY())}) {
          const Vec2 q = s.b + h * direction;
          if (q.x() < 0) continue;  // past the axis
          const Vec3 p = Swept(q, theta);
          Vec3 gradient;
          EXPECT_NEAR(s.DistanceAndGradient(p, &gradient), h - s.padding, 1e-15)
              << dish.name << " theta=" << theta << " h=" << h;
          // The point's rounding relative to h: about 1e-16 |B| / h.
          EXPECT_LT((gradient - RotationZ(theta) * Vec3(direction.x(), 0, direction.y())).norm(),
                    1e-12)
              << dish.name;
        }
      }
      // A point of the rim's surface: on it.
      EXPECT_NEAR(s.Distance(Swept(s.b + s.padding * along, theta)), 0, 1e-15) << dish.name;
    }
  }
}

// Inside a wall, s along the wall's unit normal n from its mid-surface: |s| - d, gradient sign(s)
// n; over and under the floor (r, s), the same with n = +z, and on its mid-surface the documented
// left normal +z (into the cavity).
TEST(SdfRevolution, InsideAWall) {
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    const Vec2 e = s.b - s.a, n = Vec2(-e.y(), e.x()).normalized();
    const Vec2 middle = 0.5 * (s.a + s.b);
    for (const double theta : {0.0, 1.1, -2.3}) {
      const Mat3 rz = RotationZ(theta);
      for (const double f : {-0.9, -0.5, 0.3, 0.9}) {
        const double offset = f * s.padding;
        Vec3 gradient;
        const double phi = s.DistanceAndGradient(Swept(middle + offset * n, theta), &gradient);
        EXPECT_NEAR(phi, std::abs(offset) - s.padding, 1e-15) << dish.name << " f=" << f;
        EXPECT_LT(phi, 0) << dish.name;
        const Vec2 g = offset < 0 ? Vec2(-n) : n;
        EXPECT_LT((gradient - rz * Vec3(g.x(), 0, g.y())).norm(), 1e-14) << dish.name << " f=" << f;
      }
      if (s.a.y() != 0) continue;
      for (const double f : {-0.9, -0.2, 0.0, 0.6}) {
        const double offset = f * s.padding;
        Vec3 gradient;
        const double phi =
            s.DistanceAndGradient(Swept(Vec2(0.5 * s.a.x(), offset), theta), &gradient);
        EXPECT_NEAR(phi, std::abs(offset) - s.padding, 1e-16) << dish.name;
        EXPECT_EQ(gradient, Vec3(0, 0, offset < 0 ? -1 : 1)) << dish.name << " f=" << f;
      }
    }
  }
}

// Far away the nearest point of S is the flat floor straight below, or the circle of the widest
// profile end level with it.
TEST(SdfRevolution, FarAway) {
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    const Vec2 widest = s.b.x() >= s.a.x() ? s.b : s.a;
    for (const double theta : {0.0, 0.4, 3.0}) {
      if (s.a.y() == 0) {
        EXPECT_NEAR(s.Distance(Swept(Vec2(0.5 * s.a.x(), -2), theta)), 2 - s.padding, 1e-15);
      }
      const Vec3 level = Swept(Vec2(3, widest.y()), theta);
      EXPECT_NEAR(s.Distance(level), 3 - widest.x() - s.padding, 1e-15) << dish.name;
      EXPECT_LT((GradientOf(s, level) - RotationZ(theta) * Vec3::UnitX()).norm(), 1e-15);
    }
    // Far along a diagonal: the distance to B's circle, sqrt((r - b_r)^2 + (z - b_z)^2).
    const Vec3 p(4, -3, 7);
    EXPECT_NEAR(s.Distance(p), std::hypot(5 - s.b.x(), 7 - s.b.y()) - s.padding, 1e-14);
  }
}

// eq. (45) against the search over S's parametrization: equal (to the search's resolution), so
// the revolution of the planar field is the 3-D distance, and negative exactly where p lies
// within d of S.
TEST(SdfRevolution, MatchesASearchOverTheSweptProfile) {
  std::mt19937 rng(46);
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    int inside = 0, outside = 0;
    for (int k = 0; k < 120; ++k) {
      Vec3 p;
      if (k % 2 == 0) {
        p = RandomInBox(rng, s.LocalBox(), 1.6);
      } else {  // near the surface, on both sides
        const auto [p0, p1] = Segment(s, k % 4 == 1 ? 0 : 1);
        const double t = Uniform(rng, 0, 1), theta = Uniform(rng, -kPi, kPi);
        const double reach = Uniform(rng, 0, 2 * s.padding);
        p = Swept(p0 + t * (p1 - p0), theta) + reach * RandomUnit(rng);
      }
      const double searched = SearchedDistanceToSweptProfile(s, p);
      const double phi = s.Distance(p);
      EXPECT_NEAR(phi, searched - s.padding, 1e-9) << dish.name << " p=" << p.transpose();
      if (std::abs(searched - s.padding) > 1e-9) {
        EXPECT_EQ(phi < 0, searched < s.padding) << dish.name;
        (phi < 0 ? inside : outside)++;
      }
    }
    EXPECT_GE(inside, 20) << dish.name;
    EXPECT_GE(outside, 20) << dish.name;
  }
}

// Away from the medial set the gradient is the central difference of Distance (step 1e-7) and
// unit; DistanceAndGradient's value is Distance's, bit for bit.
TEST(SdfRevolution, GradientMatchesCentralDifferences) {
  std::mt19937 rng(45);
  constexpr double kStep = 1e-7;
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    int tested = 0;
    constexpr int kPoints = 2000;
    for (int k = 0; k < kPoints; ++k) {
      const Vec3 p = RandomInBox(rng, s.LocalBox(), 1.5);
      if (!AwayFromMedialSet(s, p, 1e-3)) continue;
      ++tested;
      Vec3 gradient;
      EXPECT_EQ(s.DistanceAndGradient(p, &gradient), s.Distance(p));
      Vec3 differences;
      for (int i = 0; i < 3; ++i) {
        const Vec3 step = kStep * Vec3::Unit(i);
        differences[i] = (s.Distance(p + step) - s.Distance(p - step)) / (2 * kStep);
      }
      EXPECT_LT((gradient - differences).lpNorm<Eigen::Infinity>(), 1e-7)
          << dish.name << " p=" << p.transpose() << " grad=" << gradient.transpose()
          << " fd=" << differences.transpose();
      EXPECT_NEAR(gradient.norm(), 1, 1e-14) << dish.name;
    }
    EXPECT_GE(tested, kPoints / 2) << dish.name;
  }
}

// Inside: a point t < d from a point of S is at most t - d (< 0). Outside the local box: positive,
// at least the distance to the box.
TEST(SdfRevolution, NegativeInsidePositiveOutside) {
  std::mt19937 rng(7);
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    const SdfBox box = s.LocalBox();
    for (int k = 0; k < 1000; ++k) {
      const auto [p0, p1] = Segment(s, k % 2);
      const double t = Uniform(rng, 0, 1), theta = Uniform(rng, -kPi, kPi);
      const double reach = Uniform(rng, 0, s.padding);
      const Vec3 p = Swept(p0 + t * (p1 - p0), theta) + reach * RandomUnit(rng);
      EXPECT_LE(s.Distance(p), reach - s.padding + 1e-15) << dish.name;
      const Vec3 q = RandomInBox(rng, box, 4);
      const double outside_box = (box.lo - q).cwiseMax(q - box.hi).cwiseMax(0.0).norm();
      if (outside_box > 0) {
        EXPECT_GE(s.Distance(q), outside_box - 1e-15) << dish.name;
      }
    }
  }
}

// A rotation about z moves the field with it: SDF(R p) = SDF(p), grad(R p) = R grad(p).
TEST(SdfRevolution, SymmetricUnderRotationAboutZ) {
  std::mt19937 rng(3);
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    for (int k = 0; k < 1000; ++k) {
      const Vec3 p = RandomInBox(rng, s.LocalBox(), 1.5);
      const Mat3 rz = RotationZ(Uniform(rng, -kPi, kPi));
      Vec3 gradient, rotated_gradient;
      const double phi = s.DistanceAndGradient(p, &gradient);
      EXPECT_NEAR(s.DistanceAndGradient(rz * p, &rotated_gradient), phi, 1e-16) << dish.name;
      if (std::hypot(p.x(), p.y()) > 1e-6) {
        EXPECT_LT((rotated_gradient - rz * gradient).norm(), 1e-9) << dish.name;
      }
    }
  }
}

// Every point of the solid lies in LocalBox and within BoundingRadius, and both are reached: the
// profile's extreme end grown by d along the extreme direction is on the surface.
TEST(SdfRevolution, BoundsHoldTheSolidAndAreTight) {
  std::mt19937 rng(11);
  for (const NamedShape& dish : Dishes()) {
    const SdfRevolution& s = dish.shape;
    const SdfBox box = s.LocalBox();
    const double radius = s.BoundingRadius();
    for (int k = 0; k < 2000; ++k) {
      const Vec3 p = RandomInBox(rng, box, 1.3);
      if (s.Distance(p) > 0) continue;
      EXPECT_TRUE((p.array() >= box.lo.array()).all() && (p.array() <= box.hi.array()).all())
          << dish.name << " p=" << p.transpose();
      EXPECT_LE(p.norm(), radius) << dish.name;
    }
    const Vec2 ends[3] = {Vec2::Zero(), s.a, s.b};
    const Vec2* widest = std::max_element(
        ends, ends + 3, [](const Vec2& u, const Vec2& v) { return u.x() < v.x(); });
    const Vec2* farthest = std::max_element(
        ends, ends + 3, [](const Vec2& u, const Vec2& v) { return u.norm() < v.norm(); });
    const Vec2* top = std::max_element(ends, ends + 3,
                                       [](const Vec2& u, const Vec2& v) { return u.y() < v.y(); });
    const Vec2* bottom = std::min_element(
        ends, ends + 3, [](const Vec2& u, const Vec2& v) { return u.y() < v.y(); });
    for (const double theta : {0.0, kPi / 2, -kPi}) {
      const Mat3 rz = RotationZ(theta);
      const Vec3 side = Swept(*widest + Vec2(s.padding, 0), theta);
      EXPECT_NEAR(s.Distance(side), 0, 1e-15) << dish.name;
      EXPECT_NEAR((rz.transpose() * side).x(), box.hi.x(), 1e-15) << dish.name;
      const Vec3 far = Swept(*farthest * (1 + s.padding / farthest->norm()), theta);
      EXPECT_NEAR(s.Distance(far), 0, 1e-15) << dish.name;
      EXPECT_NEAR(far.norm(), radius, 1e-15) << dish.name;
    }
    EXPECT_NEAR(s.Distance(Swept(*top + Vec2(0, s.padding), 0.3)), 0, 1e-15) << dish.name;
    EXPECT_NEAR(top->y() + s.padding, box.hi.z(), 1e-16) << dish.name;
    EXPECT_NEAR(s.Distance(Swept(*bottom - Vec2(0, s.padding), 0.3)), 0, 1e-15) << dish.name;
    EXPECT_NEAR(bottom->y() - s.padding, box.lo.z(), 1e-16) << dish.name;
  }
}

// The documented one-sided values: ties between the segments go to OA; on the mid-surface the
// gradient is the segment's left normal. The profile has binary-exact corners so that the tie
// is exact: (1/16, 1/16) is 1/16 from the floor and from the wall at r = 1/8.
TEST(SdfRevolution, MedialSetValuesAreTheDocumentedOnes) {
  const SdfRevolution cup = Profile(0.125, 0, 0.125, 0.25, 0.01);
  Vec3 gradient;
  EXPECT_EQ(cup.DistanceAndGradient(Vec3(0.0625, 0, 0.0625), &gradient), 0.0625 - 0.01);
  EXPECT_EQ(gradient, Vec3(0, 0, 1));  // OA's side
  cup.DistanceAndGradient(Vec3(0.0625 + 1e-9, 0, 0.0625), &gradient);
  EXPECT_LT((gradient - Vec3(-1, 0, 0)).norm(), 1e-15);  // nearer the wall: away from it
  // On the mid-surface: the floor's left normal +z, the wall's -r (into the cup), at A the floor's.
  EXPECT_EQ(cup.DistanceAndGradient(Vec3(0.05, 0, 0), &gradient), -0.01);
  EXPECT_EQ(gradient, Vec3(0, 0, 1));
  EXPECT_EQ(cup.DistanceAndGradient(Vec3(0, 0.125, 0.1), &gradient), -0.01);
  EXPECT_LT((gradient - Vec3(0, -1, 0)).norm(), 1e-15);
  EXPECT_EQ(cup.DistanceAndGradient(Vec3(0.125, 0, 0), &gradient), -0.01);
  EXPECT_EQ(gradient, Vec3(0, 0, 1));
  // At O on the axis: on the mid-surface too.
  EXPECT_EQ(cup.DistanceAndGradient(Vec3::Zero(), &gradient), -0.01);
  EXPECT_EQ(gradient, Vec3(0, 0, 1));
}

}  // namespace
}  // namespace alsim
