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
  // kMesh only: the mesh's vertices (in the geom frame) and convex-hull triangles (local vertex
  // indices), pointing into the Model.
  const Vec3* vertices = nullptr;
  int vertex_count = 0;
  const Eigen::Vector3i* hull_faces = nullptr;
  int hull_face_count = 0;
};

}  // namespace alsim
