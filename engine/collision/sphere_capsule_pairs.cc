// Spheres and capsules against each other: all reduce to spheres placed at the closest points of
// their axis segments (a capsule is a sphere swept along a segment).
#include <cmath>

#include "engine/collision/pair_geometry.h"
#include "engine/collision/primitive_pairs.h"

namespace alsim {

using collision_detail::AddSphereSphere;
using collision_detail::AxisSegment;
using collision_detail::ClosestParamOnSegment;
using collision_detail::ClosestSegmentParams;
using collision_detail::FlipNormals;
using collision_detail::PointAt;
using collision_detail::Segment;
using collision_detail::SolveSwapped;

namespace {

// Below this sine of the angle between two capsule axes, a capsule lying along another gets a
// second contact point, so that the line contact has support at both ends.
constexpr double kParallelSine = 0.05;

}  // namespace

// Coincident centers have no preferred direction; world z stands in.
int CollideSphereSphere(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  if (SolveSwapped(a, b)) return FlipNormals(out, CollideSphereSphere(b, a, margin, out));
  return AddSphereSphere(a.pos, a.size[0], b.pos, b.size[0], Vec3::UnitZ(), margin, out, 0);
}

// The sphere against the sphere of the capsule's axis point closest to the sphere's center.
int CollideSphereCapsule(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Segment axis = AxisSegment(b);
  const Vec3 closest = PointAt(axis, ClosestParamOnSegment(axis, a.pos));
  // A sphere centered on the axis: push across the axis (b's local x).
  return AddSphereSphere(a.pos, a.size[0], closest, b.size[0], b.rot.col(0), margin, out, 0);
}

// The spheres at the closest points of the two axes. When the axes are nearly parallel, a second
// pair at the far end of the stretch of a's axis that lies alongside b's axis.
int CollideCapsuleCapsule(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  if (SolveSwapped(a, b)) return FlipNormals(out, CollideCapsuleCapsule(b, a, margin, out));
  const Segment sa = AxisSegment(a);
  const Segment sb = AxisSegment(b);
  const double ra = a.size[0];
  const double rb = b.size[0];
  double s = 0;
  double t = 0;
  ClosestSegmentParams(sa, sb, &s, &t);
  // Crossing axes have no preferred direction: their common perpendicular stands in.
  Vec3 fallback = a.rot.col(2).cross(b.rot.col(2));
  fallback = fallback.norm() > 1e-12 ? Vec3(fallback.normalized()) : Vec3(a.rot.col(0));
  const int count =
      AddSphereSphere(PointAt(sa, s), ra, PointAt(sb, t), rb, fallback, margin, out, 0);
  if (count == 0 || a.rot.col(2).cross(b.rot.col(2)).norm() > kParallelSine) return count;

  // Parameters on a's axis of the feet of b's end points: a's stretch alongside b.
  const Vec3 da = sa.p1 - sa.p0;
  const double len2 = da.squaredNorm();
  if (len2 < 1e-30) return count;
  const double f0 = (sb.p0 - sa.p0).dot(da) / len2;
  const double f1 = (sb.p1 - sa.p0).dot(da) / len2;
  const double lo = std::max(0.0, std::min(f0, f1));
  const double hi = std::min(1.0, std::max(f0, f1));
  if (hi < lo) return count;
  const double far = std::abs(hi - s) > std::abs(lo - s) ? hi : lo;
  if (std::abs(far - s) * std::sqrt(len2) < 1e-9) return count;
  const Vec3 pa = PointAt(sa, far);
  const Vec3 pb = PointAt(sb, ClosestParamOnSegment(sb, pa));
  return AddSphereSphere(pa, ra, pb, rb, fallback, margin, out, count);
}

}  // namespace alsim
