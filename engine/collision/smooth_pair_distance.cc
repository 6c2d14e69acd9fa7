#include "engine/collision/smooth_pair_distance.h"

#include <Eigen/Geometry>
#include <cmath>

#include "engine/collision/normal_refinement.h"

namespace alsim {
namespace {

constexpr double kMaxStep = 0.5;  // radians, as RefineNormal's Newton
constexpr int kHalvings = 8;      // step halvings before a run that does not descend gives up

// overlap(n), its gradient (the support gap s_A(n) - s_B(-n)) and Hessian (smooth_pair_distance.h).
struct OverlapExpansion {
  double value = 0;
  Vec3 gradient = Vec3::Zero();
  Mat3 hessian = Mat3::Zero();
};

// Adds g(n) = sqrt(n^T Q n) of an ellipsoid with its derivatives; a point adds nothing.
void AddEllipsoidTerm(const Mat3& q, const Vec3& n, OverlapExpansion* overlap) {
  const Vec3 qn = q * n;
  const double g2 = n.dot(qn);
  if (!(g2 > 0)) return;
  const double g = std::sqrt(g2);
  const Vec3 support = qn / g;  // the ellipsoid's support point minus its center
  overlap->value += g;
  overlap->gradient += support;
  overlap->hessian += (q - support * support.transpose()) / g;
}

// With d = c_B - c_A: overlap(n) = -n.d + g_A(n) + g_B(n).
OverlapExpansion Evaluate(const SmoothBody& a, const SmoothBody& b, const Vec3& d, const Vec3& n) {
  OverlapExpansion overlap;
  overlap.value = -n.dot(d);
  overlap.gradient = -d;
  AddEllipsoidTerm(a.q, n, &overlap);
  AddEllipsoidTerm(b.q, n, &overlap);
  return overlap;
}

double OverlapValue(const SmoothBody& a, const SmoothBody& b, const Vec3& d, const Vec3& n) {
  double value = -n.dot(d);
  for (const Mat3* q : {&a.q, &b.q}) {
    const double g2 = n.dot(*q * n);
    if (g2 > 0) value += std::sqrt(g2);
  }
  return value;
}

Vec3 Perpendicular(const Vec3& n) {
  const Vec3 helper = std::abs(n.x()) < 0.6 ? Vec3::UnitX() : Vec3::UnitY();
  return n.cross(helper).normalized();
}

}  // namespace

SmoothBody EllipsoidBody(const Vec3& center, const Mat3& rot, const Vec3& semi_axes) {
  return {center, rot * semi_axes.cwiseAbs2().asDiagonal() * rot.transpose()};
}

SmoothBody PointBody(const Vec3& point) { return {point, Mat3::Zero()}; }

SmoothPairDistance SmoothPairDistanceOf(const SmoothBody& a, const SmoothBody& b, const Vec3& start,
                                        double beyond, double scale) {
  SmoothPairDistance result;
  const Vec3 d = b.center - a.center;
  const double tolerance = kNormalGradientTolerance * scale;
  const double rounding = 1e-14 * scale;
  Vec3 n = start;
  OverlapExpansion overlap = Evaluate(a, b, d, n);
  for (int it = 0; it < kSmoothPairMaxIterations; ++it) {
    result.iterations = it;
    // Along n the bodies overlap: no certificate from here (they may still be apart).
    if (!(overlap.value < 0)) return result;
    // n alone separates them by more than `beyond`.
    if (-overlap.value > beyond) {
      result.outcome = SmoothPairOutcome::kBeyond;
      return result;
    }
    const Vec3 t1 = Perpendicular(n);
    const Vec3 t2 = n.cross(t1);
    const Eigen::Vector2d r(t1.dot(overlap.gradient), t2.dot(overlap.gradient));
    if (r.norm() <= tolerance) {
      result.outcome = SmoothPairOutcome::kApart;
      result.distance = -overlap.value;
      result.normal = n;
      const Vec3 qn = a.q * n;
      const double g2 = n.dot(qn);
      result.point_a = g2 > 0 ? Vec3(a.center + qn / std::sqrt(g2)) : a.center;
      return result;
    }
    // Riemannian Newton: (T^T H T - overlap I) step = -r, positive definite since overlap < 0
    // and H (a sum of convex terms' Hessians) is positive semidefinite.
    const Vec3 ht1 = overlap.hessian * t1;
    const Vec3 ht2 = overlap.hessian * t2;
    const double h11 = t1.dot(ht1) - overlap.value;
    const double h12 = t1.dot(ht2);
    const double h22 = t2.dot(ht2) - overlap.value;
    const double det = h11 * h22 - h12 * h12;
    if (!(det > 0)) return result;
    Eigen::Vector2d step((-h22 * r.x() + h12 * r.y()) / det, (h12 * r.x() - h11 * r.y()) / det);
    const double length = step.norm();
    if (length > kMaxStep) step *= kMaxStep / length;
    // Backtrack until the overlap does not grow beyond rounding (Newton's step can overshoot far
    // from the answer, where the model is poor; near it the overlap is flat to second order).
    int halvings = 0;
    Vec3 next = (n + step.x() * t1 + step.y() * t2).normalized();
    while (OverlapValue(a, b, d, next) > overlap.value + rounding) {
      if (++halvings > kHalvings) return result;
      step *= 0.5;
      next = (n + step.x() * t1 + step.y() * t2).normalized();
    }
    n = next;
    overlap = Evaluate(a, b, d, n);
  }
  return result;
}

}  // namespace alsim
