// Plane against sphere, capsule, ellipsoid, cylinder, box and convex mesh.
//
// A plane is the half-space below the plane through a.pos with normal n = a.rot.col(2); the signed
// distance of a point p of b's surface is n . (p - a.pos). The contact normal (from the plane
// toward b) is n, and the midpoint between the surfaces is p - n dist / 2.
#include <cmath>
#include <limits>

#include "engine/collision/pair_geometry.h"
#include "engine/collision/primitive_pairs.h"

namespace alsim {

using collision_detail::AddContact;

namespace {

// A point of b's surface at signed height `dist` above the plane.
int AddSurfacePoint(const GeomShape& plane, const Vec3& point, double margin, Contact* out,
                    int count) {
  const Vec3 n = plane.rot.col(2);
  const double dist = n.dot(point - plane.pos);
  return AddContact(dist, point - n * (dist / 2), n, margin, out, count);
}

// The n <= 8 points of b's surface with their heights (any common offset) that lie within the
// margin, deepest first; ties keep their order (an insertion sort of indices: std::stable_sort
// may allocate).
int AddSurfacePointsDeepestFirst(const GeomShape& plane, const Vec3* points, const double* heights,
                                 int n, double margin, Contact* out) {
  int order[8];
  for (int i = 0; i < n; ++i) {
    int j = i;
    for (; j > 0 && heights[i] < heights[order[j - 1]]; --j) order[j] = order[j - 1];
    order[j] = i;
  }
  int count = 0;
  for (int k = 0; k < n; ++k) count = AddSurfacePoint(plane, points[order[k]], margin, out, count);
  return count;
}

// A sphere of radius r at c: its lowest point is c - n r.
int AddPlaneSphere(const GeomShape& plane, const Vec3& c, double r, double margin, Contact* out,
                   int count) {
  return AddSurfacePoint(plane, c - plane.rot.col(2) * r, margin, out, count);
}

}  // namespace

int CollidePlaneSphere(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  return AddPlaneSphere(a, b.pos, b.size[0], margin, out, 0);
}

// A capsule is a swept sphere: each end cap is the lowest point somewhere, and both are when the
// capsule lies flat, which gives the line contact two points.
int CollidePlaneCapsule(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const collision_detail::Segment axis = collision_detail::AxisSegment(b);
  const Vec3 n = a.rot.col(2);
  // The lower end first, so the deepest point comes first.
  const bool p0_lower = n.dot(axis.p0) <= n.dot(axis.p1);
  const Vec3& lower = p0_lower ? axis.p0 : axis.p1;
  const Vec3& upper = p0_lower ? axis.p1 : axis.p0;
  int count = AddPlaneSphere(a, lower, b.size[0], margin, out, 0);
  if (count == 0) return 0;
  return AddPlaneSphere(a, upper, b.size[0], margin, out, count);
}

// The lowest point of the ellipsoid {R S u + c : |u| = 1} (S = diag(semi-axes)) along -n: the
// support point c + R S^2 m / |S m| with m = R^T (-n) the direction in the ellipsoid frame.
int CollidePlaneEllipsoid(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Vec3 m = b.rot.transpose() * -a.rot.col(2);
  const Vec3 sm = b.size.cwiseProduct(m);
  const Vec3 local = b.size.cwiseProduct(sm) / sm.norm();
  return AddSurfacePoint(a, b.pos + b.rot * local, margin, out, 0);
}

// The lowest point of a disk (center c, unit normal axis, radius r) lies on its rim, in the
// direction of -n projected into the disk. When the disk is parallel to the plane every rim point
// is lowest; the cylinder's local x axis then stands in.
int CollidePlaneCylinder(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Vec3 n = a.rot.col(2);
  const Vec3 axis = b.rot.col(2);
  const double radius = b.size[0];
  const double half = b.size[1];
  // The end disk nearer the plane and the other one.
  const double side = n.dot(axis) <= 0 ? 1.0 : -1.0;
  const Vec3 lower_center = b.pos + axis * (side * half);
  const Vec3 upper_center = b.pos - axis * (side * half);
  const Vec3 down_in_disk = -(n - axis * n.dot(axis));
  const double tilt = down_in_disk.norm();  // sin of the angle between the axis and n

  if (2 * radius * tilt < kFlatDiskSpread) {
    // Standing on the disk: the rim points on the cylinder's own x and y axes, deepest first.
    const Vec3 rim[4] = {lower_center + b.rot.col(0) * radius, lower_center + b.rot.col(1) * radius,
                         lower_center - b.rot.col(0) * radius,
                         lower_center - b.rot.col(1) * radius};
    double heights[4];
    for (int i = 0; i < 4; ++i) heights[i] = n.dot(rim[i]);
    return AddSurfacePointsDeepestFirst(a, rim, heights, 4, margin, out);
  }
  const Vec3 toward = down_in_disk / tilt;
  const Vec3 across = axis.cross(toward);
  // Deepest rim point of the lower disk, then (resting on that disk) the rim points at 90, 180
  // and 270 degrees from it, then (lying on the side) the deepest rim point of the upper disk.
  int count = AddSurfacePoint(a, lower_center + toward * radius, margin, out, 0);
  if (count == 0) return 0;
  count = AddSurfacePoint(a, lower_center + across * radius, margin, out, count);
  count = AddSurfacePoint(a, lower_center - toward * radius, margin, out, count);
  count = AddSurfacePoint(a, lower_center - across * radius, margin, out, count);
  return AddSurfacePoint(a, upper_center + toward * radius, margin, out, count);
}

// Every corner within the margin, deepest first: a box resting on a face gives its 4 bottom
// corners, one balanced on an edge 2, on a corner 1.
int CollidePlaneBox(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Vec3 n = a.rot.col(2);
  // Corner heights relative to the center are +-h_i (n . axis_i); the deepest corner takes the
  // sign that lowers each term.
  const Vec3 n_local = b.rot.transpose() * n;
  Vec3 corners[8];
  double heights[8];
  for (int i = 0; i < 8; ++i) {
    const Vec3 signs((i & 1) ? 1.0 : -1.0, (i & 2) ? 1.0 : -1.0, (i & 4) ? 1.0 : -1.0);
    const Vec3 local = signs.cwiseProduct(b.size);
    corners[i] = b.pos + b.rot * local;
    heights[i] = n_local.dot(local);
  }
  return AddSurfacePointsDeepestFirst(a, corners, heights, 8, margin, out);
}

namespace {

// Signed height of mesh vertex v above the plane.
double VertexHeight(const GeomShape& plane, const GeomShape& mesh, int v, Vec3* world) {
  *world = mesh.pos + mesh.rot * mesh.vertices[v];
  return plane.rot.col(2).dot(*world - plane.pos);
}

// The vertex indices to scan: hull triangle corners if MuJoCo built a hull, else all vertices.
int ScanCount(const GeomShape& mesh) {
  return mesh.hull_face_count > 0 ? 3 * mesh.hull_face_count : mesh.vertex_count;
}
int ScanVertex(const GeomShape& mesh, int k) {
  return mesh.hull_face_count > 0 ? mesh.hull_faces[k / 3][k % 3] : k;
}

}  // namespace

// Hull vertices within the margin. The deepest vertex comes first; further vertices are chosen by
// farthest-point sampling in the plane (each next one maximizes its distance, along the plane, to
// those already chosen) so that a flat face is spanned by at most kMaxContactsPerPair points.
// Candidates closer than 1e-9 m (repeated indices, duplicates) to a chosen one are skipped.
int CollidePlaneMesh(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Vec3 n = a.rot.col(2);
  const int scan = ScanCount(b);
  Vec3 chosen[kMaxContactsPerPair];
  int count = 0;
  // Deepest vertex (first index on ties).
  double best_height = std::numeric_limits<double>::infinity();
  Vec3 best_point = Vec3::Zero();
  for (int k = 0; k < scan; ++k) {
    Vec3 p;
    const double h = VertexHeight(a, b, ScanVertex(b, k), &p);
    if (h < best_height) {
      best_height = h;
      best_point = p;
    }
  }
  count = AddSurfacePoint(a, best_point, margin, out, count);
  if (count == 0) return 0;
  chosen[0] = best_point;
  constexpr double kDuplicate = 1e-9;
  while (count < kMaxContactsPerPair) {
    double best_spread = kDuplicate;
    bool found = false;
    for (int k = 0; k < scan; ++k) {
      Vec3 p;
      if (!(VertexHeight(a, b, ScanVertex(b, k), &p) < margin)) continue;
      double spread = std::numeric_limits<double>::infinity();
      for (int c = 0; c < count; ++c) {
        const Vec3 d = p - chosen[c];
        spread = std::min(spread, (d - n * n.dot(d)).norm());
      }
      if (spread > best_spread) {
        best_spread = spread;
        best_point = p;
        found = true;
      }
    }
    if (!found) break;
    chosen[count] = best_point;
    count = AddSurfacePoint(a, best_point, margin, out, count);
  }
  return count;
}

}  // namespace alsim
