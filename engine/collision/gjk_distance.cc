#include "engine/collision/gjk_distance.h"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>

namespace alsim {
namespace {

// A point of A - B with the two support points it came from.
struct Vertex {
  Vec3 w;
  Vec3 a;
  Vec3 b;
};

struct Simplex {
  std::array<Vertex, 4> vertex;
  int count = 0;
};

// A face of the simplex (indices into it) with the barycentric weights of its point closest to
// the origin; count 4 means the origin lies inside the tetrahedron.
struct Closest {
  int count = 0;
  std::array<int, 4> index{};
  std::array<double, 4> weight{};

  Vec3 Point(const Simplex& s) const {
    Vec3 p = Vec3::Zero();
    for (int i = 0; i < count; ++i) p += weight[i] * s.vertex[index[i]].w;
    return p;
  }
};

Closest OneVertex(int i) { return {1, {i, 0, 0, 0}, {1, 0, 0, 0}}; }

Closest TwoVertices(int i, int j, double t) { return {2, {i, j, 0, 0}, {1 - t, t, 0, 0}}; }

Vertex SupportOfDifference(const SupportMapping& a, const SupportMapping& b, const Vec3& dir) {
  Vertex v;
  v.a = a.support(a.set, dir);
  v.b = b.support(b.set, -dir);
  v.w = v.a - v.b;
  return v;
}

// Closest point of segment ij to the origin.
Closest OnSegment(const Simplex& s, int i, int j) {
  const Vec3& p = s.vertex[i].w;
  const Vec3 edge = s.vertex[j].w - p;
  const double along = -p.dot(edge);
  const double length2 = edge.squaredNorm();
  if (along <= 0 || length2 <= 0) return OneVertex(i);
  if (along >= length2) return OneVertex(j);
  return TwoVertices(i, j, along / length2);
}

// Closest point of triangle ijk to the origin by its Voronoi regions: the dot products d1..d6
// of the edges with the vertex positions decide whether a vertex, an edge or the face holds it.
Closest OnTriangle(const Simplex& s, int i, int j, int k) {
  const Vec3& a = s.vertex[i].w;
  const Vec3& b = s.vertex[j].w;
  const Vec3& c = s.vertex[k].w;
  const Vec3 ab = b - a;
  const Vec3 ac = c - a;
  const double d1 = -ab.dot(a);
  const double d2 = -ac.dot(a);
  if (d1 <= 0 && d2 <= 0) return OneVertex(i);
  const double d3 = -ab.dot(b);
  const double d4 = -ac.dot(b);
  if (d3 >= 0 && d4 <= d3) return OneVertex(j);
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return TwoVertices(i, j, d1 / (d1 - d3));
  const double d5 = -ab.dot(c);
  const double d6 = -ac.dot(c);
  if (d6 >= 0 && d5 <= d6) return OneVertex(k);
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return TwoVertices(i, k, d2 / (d2 - d6));
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && d4 - d3 >= 0 && d5 - d6 >= 0) {
    return TwoVertices(j, k, (d4 - d3) / ((d4 - d3) + (d5 - d6)));
  }
  const double total = va + vb + vc;
  if (!(total > 0)) {  // degenerate (collinear) triangle: the best of its edges
    Closest best = OnSegment(s, i, j);
    for (const Closest& edge : {OnSegment(s, i, k), OnSegment(s, j, k)}) {
      if (edge.Point(s).squaredNorm() < best.Point(s).squaredNorm()) best = edge;
    }
    return best;
  }
  return {3, {i, j, k, 0}, {va / total, vb / total, vc / total, 0}};
}

// Closest point of tetrahedron 0123 to the origin: the best over the faces whose plane separates
// the origin from the opposite vertex; none means the origin is inside. A flat tetrahedron (its
// volume lost to rounding) tries every face.
Closest OnTetrahedron(const Simplex& s) {
  constexpr int kFaces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
  Closest best;
  double best_norm2 = INFINITY;
  for (const auto& f : kFaces) {
    const Vec3& p = s.vertex[f[0]].w;
    const Vec3 normal = (s.vertex[f[1]].w - p).cross(s.vertex[f[2]].w - p);
    const double origin_side = -normal.dot(p);
    const double opposite_side = normal.dot(s.vertex[f[3]].w - p);
    if (origin_side * opposite_side > 0) continue;  // origin on the inner side of this face
    const Closest face = OnTriangle(s, f[0], f[1], f[2]);
    const double norm2 = face.Point(s).squaredNorm();
    if (norm2 < best_norm2) {
      best_norm2 = norm2;
      best = face;
    }
  }
  if (best.count == 0) return {4, {0, 1, 2, 3}, {0, 0, 0, 0}};
  return best;
}

Closest ClosestOnSimplex(const Simplex& s) {
  switch (s.count) {
    case 1:
      return OneVertex(0);
    case 2:
      return OnSegment(s, 0, 1);
    case 3:
      return OnTriangle(s, 0, 1, 2);
    default:
      return OnTetrahedron(s);
  }
}

// The closest point over the faces of the simplex that hold its last vertex (the new support
// point). On a curved surface a new point can lie almost in the plane of the old triangle; the
// full test then loses its progress to rounding, while these faces still make some.
Closest ClosestThroughLast(const Simplex& s) {
  const int last = s.count - 1;
  if (last == 0) return OneVertex(0);
  Closest best = OneVertex(last);
  for (int i = 0; i < last; ++i) {
    for (int j = i + 1; j <= last; ++j) {
      const Closest face = (j == last) ? OnSegment(s, i, last) : OnTriangle(s, i, j, last);
      if (face.Point(s).squaredNorm() < best.Point(s).squaredNorm()) best = face;
    }
  }
  return best;
}

// The closest point v of the simplex as one vertex (its witnesses are the same convex
// combination of the support points, so they lie in A and B), followed by w. The segment from v
// to a support point w with v.w < |v|^2 always holds a point closer than v: the step of last
// resort when rounding in the subsimplex tests stalls on thin triangles.
Simplex SegmentFromClosest(const Simplex& s, const Closest& closest, const Vertex& w) {
  Simplex segment;
  Vertex& v = segment.vertex[0];
  v = {Vec3::Zero(), Vec3::Zero(), Vec3::Zero()};
  for (int i = 0; i < closest.count; ++i) {
    const Vertex& u = s.vertex[closest.index[i]];
    v.w += closest.weight[i] * u.w;
    v.a += closest.weight[i] * u.a;
    v.b += closest.weight[i] * u.b;
  }
  segment.vertex[1] = w;
  segment.count = 2;
  return segment;
}

// Keeps only the vertices of `closest`, in its order.
Simplex Reduce(const Simplex& s, Closest* closest) {
  Simplex reduced;
  for (int i = 0; i < closest->count; ++i) {
    reduced.vertex[i] = s.vertex[closest->index[i]];
    closest->index[i] = i;
  }
  reduced.count = closest->count;
  return reduced;
}

bool Contains(const Simplex& s, const Vec3& w) {
  for (int i = 0; i < s.count; ++i) {
    if (s.vertex[i].w == w) return true;
  }
  return false;
}

GjkDistanceResult Witnesses(const Simplex& s, const Closest& closest, int iterations) {
  GjkDistanceResult result;
  for (int i = 0; i < closest.count; ++i) {
    const Vertex& v = s.vertex[closest.index[i]];
    result.point_a += closest.weight[i] * v.a;
    result.point_b += closest.weight[i] * v.b;
  }
  result.distance = (result.point_b - result.point_a).norm();
  result.separated = true;
  result.iterations = iterations;
  return result;
}

GjkDistanceResult Beyond(double lower_bound, const Vec3& direction, int iterations) {
  GjkDistanceResult result;
  result.separated = true;
  result.beyond = true;
  result.distance = lower_bound;
  result.direction = direction;
  result.iterations = iterations;
  return result;
}

GjkDistanceResult Touching(int iterations) {
  GjkDistanceResult result;
  result.iterations = iterations;
  return result;
}

}  // namespace

