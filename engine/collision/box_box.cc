// Box against box by the separating axis theorem: two boxes are disjoint iff their projections
// are disjoint on one of 15 axes (3 face normals of each box, 9 cross products of an edge of each).
// The axis of largest separation (least penetration) gives the normal and the distance; a face
// axis makes a face-face contact (the other box's most opposed face clipped to the reference face
// gives the contact polygon), an edge axis an edge-edge contact at the edges' closest points.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/collision/convex_pairs.h"
#include "engine/collision/gjk_distance.h"
#include "engine/collision/pair_geometry.h"
#include "engine/collision/primitive_pairs.h"

namespace alsim {

using collision_detail::AddContact;
using collision_detail::ClosestSegmentParams;
using collision_detail::PointAt;
using collision_detail::Segment;

namespace {

// Axes are tried in a fixed order (a's face normals, b's face normals, the edge pairs), and a
// later axis must beat the best one so far by kAxisBias (m) to replace it; only a's face normals
// compete among themselves without it. Two boxes resting face to face have nearly equal
// separations along both faces' normals, and along the cross products of edges that lie in
// those faces; whichever won by rounding picked the contact, and the reference faces' clipped
// polygons differ (and an edge pair gives one point) when the faces are tilted against each
// other. On humanoid100 two resting boxes had a contact that appeared and vanished every few
// steps, so it had no warm start. With the bias the reported distance is at most 1 um deeper
// than the separating axis's.
constexpr double kAxisBias = 1e-6;

// Deep overlaps (a box driven into another by an impact, or placed inside it) prefer a face axis:
// past kDeepOverlap of penetration, an edge pair must beat the best face axis by kDeepEdgeBias
// times the penetration beyond it. An edge pair gives one contact point, and removing the
// overlap through one point turns the box about it, so the deepest point moves to the opposite
// corner and the next step turns it back; a face gives the clipped polygon, several points, and
// the correction moves the box out. Below kDeepOverlap the least penetration axis wins, as MuJoCo.
constexpr double kDeepOverlap = 0.01;
constexpr double kDeepEdgeBias = 0.25;

struct Box {
  Vec3 center;
  Mat3 axes;  // columns: unit local axes in the world frame
  Vec3 half;
};

// Half-length of the box's projection on the unit axis.
double ProjectedRadius(const Box& box, const Vec3& axis) {
  return box.half.dot((box.axes.transpose() * axis).cwiseAbs());
}

// The best separating axis found so far.
struct BestAxis {
  double separation = -std::numeric_limits<double>::infinity();
  Vec3 normal = Vec3::UnitZ();  // unit, from a toward b
  int kind = -1;                // 0: face of a (index), 1: face of b, 2: edge pair
  int index_a = 0;
  int index_b = 0;
  bool deep_face = false;  // a face kept over an edge pair by kDeepEdgeBias
};

// Separation of the boxes along a unit axis, with the axis oriented from a toward b.
double SeparationAlong(const Box& a, const Box& b, const Vec3& axis, Vec3* oriented) {
  const double along = axis.dot(b.center - a.center);
  *oriented = along >= 0 ? axis : Vec3(-axis);
  return std::abs(along) - ProjectedRadius(a, axis) - ProjectedRadius(b, axis);
}

BestAxis FindBestAxis(const Box& a, const Box& b) {
  BestAxis best;
  for (int kind = 0; kind < 2; ++kind) {
    for (int i = 0; i < 3; ++i) {
      const Vec3 axis = (kind == 0 ? a : b).axes.col(i);
      Vec3 oriented;
      const double sep = SeparationAlong(a, b, axis, &oriented);
      const double bias = kind == 1 && best.kind == 0 ? kAxisBias : 0.0;
      if (sep > best.separation + bias) best = {sep, oriented, kind, i, i};
    }
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const Vec3 cross = a.axes.col(i).cross(b.axes.col(j));
      const double len = cross.norm();
      if (len < 1e-6) continue;  // parallel edges: a face axis covers this direction
      Vec3 oriented;
      const double sep = SeparationAlong(a, b, cross / len, &oriented);
      // The deep bias weighs an edge pair against a face only; edge pairs compete as a's faces do.
      const double deep_bias =
          best.kind == 2 ? 0.0 : kDeepEdgeBias * std::max(0.0, -best.separation - kDeepOverlap);
      if (sep > best.separation + kAxisBias + deep_bias) {
        best = {sep, oriented, 2, i, j};
      } else if (best.kind != 2 && sep > best.separation + kAxisBias) {
        best.deep_face = true;
      }
    }
  }
  return best;
}

// The four corners, in order around the face, of the face of `box` with outward normal
// outward_sign * axes.col(axis).
void FaceCorners(const Box& box, int axis, double outward_sign, Vec3 corners[4]) {
  const int u = (axis + 1) % 3;
  const int v = (axis + 2) % 3;
  const Vec3 center = box.center + box.axes.col(axis) * (outward_sign * box.half[axis]);
  const Vec3 du = box.axes.col(u) * box.half[u];
  const Vec3 dv = box.axes.col(v) * box.half[v];
  corners[0] = center + du + dv;
  corners[1] = center - du + dv;
  corners[2] = center - du - dv;
  corners[3] = center + du - dv;
}

// Sutherland-Hodgman: keeps the part of the convex polygon in[0..n) where dir . p <= limit.
int ClipPolygon(const Vec3* in, int n, const Vec3& dir, double limit, Vec3* out) {
  int m = 0;
  for (int k = 0; k < n; ++k) {
    const Vec3& p = in[k];
    const Vec3& q = in[(k + 1) % n];
    const double dp = dir.dot(p) - limit;
    const double dq = dir.dot(q) - limit;
    if (dp <= 0) out[m++] = p;
    if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) out[m++] = p + (q - p) * (dp / (dp - dq));
  }
  return m;
}

