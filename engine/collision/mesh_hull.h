// Queries on a mesh's convex hull through MuJoCo's hull vertex graph (GeomShape::graph_*), so that
// no per-step query scans every vertex:
//  - the support vertex along a direction, by hill climbing from a warm start (the direction's
//    cell of the mesh's cube map of starts, or the shape's last answer);
//  - the hull vertices near that support (within a slab along the direction), by a breadth-first
//    walk out from it, and the extreme of such a slab along another direction, by a greedy climb;
//  - the hull face best aligned with a direction among the faces at the support vertex.
// All directions and points are in the geom frame. Meshes without a hull graph (MuJoCo built no
// hull) fall back to scanning every vertex.
#pragma once

#include "engine/collision/geom_shape.h"

namespace alsim {

// The mesh vertex farthest along d (geom frame); the lowest mesh vertex index on ties, whatever
// the warm start. *hull_vertex (if given) receives its hull-graph index, or -1 when the answer
// came from a scan (no graph, or a rounding-made local maximum). Requires vertex_count > 0.
int MeshSupportVertex(const GeomShape& s, const Vec3& d, int* hull_vertex = nullptr);

// The farthest mesh vertex along d by scanning every vertex; the lowest index on ties.
int MeshSupportScan(const GeomShape& s, const Vec3& d);

// The hull vertices h with d . vertex(h) >= min_dot, found by a breadth-first walk over the hull
// graph from `start` (a hull vertex with d . vertex(start) >= min_dot, e.g. the support along d).
// On a convex polytope the vertices above any plane induce a connected subgraph (from each, an
// edge path that increases d . x leads to the maximum, the simplex method's argument), so the
// walk finds all of them. It stops after `cap` vertices; the visiting order depends only on
// `start` and the graph. Writes hull indices to out[0 .. return value).
int MeshHullVerticesAbove(const GeomShape& s, const Vec3& d, double min_dot, int start, int cap,
                          int* out);

// A greedy climb from hull vertex `start` that increases d . x while staying among the hull
// vertices with c . x > min_dot (start must be one): each move goes to the neighbour with the
// largest d . x that improves it; ties keep the first in neighbour order. It ends at a vertex
// no allowed neighbour of which improves d . x: the extreme of that set along d when the set
// spans a face, else a deterministic local extreme (the cut through the hull adds corners
// that are not hull vertices). Returns the hull index reached.
int MeshHullClimbWithin(const GeomShape& s, const Vec3& d, const Vec3& c, double min_dot,
                        int start);

// The hull face (a triangle of the hull graph) whose outward normal is best aligned with d, among
// the faces at the support vertex along d: candidate triangles are the vertex's pairs of adjacent
// neighbours, kept when their plane supports the hull at that vertex (no neighbour lies above it
// by more than a rounding tolerance; the hill-climbing argument makes that local test global).
// Writes the unit outward normal and the support vertex's hull index; false without a graph or
// when no candidate supports the hull (the caller then treats the contact as not flat).
bool MeshHullFace(const GeomShape& s, const Vec3& d, Vec3* normal, int* support_hull_vertex);

// Contact points of one pair that involves a mesh lie at least this fraction of the smaller
// bounding radius apart (MuJoCo's plane-mesh rule, tolplanemesh = 0.3). Closer points add almost
// no moment arm, and near-duplicate rows slow the iterative solvers down (BENCHMARKS.md, mesh
// section): a fine mesh's flush patch or clipped face overlap is a cluster around one point.
inline constexpr double kMeshPointSpacing = 0.3;

// The largest number of hull vertices MeshHullVerticesAbove can visit with its fixed-size,
// stack-held visited set.
inline constexpr int kMaxHullWalk = 512;

}  // namespace alsim
