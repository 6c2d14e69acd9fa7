#include "engine/collision/sdf_revolution.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace alsim {
namespace {

using Vec2 = Eigen::Vector2d;

// The planar distance from q to the closed segment p0-p1 and the unit direction g from its nearest
// point toward q. Inside the segment's span the distance is the offset along the unit left normal
// n = (-e_z, e_r) / |e|, s = n.(q - p0), computed from the cross product rather than from q minus
// the projected point, so that near the segment the direction stays the normal (sign(s) n, n itself
// at s = 0) instead of rounding noise along the segment. Beyond an end (or for a segment of length
// zero, whose projection u = 0 selects p0) the nearest point is that end; on it, g is the left
// normal, or (0, 1) for a segment of length zero.
struct SegmentDistance {
  double distance = 0;
  Vec2 direction = Vec2::UnitY();
};

Vec2 LeftNormal(const Vec2& e) {
  const double length = e.norm();
  return length > 0 ? Vec2(-e.y() / length, e.x() / length) : Vec2::UnitY();
}

template <bool kWithDirection>
SegmentDistance DistanceToSegment(const Vec2& q, const Vec2& p0, const Vec2& p1) {
  SegmentDistance result;
  const Vec2 e = p1 - p0;
  const Vec2 w = q - p0;
  const double u = w.dot(e), length2 = e.squaredNorm();
  if (u <= 0 || u >= length2) {
    const Vec2 offset = u <= 0 ? w : Vec2(q - p1);
    result.distance = offset.norm();
    if (kWithDirection) {
      result.direction = result.distance > 0 ? Vec2(offset / result.distance) : LeftNormal(e);
    }
    return result;
  }
  const double length = std::sqrt(length2);
  const double s = (e.x() * w.y() - e.y() * w.x()) / length;
  result.distance = std::abs(s);
  if (kWithDirection) {
    const Vec2 n(-e.y() / length, e.x() / length);
    result.direction = s < 0 ? Vec2(-n) : n;
  }
  return result;
}

// min(dist(q, OA), dist(q, AB)) of eq. (45) and the winner's direction; ties go to OA.
template <bool kWithDirection>
SegmentDistance DistanceToProfile(const Vec2& q, const Vec2& a, const Vec2& b) {
  const SegmentDistance bottom = DistanceToSegment<kWithDirection>(q, Vec2::Zero(), a);
  const SegmentDistance wall = DistanceToSegment<kWithDirection>(q, a, b);
  return wall.distance < bottom.distance ? wall : bottom;
}

}  // namespace

bool SdfRevolution::IsValid() const {
  return a.allFinite() && b.allFinite() && a.x() >= 0 && b.x() >= 0 && std::isfinite(padding) &&
         padding > 0;
}

double SdfRevolution::Distance(const Vec3& p) const {
  const Vec2 q(std::sqrt(p.x() * p.x() + p.y() * p.y()), p.z());
  return DistanceToProfile<false>(q, a, b).distance - padding;
}

double SdfRevolution::DistanceAndGradient(const Vec3& p, Vec3* gradient) const {
  const double r = std::sqrt(p.x() * p.x() + p.y() * p.y());
  const SegmentDistance nearest = DistanceToProfile<true>(Vec2(r, p.z()), a, b);
  const Vec2& g = nearest.direction;
  // grad SDF_3d = (g_r p_x / r, g_r p_y / r, g_z); on the axis the radial unit is +x.
  if (r > 0) {
    *gradient = Vec3(g.x() * (p.x() / r), g.x() * (p.y() / r), g.y());
  } else {
    *gradient = Vec3(g.x(), 0, g.y());
  }
  return nearest.distance - padding;
}

double SdfRevolution::BoundingRadius() const { return std::max(a.norm(), b.norm()) + padding; }

SdfBox SdfRevolution::LocalBox() const {
  const double radius = std::max(a.x(), b.x()) + padding;
  const double z_lo = std::min({0.0, a.y(), b.y()}) - padding;
  const double z_hi = std::max({0.0, a.y(), b.y()}) + padding;
  return SdfBox{Vec3(-radius, -radius, z_lo), Vec3(radius, radius, z_hi)};
}

