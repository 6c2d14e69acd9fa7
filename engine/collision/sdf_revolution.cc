#include "engine/collision/sdf_revolution.h"

#include <algorithm>
#include <cmath>

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

}  // namespace alsim
