// A geom as narrowphase functions see it: its type, size parameters and world pose.
#pragma once

#include "engine/math/types.h"
#include "engine/model/model.h"

namespace alsim {

// Size parameters follow MuJoCo's: sphere (radius); capsule and cylinder (radius, half-length
// along the local z axis); box (three half-sizes); ellipsoid (three semi-axes); plane (half-sizes
// for rendering only: a collision plane is infinite, its normal is the local z axis).
struct GeomShape {
  GeomType type = GeomType::kSphere;
  Vec3 size = Vec3::Zero();
  Vec3 pos = Vec3::Zero();      // world position of the geom frame
  Mat3 rot = Mat3::Identity();  // world orientation of the geom frame (columns = local axes)
  // Radius of a sphere about pos that holds the whole geom (Model::geom_rbound); 0: unknown.
  double rbound = 0;
  // kMesh only: the mesh's vertices (in the geom frame) and convex-hull triangles (local vertex
  // indices), pointing into the Model.
  const Vec3* vertices = nullptr;
  int vertex_count = 0;
  const Eigen::Vector3i* hull_faces = nullptr;
  int hull_face_count = 0;
  // kMesh with a hull: its vertex graph (see Model::mesh_graph_*), hull-local indices; edge_adr
  // and edge_num are indexed by hull vertex, edges holds the hull-local neighbours.
  const int* graph_vert = nullptr;  // hull vertex -> local mesh vertex index
  int graph_vert_count = 0;         // 0: no graph, support scans every vertex
  const int* graph_edge_adr = nullptr;
  const int* graph_edge_num = nullptr;
  const int* graph_edges = nullptr;
  // Walk starts by direction: 6 kMeshStartCells^2 hull vertices (Model::mesh_graph_dir_start).
  const int* graph_dir_start = nullptr;
  // The hull vertex the last support query on this shape ended at: the next walk starts from it
  // or from the direction's cube-map cell, whichever lies farther along the direction. A
  // GeomShape is built per pair (ShapeOfGeom), so this is per-pair state on the caller's stack;
  // it affects only speed, never the result (see MeshSupportVertex).
  mutable int warm_vertex = -1;
  // The Model and geom the shape was made from (ShapeOfGeom), where SDF and concave-mesh pairs
  // read what only they need (Model::geom_sdf, geom_concave, the sdf_* arrays: sdf_pairs.h); null
  // and -1 for a shape made by hand, which is then neither.
  const Model* model = nullptr;
  int geom = -1;
};

}  // namespace alsim
