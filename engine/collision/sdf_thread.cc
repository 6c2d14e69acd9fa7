#include "engine/collision/sdf_thread.h"

#include <algorithm>
#include <cmath>

namespace alsim {
namespace {

using Vec2 = Eigen::Vector2d;

constexpr double kPi = 3.14159265358979323846;
// The ISO 68-1 basic profile in units of the pitch: H / P, and the depth of the basic thread
// (crest to root flat), 5H/8, which gives d1 = d - 2 (5H/8) = d - 1.082532 P.
const double kTriangleHeight = std::sqrt(3.0) / 2;
const double kDepth = 5.0 / 8 * kTriangleHeight;

// The nearest feature of the half-period profile to q = (r, w), w in [0, P/2]: its unsigned
// distance, the unit direction from it toward q (the segment's outward normal on the curve) and
// whether q lies inside the thread (r < R(w)).
struct ProfileDistance {
  double distance = 0;
  Vec2 direction = Vec2::UnitX();
};

// The outward (larger r) unit normal of a segment p0 -> p1 traversed with w increasing: the right
// normal (e_w, -e_r) / |e|.
Vec2 OutwardNormal(const Vec2& e) { return Vec2(e.y(), -e.x()) / e.norm(); }

// The planar distance from q to the closed segment p0-p1, with the unit direction from its nearest
// point toward q. Inside the segment's span the offset along the outward normal n, s = n.(q - p0),
// by the cross product, so that near the segment the direction stays sign(s) n (n at s = 0) rather
// than rounding noise along it; beyond an end, that end, and on it the normal.
ProfileDistance DistanceToSegment(const Vec2& q, const Vec2& p0, const Vec2& p1) {
  ProfileDistance result;
  const Vec2 e = p1 - p0, w = q - p0;
  const double along = w.dot(e), length2 = e.squaredNorm();
  if (along <= 0 || along >= length2) {
    const Vec2 offset = along <= 0 ? w : Vec2(q - p1);
    result.distance = offset.norm();
    result.direction = result.distance > 0 ? Vec2(offset / result.distance) : OutwardNormal(e);
    return result;
  }
  const double length = std::sqrt(length2);
  const double s = (e.y() * w.x() - e.x() * w.y()) / length;
  const Vec2 n = OutwardNormal(e);
  result.distance = std::abs(s);
  result.direction = s < 0 ? Vec2(-n) : n;
  return result;
}

// The thread's term: s(r, u) of the header and its planar gradient (g_r, g_u), for the profile of
// major radius r_maj, pitch P.
struct ThreadTerm {
  double value = 0;
  double g_r = 1;
  double g_u = 0;
};

ThreadTerm ThreadDistance(double r, double u, double r_maj, double pitch) {
  // u reduced to [-P/2, P/2), then folded onto w = |u| with the side kept for g_u's sign; u = 0
  // folds to the u >= 0 side.
  const double reduced = u - pitch * std::floor(u / pitch + 0.5);
  const double side = reduced < 0 ? -1.0 : 1.0;
  const double w = std::abs(reduced);
  const double r_min = r_maj - kDepth * pitch;
  const Vec2 crest_center(r_maj, 0), crest_end(r_maj, pitch / 16);
  const Vec2 root_start(r_min, 3 * pitch / 8), root_center(r_min, pitch / 2);
  const Vec2 q(r, w);
  // Ties go to the earlier segment: crest, flank, root.
  ProfileDistance nearest = DistanceToSegment(q, crest_center, crest_end);
  const ProfileDistance flank = DistanceToSegment(q, crest_end, root_start);
  if (flank.distance < nearest.distance) nearest = flank;
  const ProfileDistance root = DistanceToSegment(q, root_start, root_center);
  if (root.distance < nearest.distance) nearest = root;
  // Inside is r < R(w); the flank's R is linear in w between its ends.
  double profile_radius = r_maj;
  if (w >= root_start.y()) {
    profile_radius = r_min;
  } else if (w > crest_end.y()) {
    profile_radius =
        r_maj - (w - crest_end.y()) * (r_maj - r_min) / (root_start.y() - crest_end.y());
  }
  ThreadTerm term;
  if (r < profile_radius) {
    term.value = -nearest.distance;
    // Inside the thread the direction toward q points inward; grad s points away from it. A
    // segment's interior gave sign(s) n = -n there, so -direction is n again.
    term.g_r = -nearest.direction.x();
    term.g_u = -nearest.direction.y() * side;
  } else {
    term.value = nearest.distance;
    term.g_r = nearest.direction.x();
    term.g_u = nearest.direction.y() * side;
  }
  return term;
}

}  // namespace

bool SdfThread::IsValid() const {
  return std::isfinite(pitch) && pitch > 0 && std::isfinite(major_diameter) &&
         major_diameter > 2 * kDepth * pitch && std::isfinite(z0) && std::isfinite(z1) && z0 < z1;
}

double SdfThread::MinorDiameter() const { return major_diameter - 2 * kDepth * pitch; }

double SdfThread::Distance(const Vec3& p) const {
  Vec3 gradient;
  return DistanceAndGradient(p, &gradient);
}

double SdfThread::DistanceAndGradient(const Vec3& p, Vec3* gradient) const {
  const double r = std::sqrt(p.x() * p.x() + p.y() * p.y());
  const double lead = right_handed ? pitch / (2 * kPi) : -pitch / (2 * kPi);  // h b
  const double theta = std::atan2(p.y(), p.x());
  const ThreadTerm thread = ThreadDistance(r, p.z() - lead * theta, major_diameter / 2, pitch);
  const double below = z0 - p.z(), above = p.z() - z1;
  const double slab = std::max(below, above);
  if (slab > thread.value) {
    *gradient = Vec3(0, 0, below >= above ? -1 : 1);
    return slab;
  }
  // grad phi_T = g_r e_r + g_u (e_z - h (b / r) e_theta), e_theta = (-y, x) / r; on the axis,
  // (g_r, 0, g_u).
  if (r > 0) {
    const double radial = thread.g_r / r, twist = thread.g_u * lead / (r * r);
    *gradient = Vec3(radial * p.x() + twist * p.y(), radial * p.y() - twist * p.x(), thread.g_u);
  } else {
    *gradient = Vec3(thread.g_r, 0, thread.g_u);
  }
  return thread.value;
}

double SdfThread::BoundingRadius() const {
  return std::hypot(major_diameter / 2, std::max(std::abs(z0), std::abs(z1)));
}

SdfBox SdfThread::LocalBox() const {
  const double r_maj = major_diameter / 2;
  return SdfBox{Vec3(-r_maj, -r_maj, z0), Vec3(r_maj, r_maj, z1)};
}

}  // namespace alsim
