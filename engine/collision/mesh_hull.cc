#include "engine/collision/mesh_hull.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <Eigen/Geometry>

namespace alsim {
namespace {

const Vec3& HullPoint(const GeomShape& s, int h) { return s.vertices[s.graph_vert[h]]; }

// The cube-map cell of d (Model::mesh_graph_dir_start): the face of its largest component (the
// lowest axis on ties), the cell by the other two components divided by it. A zero or non-finite
// d takes cell 0 of the +x face.
int DirectionStart(const GeomShape& s, const Vec3& d) {
  int axis = 0;
  for (int i = 1; i < 3; ++i) {
    if (std::abs(d[i]) > std::abs(d[axis])) axis = i;
  }
  const double largest = std::abs(d[axis]);
  if (!(largest > 0) || !std::isfinite(largest)) return s.graph_dir_start[0];
  const auto cell = [&](double component) {
    // component / largest lies in [-1, 1]; the bounds also catch rounding at the edges and NaN.
    const double x = (component / largest + 1) * (0.5 * kMeshStartCells);
    if (!(x > 0)) return 0;
    if (x >= kMeshStartCells) return kMeshStartCells - 1;
    return static_cast<int>(x);
  };
  const int face = 2 * axis + (d[axis] >= 0 ? 0 : 1);
  const int row = cell(d[(axis + 1) % 3]);
  const int col = cell(d[(axis + 2) % 3]);
  return s.graph_dir_start[(face * kMeshStartCells + row) * kMeshStartCells + col];
}

// The farthest mesh vertex along d by hill climbing on the convex hull's vertex graph. On a
// convex polytope a vertex no neighbour of which is farther along d is a global maximizer, so
// the walk moves to the best neighbour while one improves d.x. The maximizers form a face of the
// hull, connected in the graph; that plateau is then searched breadth-first and its lowest mesh
// vertex index returned, the scan's tie rule, so that the result does not depend on the start.
// The start is the vertex of d's cube-map cell (DirectionStart) or the warm vertex of the last
// query on this shape, whichever is farther along d. A plateau larger than kMaxPlateau, or a
// rounding-made local maximum, returns -1 (the caller scans).
int MeshSupportWalk(const GeomShape& s, const Vec3& d, int* hull_vertex) {
  int h = DirectionStart(s, d);
  double best_dot = HullPoint(s, h).dot(d);
  if (s.warm_vertex >= 0 && s.warm_vertex < s.graph_vert_count) {
    const double warm_dot = HullPoint(s, s.warm_vertex).dot(d);
    if (warm_dot > best_dot) {
      best_dot = warm_dot;
      h = s.warm_vertex;
    }
  }
  for (;;) {
    int next = -1;
    const int* edges = s.graph_edges + s.graph_edge_adr[h];
    for (int e = 0; e < s.graph_edge_num[h]; ++e) {
      const double dot = HullPoint(s, edges[e]).dot(d);
      if (dot > best_dot) {
        best_dot = dot;
        next = edges[e];
      }
    }
    if (next < 0) break;
    h = next;
  }
  constexpr int kMaxPlateau = 64;
  std::array<int, kMaxPlateau> plateau;
  int size = 1;
  plateau[0] = h;
  for (int k = 0; k < size; ++k) {
    const int* edges = s.graph_edges + s.graph_edge_adr[plateau[k]];
    for (int e = 0; e < s.graph_edge_num[plateau[k]]; ++e) {
      const int n = edges[e];
      const double dot = HullPoint(s, n).dot(d);
      if (dot > best_dot) return -1;  // rounding made a non-global local maximum: scan
      if (dot < best_dot) continue;
      if (std::find(plateau.begin(), plateau.begin() + size, n) != plateau.begin() + size) {
        continue;
      }
      if (size == kMaxPlateau) return -1;
      plateau[size++] = n;
    }
  }
  s.warm_vertex = h;
  int best = plateau[0];
  for (int k = 1; k < size; ++k) {
    if (s.graph_vert[plateau[k]] < s.graph_vert[best]) best = plateau[k];
  }
  *hull_vertex = best;
  return s.graph_vert[best];
}

// A set of hull indices in a fixed-size open-addressing table (no allocation): at most
// kMaxHullWalk entries in twice as many slots, linear probing.
// Small sets are searched linearly (most walks visit a few vertices, and filling the table costs
// more than that); the table is built once the set outgrows kLinear.
class HullVertexSet {
 public:
  // Inserts h; false when it was there already.
  bool Insert(int h) {
    if (size_ < kLinear) {
      for (int i = 0; i < size_; ++i) {
        if (small_[i] == h) return false;
      }
      small_[size_++] = h;
      return true;
    }
    if (size_ == kLinear) {
      slots_.fill(-1);
      for (int i = 0; i < kLinear; ++i) InsertInTable(small_[i]);
    }
    if (!InsertInTable(h)) return false;
    ++size_;
    return true;
  }

