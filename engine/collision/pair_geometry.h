// Geometric helpers shared by the primitive pair functions (internal to engine/collision).
#pragma once

#include <algorithm>
#include <cmath>

#include "engine/collision/narrowphase.h"

namespace alsim::collision_detail {

// A segment: the axis of a capsule or cylinder, from center - half*axis to center + half*axis.
struct Segment {
  Vec3 p0;
  Vec3 p1;
};

// The axis segment of a capsule or cylinder (size = radius, half-length along local z).
inline Segment AxisSegment(const GeomShape& g) {
  const Vec3 half = g.rot.col(2) * g.size[1];
  return {g.pos - half, g.pos + half};
}

// Appends a contact to out[0..count) if it lies within the margin and there is room; returns the
// new count.
inline int AddContact(double dist, const Vec3& pos, const Vec3& normal, double margin, Contact* out,
                      int count) {
  if (!(dist < margin) || count >= kMaxContactsPerPair) return count;
  Contact& c = out[count];
  c.dist = dist;
  c.pos = pos;
  c.normal = normal;
  return count + 1;
}

// Two spheres (centers ca, cb, radii ra, rb): the normal joins the centers; the midpoint between
// the surfaces lies on that line. Coincident centers fall back to `fallback_normal`.
inline int AddSphereSphere(const Vec3& ca, double ra, const Vec3& cb, double rb,
                           const Vec3& fallback_normal, double margin, Contact* out, int count) {
  const Vec3 d = cb - ca;
  const double center_dist = d.norm();
  const Vec3 normal = center_dist > 1e-15 ? Vec3(d / center_dist) : fallback_normal;
  const double dist = center_dist - ra - rb;
  return AddContact(dist, ca + normal * (ra + dist / 2), normal, margin, out, count);
}

// Parameter t in [0, 1] of the point of segment s closest to p.
inline double ClosestParamOnSegment(const Segment& s, const Vec3& p) {
  const Vec3 d = s.p1 - s.p0;
  const double len2 = d.squaredNorm();
  if (len2 < 1e-30) return 0;
  return std::clamp((p - s.p0).dot(d) / len2, 0.0, 1.0);
}

inline Vec3 PointAt(const Segment& s, double t) { return s.p0 + t * (s.p1 - s.p0); }

// Parameters (s on a, t on b) of the closest points of two segments. Minimizes
// |a(s) - b(t)|^2 over the unit square: the unconstrained minimum is clamped and each parameter is
// re-optimized against the other (exact for convex quadratics on a box, Ericson 5.1.9). Parallel
// segments get s = 0 clamped into the overlap, a deterministic choice among equal minima.
inline void ClosestSegmentParams(const Segment& a, const Segment& b, double* s_out, double* t_out) {
  const Vec3 da = a.p1 - a.p0;
  const Vec3 db = b.p1 - b.p0;
  const Vec3 r = a.p0 - b.p0;
  const double aa = da.squaredNorm();
  const double bb = db.squaredNorm();
  const double ab = da.dot(db);
  const double ar = da.dot(r);
  const double br = db.dot(r);
  constexpr double kTiny = 1e-30;
  double s = 0;
  double t = 0;
  if (aa < kTiny && bb < kTiny) {
    // Both are points.
  } else if (aa < kTiny) {
    t = std::clamp(br / bb, 0.0, 1.0);
  } else if (bb < kTiny) {
    s = std::clamp(-ar / aa, 0.0, 1.0);
  } else {
    const double denom = aa * bb - ab * ab;  // >= 0, zero when parallel
    s = denom > 1e-14 * aa * bb ? std::clamp((ab * br - ar * bb) / denom, 0.0, 1.0) : 0.0;
    t = (ab * s + br) / bb;
    if (t < 0) {
      t = 0;
      s = std::clamp(-ar / aa, 0.0, 1.0);
    } else if (t > 1) {
      t = 1;
      s = std::clamp((ab - ar) / aa, 0.0, 1.0);
    }
  }
  *s_out = s;
  *t_out = t;
}

// A unit vector perpendicular to the unit vector n (deterministic).
inline Vec3 AnyPerpendicular(const Vec3& n) {
  const Vec3 helper = std::abs(n.x()) < 0.6 ? Vec3::UnitX() : Vec3::UnitY();
  return n.cross(helper).normalized();
}

// Pairs of the same type are solved in a fixed order of the two geoms, so that swapping them
// flips the normals and changes nothing else (bit for bit). True when b goes first: the order is
// lexicographic over position, orientation and size.
inline bool SolveSwapped(const GeomShape& a, const GeomShape& b) {
  const double* pa[] = {a.pos.data(), a.rot.data(), a.size.data()};
  const double* pb[] = {b.pos.data(), b.rot.data(), b.size.data()};
  const int lengths[] = {3, 9, 3};
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < lengths[k]; ++i) {
      if (pa[k][i] != pb[k][i]) return pb[k][i] < pa[k][i];
    }
  }
  return false;
}

// Reverses the normals of out[0..count) (the contacts of the swapped pair); returns count.
inline int FlipNormals(Contact* out, int count) {
  for (int i = 0; i < count; ++i) out[i].normal = -out[i].normal;
  return count;
}

}  // namespace alsim::collision_detail
