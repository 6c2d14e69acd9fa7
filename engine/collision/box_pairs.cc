// Sphere and capsule against a box. Both work in the box frame, where the box is the axis-aligned
// set |x_i| <= h_i and the closest box point to any point p is p clamped to it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "engine/collision/pair_geometry.h"
#include "engine/collision/primitive_pairs.h"

namespace alsim {

using collision_detail::AddContact;
using collision_detail::Segment;

namespace {

// Below this sine of the angle between the capsule axis and a box face, a capsule lying on the
// face gets a second contact point at the other end of its stretch over the face.
constexpr double kFlatSine = 0.05;

// cos(1 mrad): FaceAlongNormal.
constexpr double kFaceNormalCosine = 1 - 5e-7;

Vec3 ClampToBox(const Vec3& p, const Vec3& half) { return p.cwiseMax(-half).cwiseMin(half); }

// A sphere (center c, radius r, box frame) whose center is inside the box: it leaves through the
// nearest face. Returns the box-frame normal from the sphere toward the box (the box moves away
// from that face) and the signed distance.
void InsideBoxNearestFace(const Vec3& c, const Vec3& half, double r, Vec3* normal, double* dist) {
  int face = 0;
  double depth = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 3; ++i) {
    const double to_face = half[i] - std::abs(c[i]);
    if (to_face < depth) {
      depth = to_face;
      face = i;
    }
  }
  *normal = Vec3::Zero();
  (*normal)[face] = c[face] >= 0 ? -1.0 : 1.0;
  *dist = -depth - r;
}

}  // namespace

// The box point closest to the sphere's center, or the nearest face when the center is inside.
int CollideSphereBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Vec3 c = b.rot.transpose() * (a.pos - b.pos);
  const double r = a.size[0];
  const Vec3 to_box = ClampToBox(c, b.size) - c;
  const double gap = to_box.norm();
  Vec3 normal_local = Vec3::UnitZ();
  double dist = 0;
  if (gap > 0) {
    normal_local = to_box / gap;
    dist = gap - r;
  } else {
    InsideBoxNearestFace(c, b.size, r, &normal_local, &dist);
  }
  const Vec3 normal = b.rot * normal_local;
  return AddContact(dist, a.pos + normal * (r + dist / 2), normal, margin, out, 0);
}

