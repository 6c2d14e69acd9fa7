#include "engine/collision/smooth_pair_distance.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>

#include "engine/collision/normal_refinement.h"
#include "engine/collision/pair_geometry.h"

namespace alsim {
namespace {

constexpr double kMaxStep = 0.5;  // radians, as RefineNormal's Newton
constexpr int kHalvings = 8;      // step halvings before a run that does not descend gives up
// A run whose tangential gradient has not halved in this many iterations is given up: the answer
// sits on a kink (a face or side touching), where the gradient does not vanish.
constexpr int kStallIterations = 4;

// overlap(n), its gradient (the support gap s_A(n) - s_B(-n)) and Hessian (smooth_pair_distance.h).
struct OverlapExpansion {
  double value = 0;
  Vec3 gradient = Vec3::Zero();
  Mat3 hessian = Mat3::Zero();
};

// Body's terms of h(n) - n.c, returned, with s(n) - c (the support point's offset from the
// center, their gradient) added to *offset and their Hessian to *hessian, each when set:
// sqrt(n^T Q n) (nothing for Q = 0), a disk's r |P n| with P = I - z z^T (nothing along its
// normal), and l |n.z| (linear on each side of its kink). Both bodies of a pair add the same:
// h_b(-n) = -n.c_b + terms that are even in n, with gradient -s_b(-n).
double AddBodyTerms(const SmoothBody& body, const Vec3& n, Vec3* offset, Mat3* hessian) {
  double value = 0;
  const Vec3 qn = body.q * n;
  const double g2 = n.dot(qn);
  if (g2 > 0) {
    const double g = std::sqrt(g2);
    value += g;
    if (offset != nullptr || hessian != nullptr) {
      const Vec3 support = qn / g;  // the ellipsoid's support point minus its center
      if (offset != nullptr) *offset += support;
      if (hessian != nullptr) *hessian += (body.q - support * support.transpose()) / g;
    }
  }
  const double along = n.dot(body.axis);
  if (body.face_radius > 0) {
    // P n as a difference, not through r^2 P: n^T (r^2 P) n = r^2 (1 - (n.z)^2) loses half the
    // digits near the axis (1e-9 m of a 0.1 m disk's support along its own normal).
    const Vec3 across = n - along * body.axis;
    const double length = across.norm();
    if (length > 0) {
      const Vec3 unit = across / length;
      value += body.face_radius * length;
      if (offset != nullptr) *offset += body.face_radius * unit;
      if (hessian != nullptr) {
        *hessian +=
            (body.face_radius / length) *
            (Mat3::Identity() - body.axis * body.axis.transpose() - unit * unit.transpose());
      }
    }
  }
  if (body.half_length > 0) {
    value += body.half_length * std::abs(along);
    if (offset != nullptr) {
      *offset += (along >= 0 ? body.half_length : -body.half_length) * body.axis;
    }
  }
  return value;
}

// With d = c_b - c_a: overlap(n) = -n.d + the bodies' terms.
OverlapExpansion Evaluate(const SmoothBody& a, const SmoothBody& b, const Vec3& d, const Vec3& n) {
  OverlapExpansion overlap;
  overlap.gradient = -d;
  overlap.value = -n.dot(d) + AddBodyTerms(a, n, &overlap.gradient, &overlap.hessian) +
                  AddBodyTerms(b, n, &overlap.gradient, &overlap.hessian);
  return overlap;
}

// overlap(n) alone, for the backtracking line search.
double OverlapValue(const SmoothBody& a, const SmoothBody& b, const Vec3& d, const Vec3& n) {
  return -n.dot(d) + AddBodyTerms(a, n, nullptr, nullptr) + AddBodyTerms(b, n, nullptr, nullptr);
}

// body's support point along n.
Vec3 SupportAlong(const SmoothBody& body, const Vec3& n) {
  Vec3 point = body.center;
  AddBodyTerms(body, n, &point, nullptr);
  return point;
}

}  // namespace

SmoothBody EllipsoidBody(const Vec3& center, const Mat3& rot, const Vec3& semi_axes) {
  return {center, rot * semi_axes.cwiseAbs2().asDiagonal() * rot.transpose(), Vec3::UnitZ(), 0, 0};
}

SmoothBody PointBody(const Vec3& point) { return {point, Mat3::Zero(), Vec3::UnitZ(), 0, 0}; }

SmoothBody SegmentBody(const Vec3& center, const Vec3& axis, double half_length) {
  return {center, Mat3::Zero(), axis, half_length, 0};
}

SmoothBody CylinderBody(const Vec3& center, const Vec3& axis, double radius, double half_length) {
  return {center, Mat3::Zero(), axis, half_length, radius};
}

SmoothPairDistance EndFaceDistance(const SmoothBody& a, const SmoothBody& b, double beyond) {
  SmoothPairDistance result;
  const Vec3 d = b.center - a.center;
  // face_of_a: a's face toward b (n along a's axis); else b's face toward a (n against b's axis).
  for (const bool face_of_a : {true, false}) {
    const SmoothBody& face = face_of_a ? a : b;
    const SmoothBody& other = face_of_a ? b : a;
    if (!(face.face_radius > 0)) continue;
    const double side = face.axis.dot(d) >= 0 ? 1.0 : -1.0;  // the face toward the other body
    const Vec3 n = side * face.axis;                         // from a toward b either way
    const double overlap = OverlapValue(a, b, d, n);
    if (!(overlap < 0)) continue;
    if (-overlap > beyond) {
      result.outcome = SmoothPairOutcome::kBeyond;
      return result;
    }
    // The other body's support point against the face, and the face's center; the point must
    // lie over the disk (within its radius across n).
    const Vec3 toward_face = face_of_a ? Vec3(-n) : n;
    const Vec3 other_point = SupportAlong(other, toward_face);
    const Vec3 face_center =
        face.center + (face_of_a ? 1.0 : -1.0) * side * face.half_length * face.axis;
    const Vec3 across = other_point - face_center;
    if ((across - across.dot(n) * n).norm() > face.face_radius) continue;
    result.outcome = SmoothPairOutcome::kApart;
    result.distance = -overlap;
    result.normal = n;
    result.point_a = face_of_a ? Vec3(other_point - result.distance * n) : other_point;
    return result;
  }
  return result;
}

SmoothPairDistance SideDistance(const SmoothBody& a, const SmoothBody& b, double beyond,
                                double scale) {
  SmoothPairDistance result;
  const Vec3 d = b.center - a.center;
  const double tolerance = kNormalGradientTolerance * scale;
  for (const bool side_of_a : {true, false}) {
    const SmoothBody& side = side_of_a ? a : b;
    const SmoothBody& other = side_of_a ? b : a;
    if (!(side.half_length > 0)) continue;  // a cylinder, or a segment (r = 0)
    // n(phi) = cos(phi) e1 + sin(phi) e2 on the circle perpendicular to the axis, from the
    // centers' direction; n points from a toward b either way.
    const Vec3 across = d - d.dot(side.axis) * side.axis;
    const double across_length = across.norm();
    if (!(across_length > 0)) continue;
    const Vec3 e1 = across / across_length;
    const Vec3 e2 = side.axis.cross(e1);
    double phi = 0;
    Vec3 n = e1;
    bool converged = false;
    OverlapExpansion overlap;
    for (int it = 0; it < kSmoothPairMaxIterations; ++it) {
      n = std::cos(phi) * e1 + std::sin(phi) * e2;
      overlap = Evaluate(a, b, d, n);
      if (!(overlap.value < 0)) break;
      if (-overlap.value > beyond) {
        result.outcome = SmoothPairOutcome::kBeyond;
        return result;
      }
      // d/dphi and d2/dphi2 along the great circle (the side's own terms add r, a constant, and
      // a gradient along the axis, normal to the circle).
      const Vec3 tangent = -std::sin(phi) * e1 + std::cos(phi) * e2;
      const double slope = tangent.dot(overlap.gradient);
      if (std::abs(slope) <= tolerance) {
        converged = true;
        break;
      }
      const double curvature = tangent.dot(overlap.hessian * tangent) - overlap.value;
      if (!(curvature > 0)) break;
      phi -= std::clamp(slope / curvature, -kMaxStep, kMaxStep);
    }
    if (!converged) continue;
    // The other body's support point against the side; it must lie within the side's length.
    const double sign = side_of_a ? 1.0 : -1.0;  // the side faces along sign * n
    const Vec3 other_point = SupportAlong(other, -sign * n);
    const Vec3 axis_point = side.center + sign * side.face_radius * n;  // on the side's mid-line
    const double along = (other_point - axis_point).dot(side.axis);
    if (std::abs(along) > side.half_length) continue;
    result.outcome = SmoothPairOutcome::kApart;
    result.distance = -overlap.value;
    result.normal = n;
    result.point_a = side_of_a ? Vec3(axis_point + along * side.axis) : other_point;
    return result;
  }
  return result;
}

SmoothPairDistance SmoothPairDistanceOf(const SmoothBody& a, const SmoothBody& b, const Vec3& start,
                                        double beyond, double scale) {
  SmoothPairDistance result;
  const Vec3 d = b.center - a.center;
  const double tolerance = kNormalGradientTolerance * scale;
  const double rounding = 1e-14 * scale;
  Vec3 n = start;
  OverlapExpansion overlap = Evaluate(a, b, d, n);
  double best_gradient = INFINITY;
  int since_best = 0;
  for (int it = 0; it < kSmoothPairMaxIterations; ++it) {
    result.iterations = it;
    // Along n the bodies overlap: no certificate from here (they may still be apart).
    if (!(overlap.value < 0)) return result;
    // n alone separates them by more than `beyond`.
    if (-overlap.value > beyond) {
      result.outcome = SmoothPairOutcome::kBeyond;
      return result;
    }
    const Vec3 t1 = collision_detail::AnyPerpendicular(n);
    const Vec3 t2 = n.cross(t1);
    const Eigen::Vector2d r(t1.dot(overlap.gradient), t2.dot(overlap.gradient));
    if (r.norm() <= tolerance) {
      result.outcome = SmoothPairOutcome::kApart;
      result.distance = -overlap.value;
      result.normal = n;
      result.point_a = SupportAlong(a, n);
      return result;
    }
    if (r.norm() < 0.5 * best_gradient) {
      best_gradient = r.norm();
      since_best = 0;
    } else if (++since_best >= kStallIterations) {
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