// Face-face: `ref` owns the face whose outward normal is ref_out; `inc` is the other box, whose
// face most opposed to ref_out is clipped to the prism over the reference face. Each clipped
// point is a contact at its height above the reference face. `normal` is the contact normal from
// a toward b (ref_out when ref is a, -ref_out when ref is b); `separation` is the axis's.
int FaceContacts(const Box& ref, int ref_axis, const Vec3& ref_out, const Box& inc,
                 const Vec3& normal, double separation, double margin, Contact* out) {
  // Incident face: the face of inc whose outward normal is most opposed to ref_out.
  const Vec3 alignment = inc.axes.transpose() * ref_out;
  int inc_axis = 0;
  alignment.cwiseAbs().maxCoeff(&inc_axis);
  const double inc_sign = alignment[inc_axis] > 0 ? -1.0 : 1.0;
  Vec3 polygon[8];
  Vec3 scratch[8];
  FaceCorners(inc, inc_axis, inc_sign, polygon);
  int n = 4;
  // Clip against the 4 side planes of the reference face: |u . (p - c)| <= h_u, same for v.
  for (int side = 1; side <= 2 && n > 0; ++side) {
    const int k = (ref_axis + side) % 3;
    const Vec3 dir = ref.axes.col(k);
    const double c = dir.dot(ref.center);
    n = ClipPolygon(polygon, n, dir, c + ref.half[k], scratch);
    n = ClipPolygon(scratch, n, -dir, -c + ref.half[k], polygon);
  }
  const Vec3 face_point = ref.center + ref_out * ref.half[ref_axis];
  // Midpoint between an incident point and its projection onto the reference face.
  const double toward_inc = normal.dot(ref_out);  // +1 when ref is a, -1 when ref is b
  int count = 0;
  double deepest = std::numeric_limits<double>::infinity();
  for (int k = 0; k < n; ++k) {
    const double dist = ref_out.dot(polygon[k] - face_point);
    deepest = std::min(deepest, dist);
    count =
        AddContact(dist, polygon[k] - normal * (toward_inc * dist / 2), normal, margin, out, count);
  }
  if (count > 0 || deepest <= separation + 1e-12) return count;
  // No clipped point is within the margin, and inc's corner nearest the reference plane, which
  // lies at the axis's separation, is outside the prism over the reference face (the boxes meet
  // beside the face, e.g. separated and offset sideways): that corner is the contact, so that the
  // deepest point is the separating axis's. (When clipped points are in contact, such a corner
  // hangs past the face's edge, where it touches nothing: a box overhanging another, tilted by
  // microradians, had got a contact there.)
  Vec3 corner = inc.center;
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = inc.axes.col(k);
    corner -= e * (ref_out.dot(e) >= 0 ? inc.half[k] : -inc.half[k]);
  }
  const Vec3 pos = corner - normal * (toward_inc * separation / 2);
  return AddContact(separation, pos, normal, margin, out, 0);
}