namespace {

// Squared distance from p (box frame) to the box.
double SquaredDistanceToBox(const Vec3& p, const Vec3& half) {
  return (p - ClampToBox(p, half)).squaredNorm();
}

// The parameter t in [0, 1] minimizing the distance from p0 + t d (box frame) to the box. The
// squared distance sum_i max(0, |x_i(t)| - h_i)^2 is a convex quadratic between the parameters
// where x_i(t) = +-h_i; each piece is minimized in closed form and the best piece wins.
double ClosestParamSegmentBox(const Vec3& p0, const Vec3& d, const Vec3& half) {
  double breaks[8];
  int nbreaks = 0;
  breaks[nbreaks++] = 0;
  for (int i = 0; i < 3; ++i) {
    if (d[i] == 0) continue;
    for (double sign : {-1.0, 1.0}) {
      const double t = (sign * half[i] - p0[i]) / d[i];
      if (t > 0 && t < 1) breaks[nbreaks++] = t;
    }
  }
  breaks[nbreaks++] = 1;
  // Insertion sort (at most 8 values).
  for (int i = 1; i < nbreaks; ++i) {
    for (int j = i; j > 0 && breaks[j] < breaks[j - 1]; --j) std::swap(breaks[j], breaks[j - 1]);
  }

  double best_t = 0;
  double best = SquaredDistanceToBox(p0, half);
  for (int k = 0; k + 1 < nbreaks; ++k) {
    const double t0 = breaks[k];
    const double t1 = breaks[k + 1];
    // The piece's quadratic sum over the coordinates outside their slab at the middle.
    const Vec3 mid = p0 + d * ((t0 + t1) / 2);
    double qa = 0;
    double qb = 0;
    for (int i = 0; i < 3; ++i) {
      if (std::abs(mid[i]) <= half[i]) continue;
      const double offset = p0[i] - std::copysign(half[i], mid[i]);
      qa += d[i] * d[i];
      qb += 2 * d[i] * offset;
    }
    const double t = qa > 0 ? std::clamp(-qb / (2 * qa), t0, t1) : t0;
    const double value = SquaredDistanceToBox(p0 + d * t, half);
    if (value < best) {
      best = value;
      best_t = t;
    }
  }
  const double end = SquaredDistanceToBox(p0 + d, half);
  return end < best ? 1.0 : best_t;
}

// A segment (box frame) that reaches into the box: the separating axis of least overlap among
// the box's face normals and the cross products of the segment with the box's edges. Returns the
// box-frame normal from the segment toward the box, the overlap depth and the segment point that
// reaches deepest into the box.
void SegmentInBoxPenetration(const Vec3& p0, const Vec3& p1, const Vec3& half, Vec3* normal,
                             double* depth, Vec3* deepest) {
  Vec3 axes[6];
  int naxes = 0;
  for (int i = 0; i < 3; ++i) axes[naxes++] = Vec3::Unit(i);
  const Vec3 d = p1 - p0;
  for (int i = 0; i < 3; ++i) {
    const Vec3 c = d.cross(Vec3::Unit(i));
    if (c.norm() > 1e-9 * d.norm()) axes[naxes++] = c.normalized();
  }
  *depth = std::numeric_limits<double>::infinity();
  for (int k = 0; k < naxes; ++k) {
    const Vec3& axis = axes[k];
    const double box_reach = half.dot(axis.cwiseAbs());
    const double seg_lo = std::min(axis.dot(p0), axis.dot(p1));
    const double seg_hi = std::max(axis.dot(p0), axis.dot(p1));
    // Pushing the segment up past the box's top, or down past its bottom.
    const double up = box_reach - seg_lo;
    const double down = seg_hi + box_reach;
    const double overlap = std::min(up, down);
    if (overlap < *depth - 1e-12) {
      *depth = overlap;
      // The box moves opposite to the segment: down when the segment goes up.
      *normal = up <= down ? Vec3(-axis) : Vec3(axis);
    }
  }
  *deepest = normal->dot(p0) >= normal->dot(p1) ? p0 : p1;
}

// When the capsule lies on the box's face normal to e_`face` (FaceAlongNormal) and the segment
// runs along that face, the far end (from t_closest) of the stretch of the segment that lies over
// the face. Returns false when there is no such distinct point.
bool FlatSecondParam(const Vec3& p0, const Vec3& d, const Vec3& half, int face, double t_closest,
                     double* t_far) {
  if (std::abs(d[face]) > kFlatSine * d.norm()) return false;
  double lo = 0;
  double hi = 1;
  for (int j = 0; j < 3; ++j) {
    if (j == face) continue;
    if (d[j] == 0) {
      if (std::abs(p0[j]) > half[j]) return false;
      continue;
    }
    const double ta = (-half[j] - p0[j]) / d[j];
    const double tb = (half[j] - p0[j]) / d[j];
    lo = std::max(lo, std::min(ta, tb));
    hi = std::min(hi, std::max(ta, tb));
  }
  if (hi < lo) return false;
  *t_far = std::abs(hi - t_closest) > std::abs(lo - t_closest) ? hi : lo;
  return std::abs(*t_far - t_closest) * d.norm() > 1e-9;
}

// The face of the box whose normal the contact normal (box frame) lies within 1 mrad of, else -1.
// The capsule then lies on that face, or across one of its edges nearly flat: on humanoid100 a
// shin lying across a box past an edge, tilted down by microradians beyond it, had its closest
// point just past the edge (outside the face by 1e-9 m), and with the face test on that point
// it got no second point; its one contact jumped from one end of its stretch over the face to
// the other, losing its warm start each time.
int FaceAlongNormal(const Vec3& normal_local) {
  int face = 0;
  normal_local.cwiseAbs().maxCoeff(&face);
  return std::abs(normal_local[face]) >= kFaceNormalCosine ? face : -1;
}

}  // namespace

// The closest points of the capsule's axis segment and the box (exact, piecewise quadratic); when
// the axis reaches into the box, the separating axis of least overlap. A capsule lying flat on a
// face gets a second point at the other end of its stretch over the face.
int CollideCapsuleBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Mat3 rt = b.rot.transpose();
  const Segment axis = collision_detail::AxisSegment(a);
  const Vec3 p0 = rt * (axis.p0 - b.pos);
  const Vec3 d = rt * (axis.p1 - axis.p0);
  const double r = a.size[0];

  const double t = ClosestParamSegmentBox(p0, d, b.size);
  const Vec3 p = p0 + d * t;
  const Vec3 to_box = ClampToBox(p, b.size) - p;
  const double gap = to_box.norm();
  if (gap == 0) {
    Vec3 normal_local = Vec3::UnitZ();
    double depth = 0;
    Vec3 deepest = p0;
    SegmentInBoxPenetration(p0, p0 + d, b.size, &normal_local, &depth, &deepest);
    const Vec3 normal = b.rot * normal_local;
    const double dist = -depth - r;
    return AddContact(dist, b.pos + b.rot * deepest + normal * (r + dist / 2), normal, margin, out,
                      0);
  }
  const Vec3 normal_local = to_box / gap;
  const Vec3 normal = b.rot * normal_local;
  const double dist = gap - r;
  int count = AddContact(dist, b.pos + b.rot * p + normal * (r + dist / 2), normal, margin, out, 0);

  const int face = FaceAlongNormal(normal_local);
  double t_far = 0;
  if (count == 0 || face < 0 || !FlatSecondParam(p0, d, b.size, face, t, &t_far)) return count;
  // Height of the far axis point above the face plane, measured along the face normal.
  const double outward = p[face] > 0 ? 1.0 : -1.0;
  const Vec3 q = p0 + d * t_far;
  const double far_dist = outward * q[face] - b.size[face] - r;
  const Vec3 face_normal = b.rot * (Vec3::Unit(face) * -outward);
  const Vec3 pos = b.pos + b.rot * q + face_normal * (r + far_dist / 2);
  return AddContact(far_dist, pos, face_normal, margin, out, count);
}

}  // namespace alsim