GjkDistanceResult GjkDistance(const SupportMapping& a, const SupportMapping& b,
                              double relative_tolerance, double stop_beyond) {
  Vec3 guess = a.center - b.center;  // a point of A - B
  if (guess.squaredNorm() == 0) guess = Vec3::UnitX();
  Simplex simplex;
  simplex.vertex[0] = SupportOfDifference(a, b, -guess);
  simplex.count = 1;
  Closest closest = OneVertex(0);
  Vec3 v = simplex.vertex[0].w;
  double size = v.norm();  // the largest |w| seen: the scale of A - B
  const double stop_beyond2 = stop_beyond * stop_beyond;  // compared with squares: no root a turn
  int iteration = 0;
  for (; iteration < kGjkMaxIterations; ++iteration) {
    const double v2 = v.squaredNorm();
    if (v2 <= std::pow(kGjkTouchTolerance * size, 2)) return Touching(iteration);
    const Vertex w = SupportOfDifference(a, b, -v);
    size = std::max(size, w.w.norm());
    // |v| - v.w/|v| bounds the distance error: stop once it is small relative to |v|.
    const double vw = v.dot(w.w);
    if (v2 - vw <= relative_tolerance * v2) break;
    // A - B lies beyond the plane through w normal to v, so the distance is at least v.w/|v|.
    if (vw > 0 && vw * vw > stop_beyond2 * v2) {
      const double norm = std::sqrt(v2);
      return Beyond(vw / norm, -v / norm, iteration);
    }
    if (Contains(simplex, w.w)) break;  // no new support point: v is exact
    Simplex grown = simplex;
    grown.vertex[grown.count++] = w;
    Closest next = ClosestOnSimplex(grown);
    if (next.count == 4) return Touching(iteration);
    Vec3 next_v = next.Point(grown);
    if (!(next_v.squaredNorm() < v2)) {
      next = ClosestThroughLast(grown);
      next_v = next.Point(grown);
    }
    if (!(next_v.squaredNorm() < v2)) {
      grown = SegmentFromClosest(simplex, closest, w);
      next = OnSegment(grown, 0, 1);
      next_v = next.Point(grown);
    }
    if (!(next_v.squaredNorm() < v2)) break;  // no progress left to rounding: keep the last
    simplex = Reduce(grown, &next);
    closest = next;
    v = next_v;
  }
  return Witnesses(simplex, closest, iteration);
}

}  // namespace alsim
