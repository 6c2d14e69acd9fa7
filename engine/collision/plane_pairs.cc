// Plane against sphere, capsule, ellipsoid, cylinder, box and convex mesh.
//
// A plane is the half-space below the plane through a.pos with normal n = a.rot.col(2); the signed
// distance of a point p of b's surface is n . (p - a.pos). The contact normal (from the plane
// toward b) is n, and the midpoint between the surfaces is p - n dist / 2.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/collision/mesh_hull.h"
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

// At most this many contacts per plane-mesh pair: the deepest vertex and three more that span
// the resting patch, enough for a support polygon under a body lying on a face (a box mesh gets
// its four corners), and few rows for the solver.
inline constexpr int kMaxPlaneMeshContacts = 4;
// An extreme counts as flush with the deepest vertex when it rises above it by at most this
// slope (tan of about 2 degrees) times their distance along the plane.
inline constexpr double kFlushSlope = 0.035;

// The deepest hull vertex, then the extremes of the patch within the margin along four in-plane
// directions 90 degrees apart, of which the farthest-point choice keeps the most spread, each
// at least kMeshPointSpacing rbound along the plane from the points already taken. The
// patch is the hull vertices with height < margin, i.e. (-R^T n) . v > n . (pos - plane.pos) -
// margin. The directions are fixed in the body: t1 is the mesh's local x axis projected into the
// plane (its y axis when x is nearly normal to it), t2 = -n x t1, so the points turn with the
// body and do not jump from step to step. Everything walks the hull graph (mesh_hull.h): the
// support along -R^T n by hill climbing, then from it a greedy climb along each direction within
// the patch. Nothing scans the vertices, and the walks depend only on the pose, so the points are
// deterministic. A mesh without a hull graph scans its vertices for the same extremes.
//
// Extremes that touch (height <= 0) or lie flush with the deepest vertex are kept: a body on a
// face. Of the raised ones, which the speculative margin brings in, only the lowest is kept: it
// is where a body rocking or tipping toward the plane lands next, and it stops that landing in
// time, while the others would be solver rows that stay inactive (a smooth body on its curved
// bottom touches at one point, and its flush neighbours fall within the spacing).
int CollidePlaneMesh(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  if (b.vertex_count == 0) return 0;
  const Vec3 n = a.rot.col(2);
  const Vec3 down = -(b.rot.transpose() * n);            // -n in the geom frame
  const double min_dot = n.dot(b.pos - a.pos) - margin;  // down . v > min_dot: within the margin
  int support_hull = -1;
  const int deepest = MeshSupportVertex(b, down, &support_hull);
  if (!(down.dot(b.vertices[deepest]) > min_dot)) return 0;

  // In-plane directions in the geom frame.
  const Vec3 axis = std::abs(down.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 t1 = (axis - down * down.dot(axis)).normalized();
  const Vec3 t2 = down.cross(t1);
  // Four directions 90 degrees apart, turned 10 degrees off t1 and t2 so that a face with edges
  // along the mesh axes (a box's) has a unique extreme corner in each: all four corners.
  const double c10 = std::cos(10 * M_PI / 180);
  const double s10 = std::sin(10 * M_PI / 180);
  const Vec3 t = c10 * t1 + s10 * t2;
  const Vec3 u = down.cross(t);
  const Vec3 directions[4] = {t, u, -t, -u};
  // Candidate mesh vertices: the deepest first, then the extremes, repeats dropped.
  int candidate[5] = {deepest, -1, -1, -1, -1};
  int candidates = 1;
  for (const Vec3& e : directions) {
    int v = -1;
    if (support_hull >= 0) {
      v = b.graph_vert[MeshHullClimbWithin(b, e, down, min_dot, support_hull)];
    } else {
      double best = -std::numeric_limits<double>::infinity();
      for (int i = 0; i < b.vertex_count; ++i) {
        if (down.dot(b.vertices[i]) > min_dot && e.dot(b.vertices[i]) > best) {
          best = e.dot(b.vertices[i]);
          v = i;
        }
      }
    }
    if (std::find(candidate, candidate + candidates, v) == candidate + candidates) {
      candidate[candidates++] = v;
    }
  }
  // Farthest-point choice along the plane, the deepest first; ties keep the earlier candidate.
  Vec3 points[5];
  double gap[5];
  for (int k = 0; k < candidates; ++k) {
    points[k] = b.pos + b.rot * b.vertices[candidate[k]];
    gap[k] = std::numeric_limits<double>::infinity();
  }
  // Raised extremes: all but the lowest leave the choice.
  const double deepest_height = n.dot(points[0] - a.pos);
  int lowest_raised = -1;
  double lowest_raised_height = 0;
  for (int k = 1; k < candidates; ++k) {
    const double height = n.dot(points[k] - a.pos);
    const Vec3 d = points[k] - points[0];
    const double run = (d - n * n.dot(d)).norm();
    if (height > 0 && height - deepest_height > kFlushSlope * run) {
      gap[k] = -1;
      if (lowest_raised < 0 || height < lowest_raised_height) {
        lowest_raised = k;
        lowest_raised_height = height;
      }
    }
  }
  if (lowest_raised >= 0) gap[lowest_raised] = std::numeric_limits<double>::infinity();
  int count = 0;
  int next = 0;
  const double min_gap = std::max(1e-9, kMeshPointSpacing * b.rbound);
  while (next >= 0 && count < kMaxPlaneMeshContacts) {
    count = AddSurfacePoint(a, points[next], margin, out, count);
    gap[next] = -1;  // taken (or at the margin after rounding: dropped)
    const Vec3 taken = points[next];
    next = -1;
    double best_gap = min_gap;
    for (int k = 0; k < candidates; ++k) {
      if (gap[k] < 0) continue;
      const Vec3 d = points[k] - taken;
      gap[k] = std::min(gap[k], (d - n * n.dot(d)).norm());
      if (gap[k] > best_gap) {
        best_gap = gap[k];
        next = k;
      }
    }
  }
  return count;
}

}  // namespace alsim