// The edge of `box` along axes.col(axis) that reaches farthest along `dir`.
Segment SupportEdge(const Box& box, int axis, const Vec3& dir) {
  Vec3 mid = box.center;
  for (int k = 0; k < 3; ++k) {
    if (k == axis) continue;
    const Vec3 e = box.axes.col(k);
    mid += e * (dir.dot(e) >= 0 ? box.half[k] : -box.half[k]);
  }
  const Vec3 half_edge = box.axes.col(axis) * box.half[axis];
  return {mid - half_edge, mid + half_edge};
}

// Edge-edge: the closest points of a's edge reaching toward b and b's edge reaching toward a.
int EdgeContact(const Box& a, const Box& b, const BestAxis& best, double margin, Contact* out) {
  const Segment ea = SupportEdge(a, best.index_a, best.normal);
  const Segment eb = SupportEdge(b, best.index_b, -best.normal);
  double s = 0;
  double t = 0;
  ClosestSegmentParams(ea, eb, &s, &t);
  const Vec3 pos = (PointAt(ea, s) + PointAt(eb, t)) / 2;
  return AddContact(best.separation, pos, best.normal, margin, out, 0);
}

Vec3 ShapeSupport(const void* shape, const Vec3& dir) {
  return SupportPoint(*static_cast<const GeomShape*>(shape), dir);
}

// The distance between separated boxes, by GJK (exact on polytopes); `lower_bound` (a separating
// axis's separation) if GJK finds them touching.
double SeparatedDistance(const GeomShape& a, const GeomShape& b, double lower_bound) {
  const GjkDistanceResult gjk = GjkDistance({ShapeSupport, &a, a.pos}, {ShapeSupport, &b, b.pos});
  return gjk.separated ? std::max(gjk.distance, lower_bound) : lower_bound;
}

}  // namespace

int CollideBoxBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  if (collision_detail::SolveSwapped(a, b)) {
    return collision_detail::FlipNormals(out, CollideBoxBox(b, a, margin, out));
  }
  const Box box_a{a.pos, a.rot, a.size};
  const Box box_b{b.pos, b.rot, b.size};
  const BestAxis best = FindBestAxis(box_a, box_b);
  if (!(best.separation < margin)) return 0;
  int n = 0;
  switch (best.kind) {
    case 0:
      n = FaceContacts(box_a, best.index_a, best.normal, box_b, best.normal, best.separation,
                       margin, out);
      break;
    case 1:
      n = FaceContacts(box_b, best.index_b, -best.normal, box_a, best.normal, best.separation,
                       margin, out);
      break;
    default:
      return EdgeContact(box_a, box_b, best, margin, out);
  }
  // A deep face contact's clipped polygon may have lost the incident box's deepest corner (it lies
  // beyond the reference face's sides): its deepest point then reports the face axis's separation,
  // the translation along the normal that separates the boxes.
  if (n == 0) return 0;
  Contact* deepest = std::min_element(
      out, out + n, [](const Contact& x, const Contact& y) { return x.dist < y.dist; });
  if (best.deep_face) deepest->dist = std::min(deepest->dist, best.separation);
  // Separated boxes whose clipped points stand higher than the axis's separation: the incident
  // box's lowest corner is beside the reference face, and the closest features are not face to
  // face (a corner or an edge against the face's edge). The clipped height then overstates the
  // distance (the contact would wake too late); the deepest point reports the true distance,
  // which lies between the two and joins the clipped height continuously as the corner enters
  // the prism over the face.
  if (best.separation > 0 && deepest->dist > best.separation + kAxisBias) {
    deepest->dist = std::min(deepest->dist, SeparatedDistance(a, b, best.separation));
  }
  return n;
}

}  // namespace alsim