SdfRevolution SdfRevolution::FromParameters(const double* parameters) {
  SdfRevolution shape;
  shape.a = Vec2(parameters[0], parameters[1]);
  shape.b = Vec2(parameters[2], parameters[3]);
  shape.padding = parameters[4];
  return shape;
}

namespace {

// Appends p0 + (p1 - p0) i / n for i < n, n the fewest steps no longer than `step` (p1 excluded).
void SampleSegment(const Vec2& p0, const Vec2& p1, double step, std::vector<Vec2>* out) {
  const int n = std::max(1, static_cast<int>(std::ceil((p1 - p0).norm() / step)));
  for (int i = 0; i < n; ++i) out->push_back(p0 + (p1 - p0) * (static_cast<double>(i) / n));
}

// Appends center + radius (cos, sin)(t0 + sweep i / n) for i < n (the arc's end excluded).
void SampleArc(const Vec2& center, double radius, double t0, double sweep, double step,
               std::vector<Vec2>* out) {
  const int n = std::max(1, static_cast<int>(std::ceil(std::abs(sweep) / step)));
  for (int i = 0; i < n; ++i) {
    const double t = t0 + sweep * (static_cast<double>(i) / n);
    out->push_back(center + radius * Vec2(std::cos(t), std::sin(t)));
  }
}

double Angle(const Vec2& v) { return std::atan2(v.y(), v.x()); }

// The signed angle in (-pi, pi] that turns unit u into unit v.
double Turn(const Vec2& u, const Vec2& v) {
  return std::atan2(u.x() * v.y() - u.y() * v.x(), u.dot(v));
}

}  // namespace

