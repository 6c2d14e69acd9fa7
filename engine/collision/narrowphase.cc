#include "engine/collision/narrowphase.h"

#include <array>
#include <utility>

#include "engine/collision/convex_pairs.h"
#include "engine/collision/primitive_pairs.h"

namespace alsim {
namespace {

using PairFunction = int (*)(const GeomShape&, const GeomShape&, double, Contact*);
constexpr int kGeomTypes = 8;

int Index(GeomType type) { return static_cast<int>(type); }

// Pair functions by (type a, type b) with type a <= type b: closed forms where they exist,
// the general convex routine otherwise; null where nothing collides.
std::array<std::array<PairFunction, kGeomTypes>, kGeomTypes> MakePairTable() {
  std::array<std::array<PairFunction, kGeomTypes>, kGeomTypes> table{};
  const GeomType convex[] = {GeomType::kSphere,   GeomType::kCapsule, GeomType::kEllipsoid,
                             GeomType::kCylinder, GeomType::kBox,     GeomType::kMesh};
  for (const GeomType a : convex) {
    for (const GeomType b : convex) table[Index(a)][Index(b)] = CollideConvex;
  }
  auto set = [&table](GeomType a, GeomType b, PairFunction f) { table[Index(a)][Index(b)] = f; };
  set(GeomType::kPlane, GeomType::kSphere, CollidePlaneSphere);
  set(GeomType::kPlane, GeomType::kCapsule, CollidePlaneCapsule);
  set(GeomType::kPlane, GeomType::kEllipsoid, CollidePlaneEllipsoid);
  set(GeomType::kPlane, GeomType::kCylinder, CollidePlaneCylinder);
  set(GeomType::kPlane, GeomType::kBox, CollidePlaneBox);
  set(GeomType::kPlane, GeomType::kMesh, CollidePlaneMesh);
  set(GeomType::kSphere, GeomType::kSphere, CollideSphereSphere);
  set(GeomType::kSphere, GeomType::kCapsule, CollideSphereCapsule);
  set(GeomType::kSphere, GeomType::kBox, CollideSphereBox);
  set(GeomType::kCapsule, GeomType::kCapsule, CollideCapsuleCapsule);
  set(GeomType::kCapsule, GeomType::kBox, CollideCapsuleBox);
  set(GeomType::kBox, GeomType::kBox, CollideBoxBox);
  return table;
}

const auto kPairTable = MakePairTable();

// The pair function for types a and b in either order (it takes the lower type first).
PairFunction PairFunctionOf(GeomType a, GeomType b) {
  return Index(a) <= Index(b) ? kPairTable[Index(a)][Index(b)] : kPairTable[Index(b)][Index(a)];
}

}  // namespace

int CollideShapes(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const PairFunction collide = PairFunctionOf(a.type, b.type);
  if (collide == nullptr) return 0;
  const bool swapped = Index(a.type) > Index(b.type);
  const GeomShape& first = swapped ? b : a;
  const GeomShape& second = swapped ? a : b;
  const int count = collide(first, second, margin, out);
  if (swapped) {
    for (int i = 0; i < count; ++i) out[i].normal = -out[i].normal;
  }
  return count;
}

int CollideShapesCost(GeomType a, GeomType b) {
  const PairFunction collide = PairFunctionOf(a, b);
  if (collide == nullptr) return 0;
  return collide == CollideConvex ? kGeneralConvexPairCost : 1;
}

GeomShape ShapeOfGeom(const Model& m, const Data& d, int g) {
  GeomShape shape;
  shape.type = m.geom_type[g];
  shape.size = m.geom_size[g];
  shape.pos = d.geom_xpos[g];
  shape.rot = d.geom_xmat[g];
  const int mesh = m.geom_mesh[g];
  if (mesh >= 0) {
    shape.vertices = m.mesh_vert.data() + m.mesh_vert_adr[mesh];
    shape.vertex_count = m.mesh_vert_num[mesh];
    shape.hull_faces = m.mesh_hull_face.data() + m.mesh_hull_face_adr[mesh];
    shape.hull_face_count = m.mesh_hull_face_num[mesh];
    shape.graph_vert_count = m.mesh_graph_vert_num[mesh];
    if (shape.graph_vert_count > 0) {
      const int adr = m.mesh_graph_vert_adr[mesh];
      shape.graph_vert = m.mesh_graph_vert.data() + adr;
      shape.graph_edge_adr = m.mesh_graph_edge_adr.data() + adr;
      shape.graph_edge_num = m.mesh_graph_edge_num.data() + adr;
      shape.graph_edges = m.mesh_graph_edge.data();
      shape.graph_axis_start = m.mesh_graph_axis_start.data() + 6 * mesh;
    }
  }
  return shape;
}

}  // namespace alsim
