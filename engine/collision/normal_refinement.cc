#include "engine/collision/normal_refinement.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>

namespace alsim {
namespace {

// Finite-difference step (radians) for Newton's Jacobian; the gradient is smooth where the
// families below are used, so the step only limits the convergence rate to ~1e-7 per iteration.
constexpr double kDifferenceStep = 1e-7;
constexpr double kMaxNewtonStep = 0.5;  // radians; keeps a bad Jacobian from jumping far
// A run whose gradient has not halved in this many iterations is given up: it is not converging
// (the family does not fit the contact, e.g. the sphere family on a cylinder's rim), and only
// converged candidates are used. Runs that reached kNormalNewtonIterations unconverged held much
// of the Newton work; with this cut-off no refinement chose another normal (checked against the
// full runs to 1e-9; figures in docs/benchmarks-history.md).
constexpr int kStallIterations = 5;

// Counts the iterations since the gradient norm last fell below half its best value.
class StallDetector {
 public:
  bool Stalled(double gradient_norm) {
    if (gradient_norm < 0.5 * best_) {
      best_ = gradient_norm;
      since_best_ = 0;
      return false;
    }
    return ++since_best_ >= kStallIterations;
  }

 private:
  double best_ = std::numeric_limits<double>::infinity();
  int since_best_ = 0;
};

Vec3 Support(const AxialBody& body, const Vec3& dir) {
  return body.mapping.support(body.mapping.set, dir);
}

// S_A(n) - S_B(-n): the overlap's gradient before projection onto the tangent plane of n.
Vec3 SupportGap(const AxialBody& a, const AxialBody& b, const Vec3& n) {
  return Support(a, n) - Support(b, -n);
}

Vec3 Perpendicular(const Vec3& n) {
  const Vec3 helper = std::abs(n.x()) < 0.6 ? Vec3::UnitX() : Vec3::UnitY();
  return n.cross(helper).normalized();
}

struct Candidate {
  Vec3 normal = Vec3::UnitZ();
  bool converged = false;
};

// The gradient at n in the basis (t1, t2) (any two unit vectors spanning the tangent plane of
// the Newton iterate): t_i . (g - (n.g) n).
Eigen::Vector2d TangentGradient(const AxialBody& a, const AxialBody& b, const Vec3& n,
                                const Vec3& t1, const Vec3& t2) {
  const Vec3 g = SupportGap(a, b, n);
  const Vec3 tangential = g - n.dot(g) * n;
  return {t1.dot(tangential), t2.dot(tangential)};
}

// Newton over all unit directions, each step in the tangent plane of the current one.
Candidate NewtonOnSphere(const AxialBody& a, const AxialBody& b, const Vec3& start,
                         double tolerance) {
  Candidate c{start, false};
  StallDetector stall;
  for (int it = 0; it < kNormalNewtonIterations; ++it) {
    const Vec3 t1 = Perpendicular(c.normal);
    const Vec3 t2 = c.normal.cross(t1);
    const Eigen::Vector2d r = TangentGradient(a, b, c.normal, t1, t2);
    if (r.norm() <= tolerance) {
      c.converged = true;
      return c;
    }
    if (stall.Stalled(r.norm())) return c;
    Eigen::Matrix2d jacobian;
    for (int k = 0; k < 2; ++k) {
      const Vec3 moved = (c.normal + kDifferenceStep * (k == 0 ? t1 : t2)).normalized();
      jacobian.col(k) = (TangentGradient(a, b, moved, t1, t2) - r) / kDifferenceStep;
    }
    if (!(std::abs(jacobian.determinant()) > 0)) return c;
    Eigen::Vector2d step = -jacobian.partialPivLu().solve(r);
    if (!step.allFinite()) return c;
    if (step.norm() > kMaxNewtonStep) step *= kMaxNewtonStep / step.norm();
    c.normal = (c.normal + step.x() * t1 + step.y() * t2).normalized();
  }
  return c;
}

// Newton over the unit directions perpendicular to `axis`: n(phi) = cos(phi) e1 + sin(phi) e2.
// Only the gradient's component along the circle matters there; along the axis the support of a
// segment or cylinder side is a whole segment.
Candidate NewtonOnCircle(const AxialBody& a, const AxialBody& b, const Vec3& axis,
                         const Vec3& start, double tolerance) {
  const Vec3 in_plane = start - start.dot(axis) * axis;
  if (in_plane.norm() < 1e-6) return {start, false};  // start is along the axis
  const Vec3 e1 = in_plane.normalized();
  const Vec3 e2 = axis.cross(e1);
  const auto direction = [&](double phi) { return Vec3(std::cos(phi) * e1 + std::sin(phi) * e2); };
  const auto gradient = [&](double phi) {
    const Vec3 tangent = -std::sin(phi) * e1 + std::cos(phi) * e2;
    return tangent.dot(SupportGap(a, b, direction(phi)));
  };
  double phi = 0;
  StallDetector stall;
  for (int it = 0; it < kNormalNewtonIterations; ++it) {
    const double r = gradient(phi);
    if (std::abs(r) <= tolerance) return {direction(phi), true};
    if (stall.Stalled(std::abs(r))) break;
    const double slope = (gradient(phi + kDifferenceStep) - r) / kDifferenceStep;
    if (!(std::abs(slope) > 0)) break;
    phi += std::clamp(-r / slope, -kMaxNewtonStep, kMaxNewtonStep);
  }
  return {direction(phi), false};
}

// The common perpendicular of two axes, on the side of `start`.
Candidate CommonPerpendicular(const Vec3& axis_a, const Vec3& axis_b, const Vec3& start) {
  const Vec3 cross = axis_a.cross(axis_b);
  if (cross.norm() < 1e-6) return {start, false};  // parallel axes
  const Vec3 n = cross.normalized();
  return {n.dot(start) >= 0 ? n : Vec3(-n), true};
}

}  // namespace

double Overlap(const AxialBody& a, const AxialBody& b, const Vec3& n) {
  return n.dot(Support(a, n)) - n.dot(Support(b, -n));
}

RefinedNormal RefineNormal(const AxialBody& a, const AxialBody& b, const Vec3& start, double scale,
                           const Vec3* extra, int extra_count) {
  const double tolerance = kNormalGradientTolerance * scale;
  Candidate newton[1 + 3 + 3 + 9];
  int count = 0;
  newton[count++] = NewtonOnSphere(a, b, start, tolerance);
  for (const AxialBody* body : {&a, &b}) {
    for (int i = 0; i < body->axis_count; ++i) {
      newton[count++] = NewtonOnCircle(a, b, body->axes[i], start, tolerance);
    }
  }
  for (int i = 0; i < a.axis_count; ++i) {
    for (int j = 0; j < b.axis_count; ++j) {
      newton[count++] = CommonPerpendicular(a.axes[i], b.axes[j], start);
    }
  }

  // The least overlap over the start, the converged candidates and the extra directions.
  RefinedNormal best{start, Overlap(a, b, start), false};
  const auto consider = [&](const Vec3& n) {
    const double overlap = Overlap(a, b, n);
    if (overlap < best.overlap) best = {n, overlap, true};
  };
  for (int i = 0; i < count; ++i) {
    if (newton[i].converged) consider(newton[i].normal);
  }
  for (int i = 0; i < extra_count; ++i) consider(extra[i]);
  // Near a smooth minimum overlap(n) is flat to second order: a direction ~1e-7 off (GJK, MPR)
  // can look as good to rounding. A converged Newton candidate that close wins.
  const double rounding = 1e-14 * scale;
  for (int i = 0; i < count; ++i) {
    if (!newton[i].converged) continue;
    const double overlap = Overlap(a, b, newton[i].normal);
    if (overlap <= best.overlap + rounding) return {newton[i].normal, overlap, true};
  }
  return best;
}

}  // namespace alsim