 private:
  bool InsertInTable(int h) {
    unsigned i = (static_cast<unsigned>(h) * 2654435761u) & (kSlots - 1);
    for (;;) {
      if (slots_[i] == h) return false;
      if (slots_[i] < 0) {
        slots_[i] = h;
        return true;
      }
      i = (i + 1) & (kSlots - 1);
    }
  }

 private:
  static constexpr int kLinear = 32;
  static constexpr unsigned kSlots = 2 * kMaxHullWalk;
  static_assert((kSlots & (kSlots - 1)) == 0, "a power of two");
  int size_ = 0;
  std::array<int, kLinear> small_;
  std::array<int, kSlots> slots_;
};

}  // namespace

int MeshSupportScan(const GeomShape& s, const Vec3& d) {
  int best = 0;
  double best_dot = s.vertices[0].dot(d);
  for (int i = 1; i < s.vertex_count; ++i) {
    const double dot = s.vertices[i].dot(d);
    if (dot > best_dot) {
      best_dot = dot;
      best = i;
    }
  }
  return best;
}

int MeshSupportVertex(const GeomShape& s, const Vec3& d, int* hull_vertex) {
  int h = -1;
  int v = -1;
  if (s.graph_vert_count > 0) v = MeshSupportWalk(s, d, &h);
  if (v < 0) {
    h = -1;
    v = MeshSupportScan(s, d);
  }
  if (hull_vertex != nullptr) *hull_vertex = h;
  return v;
}

int MeshHullVerticesAbove(const GeomShape& s, const Vec3& d, double min_dot, int start, int cap,
                          int* out) {
  cap = std::min(cap, kMaxHullWalk);
  if (cap <= 0 || start < 0 || start >= s.graph_vert_count) return 0;
  HullVertexSet visited;
  visited.Insert(start);
  int count = 0;
  out[count++] = start;
  for (int k = 0; k < count; ++k) {
    const int* edges = s.graph_edges + s.graph_edge_adr[out[k]];
    for (int e = 0; e < s.graph_edge_num[out[k]]; ++e) {
      const int n = edges[e];
      if (!(HullPoint(s, n).dot(d) >= min_dot)) continue;
      if (!visited.Insert(n)) continue;
      if (count == cap) return count;
      out[count++] = n;
    }
  }
  return count;
}

int MeshHullClimbWithin(const GeomShape& s, const Vec3& d, const Vec3& c, double min_dot,
                        int start) {
  int h = start;
  double best_dot = HullPoint(s, h).dot(d);
  for (;;) {
    int next = -1;
    const int* edges = s.graph_edges + s.graph_edge_adr[h];
    for (int e = 0; e < s.graph_edge_num[h]; ++e) {
      const Vec3& x = HullPoint(s, edges[e]);
      const double dot = x.dot(d);
      if (dot > best_dot && x.dot(c) > min_dot) {
        best_dot = dot;
        next = edges[e];
      }
    }
    if (next < 0) return h;
    h = next;
  }
}

bool MeshHullFace(const GeomShape& s, const Vec3& d, Vec3* normal, int* support_hull_vertex) {
  if (s.graph_vert_count < 4) return false;
  int v = -1;
  MeshSupportVertex(s, d, &v);
  if (v < 0) return false;  // the scan answered: no graph position to start from
  const Vec3& x = HullPoint(s, v);
  const int* edges = s.graph_edges + s.graph_edge_adr[v];
  const int degree = s.graph_edge_num[v];
  // Rounding allowance for "no neighbour above the plane": the vertices come from floats.
  double reach = 0;
  for (int i = 0; i < degree; ++i) reach = std::max(reach, (HullPoint(s, edges[i]) - x).norm());
  const double tolerance = 1e-6 * reach;
  double best_cos = -2;
  for (int i = 0; i < degree; ++i) {
    const int a = edges[i];
    const int* a_edges = s.graph_edges + s.graph_edge_adr[a];
    const int a_degree = s.graph_edge_num[a];
    for (int j = i + 1; j < degree; ++j) {
      const int b = edges[j];
      if (std::find(a_edges, a_edges + a_degree, b) == a_edges + a_degree) continue;
      Vec3 n = (HullPoint(s, a) - x).cross(HullPoint(s, b) - x);
      const double length = n.norm();
      if (!(length > 1e-12 * reach * reach)) continue;  // sliver triangle
      n /= length;
      // Orient it outward: the side on which no neighbour of v lies.
      double above = -INFINITY;
      double below = INFINITY;
      for (int k = 0; k < degree; ++k) {
        const double h = n.dot(HullPoint(s, edges[k]) - x);
        above = std::max(above, h);
        below = std::min(below, h);
      }
      if (above <= tolerance) {
        // n is outward already
      } else if (below >= -tolerance) {
        n = -n;
      } else {
        continue;  // a triangle through the hull's inside, not a face
      }
      const double cos = n.dot(d);
      if (cos > best_cos) {
        best_cos = cos;
        *normal = n;
      }
    }
  }
  if (best_cos < -1) return false;
  *support_hull_vertex = v;
  return true;
}

}  // namespace alsim