void SdfRevolution::Triangulate(int segments, std::vector<Vec3>* vertices,
                                std::vector<Eigen::Vector3i>* faces) const {
  constexpr double kPi = 3.14159265358979323846;
  constexpr double kArcStep = kPi / 12;
  const double radius = std::max(a.x(), b.x()) + padding;
  const double step = 2 * kPi * radius / segments;
  const double d = padding;
  // The skeleton O-A-B without segments of length zero.
  std::vector<Vec2> skeleton = {Vec2::Zero()};
  for (const Vec2& p : {a, b}) {
    if ((p - skeleton.back()).norm() > 0) skeleton.push_back(p);
  }
  // The offset loop: right side forward, the cap at the last point, left side back, the cap at O.
  std::vector<Vec2> loop;
  const int n = static_cast<int>(skeleton.size());
  if (n == 1) {
    SampleArc(Vec2::Zero(), d, -kPi / 2, 2 * kPi, kArcStep, &loop);
  } else {
    std::vector<Vec2> right(n - 1);  // unit right normal (e_z, -e_r) / |e| of segment i
    for (int i = 0; i + 1 < n; ++i) {
      const Vec2 e = (skeleton[i + 1] - skeleton[i]).normalized();
      right[i] = Vec2(e.y(), -e.x());
    }
    for (int i = 0; i + 1 < n; ++i) {  // right side, joins as the shorter arcs
      SampleSegment(skeleton[i] + d * right[i], skeleton[i + 1] + d * right[i], step, &loop);
      if (i + 2 < n) {
        SampleArc(skeleton[i + 1], d, Angle(right[i]), Turn(right[i], right[i + 1]), kArcStep,
                  &loop);
      }
    }
    // Caps: half turns through the segment's direction (the tip) at the end, its reverse at O.
    const double cap = kPi * (Turn(right[n - 2], (skeleton[n - 1] - skeleton[n - 2])) > 0 ? 1 : -1);
    SampleArc(skeleton[n - 1], d, Angle(right[n - 2]), cap, kArcStep, &loop);
    for (int i = n - 2; i >= 0; --i) {  // left side, back
      SampleSegment(skeleton[i + 1] - d * right[i], skeleton[i] - d * right[i], step, &loop);
      if (i > 0) {
        SampleArc(skeleton[i], d, Angle(-right[i]), Turn(-right[i], -right[i - 1]), kArcStep,
                  &loop);
      }
    }
    SampleArc(skeleton[0], d, Angle(-right[0]), cap, kArcStep, &loop);
  }
  // Keep the loop's points in the half-plane r >= 0 that are not inside the solid (the concave
  // side of a join, overlaps of the padding); crossings become curve points: on the axis by
  // interpolation, into the solid by bisection for SDF = 0. Curves run from axis to axis.
  const double tolerance = 1e-9 * radius;
  const auto sdf = [this](const Vec2& q) { return Distance(Vec3(q.x(), 0, q.y())); };
  const auto kept = [&](const Vec2& q) { return q.x() >= 0 && sdf(q) >= -tolerance; };
  const int count = static_cast<int>(loop.size());
  int start = 0;  // a point with r < 0, the O cap's, so that every curve starts at the axis
  for (int i = 1; i < count; ++i) {
    if (loop[i].x() < loop[start].x()) start = i;
  }
  std::vector<std::vector<Vec2>> curves;
  const auto crossing = [&](const Vec2& out, const Vec2& in) {
    if (out.x() < 0) {
      // The chord's axis point, then Newton along the axis onto the surface (the chord of an
      // arc lies inside it by the arc's sag).
      Vec2 q(0, out.y() + (in.y() - out.y()) * (out.x() / (out.x() - in.x())));
      for (int k = 0; k < 8; ++k) {
        Vec3 g;
        const double value = DistanceAndGradient(Vec3(0, 0, q.y()), &g);
        if (std::abs(value) <= 1e-3 * tolerance || std::abs(g.z()) < 0.5) break;
        q.y() -= value / g.z();
      }
      return q;
    }
    Vec2 lo = out, hi = in;  // sdf(lo) < 0 <= sdf(hi)
    for (int k = 0; k < 60; ++k) {
      const Vec2 mid = 0.5 * (lo + hi);
      (sdf(mid) < 0 ? lo : hi) = mid;
    }
    return hi;
  };
  const auto append = [](std::vector<Vec2>* curve, const Vec2& q) {
    if (curve->empty() || (q - curve->back()).norm() > 0) curve->push_back(q);
  };
  bool open = false;
  for (int k = 1; k <= count; ++k) {
    const Vec2& previous = loop[(start + k - 1) % count];
    const Vec2& current = loop[(start + k) % count];
    const bool was_kept = kept(previous), is_kept = kept(current);
    if (!was_kept && is_kept) {
      if (previous.x() < 0 || !open) {
        curves.emplace_back();
        open = true;
      }
      append(&curves.back(), crossing(previous, current));
    }
    if (is_kept) append(&curves.back(), current);
    if (was_kept && !is_kept) {
      append(&curves.back(), crossing(current, previous));
      if (current.x() < 0) open = false;
    }
  }
  // Sweep each curve about z: a point on the axis is one pole vertex, any other a ring.
  const int base = static_cast<int>(vertices->size());
  for (const std::vector<Vec2>& curve : curves) {
    std::vector<int> first(curve.size());  // the point's first vertex, global index
    std::vector<bool> pole(curve.size());
    for (size_t i = 0; i < curve.size(); ++i) {
      first[i] = static_cast<int>(vertices->size()) - base;
      pole[i] = curve[i].x() <= tolerance;
      const int ring = pole[i] ? 1 : segments;
      for (int j = 0; j < ring; ++j) {
        const double t = 2 * kPi * j / segments;
        const double r = pole[i] ? 0.0 : curve[i].x();
        vertices->emplace_back(r * std::cos(t), r * std::sin(t), curve[i].y());
      }
    }
    for (size_t i = 0; i + 1 < curve.size(); ++i) {
      if (pole[i] && pole[i + 1]) continue;
      for (int j = 0; j < segments; ++j) {
        const int j1 = (j + 1) % segments;
        const int p0 = first[i] + (pole[i] ? 0 : j), p1 = first[i] + (pole[i] ? 0 : j1);
        const int q0 = first[i + 1] + (pole[i + 1] ? 0 : j);
        const int q1 = first[i + 1] + (pole[i + 1] ? 0 : j1);
        if (!pole[i]) faces->emplace_back(p0, p1, q0);
        if (!pole[i + 1]) faces->emplace_back(p1, q1, q0);
      }
    }
  }
}

}  // namespace alsim
