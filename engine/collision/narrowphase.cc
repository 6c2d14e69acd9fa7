#include "engine/collision/narrowphase.h"

#include <array>
#include <cmath>
#include <utility>

#include <Eigen/Geometry>

#include "engine/collision/convex_pairs.h"
#include "engine/collision/primitive_pairs.h"
#include "engine/collision/sdf_pairs.h"

namespace alsim {
namespace {

using PairFunction = int (*)(const GeomShape&, const GeomShape&, double, Contact*);
constexpr int kGeomTypes = 9;

int Index(GeomType type) { return static_cast<int>(type); }

// Pair functions by (type a, type b) with type a <= type b: closed forms where they exist,
// the general convex routine otherwise; null where nothing collides. SDF pairs and concave
// meshes go to CollideSdfPair before the table (CollideShapes).
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

// Half-sizes of a box in the geom frame that holds the geom; false for planes and height fields.
// MuJoCo sets a mesh geom's size to the largest |coordinate| of its vertices along each axis of
// the geom frame, which is such a box.
bool BoundingHalfSizes(const GeomShape& s, Vec3* half) {
  const Vec3& z = s.size;
  switch (s.type) {
    case GeomType::kSphere:
      *half = Vec3::Constant(z[0]);
      return true;
    case GeomType::kCapsule:
      *half = Vec3(z[0], z[0], z[0] + z[1]);
      return true;
    case GeomType::kCylinder:
      *half = Vec3(z[0], z[0], z[1]);
      return true;
    case GeomType::kEllipsoid:
    case GeomType::kBox:
    case GeomType::kMesh:
      *half = z;
      return true;
    default:
      return false;
  }
}

// True when the geoms' bounding spheres, or their oriented bounding boxes, are farther apart
// than the margin: then no point of one is within the margin of the other. The boxes use the
// separating-axis test over their 15 axes (3 + 3 face normals, 9 edge cross products): along a
// unit axis L, boxes with centres c_a, c_b are apart by |L.(c_b - c_a)| - sum_i h_i |L.e_i| (both
// boxes' terms). Separation must exceed the margin by a rounding allowance (the sizes come from
// floats).
bool BoundsApart(const GeomShape& a, const GeomShape& b, double margin) {
  if (a.rbound > 0 && b.rbound > 0) {
    const double apart = (a.pos - b.pos).norm() - a.rbound - b.rbound;
    if (apart > margin + 1e-9 * (a.rbound + b.rbound)) return true;
  }
  Vec3 half_a;
  Vec3 half_b;
  if (!BoundingHalfSizes(a, &half_a) || !BoundingHalfSizes(b, &half_b)) return false;
  const double allowance = margin + 1e-9 * (half_a.sum() + half_b.sum());
  const Vec3 between = b.pos - a.pos;
  const auto apart_along = [&](const Vec3& axis) {
    double reach = 0;
    for (int i = 0; i < 3; ++i) {
      reach += half_a[i] * std::abs(axis.dot(a.rot.col(i))) +
               half_b[i] * std::abs(axis.dot(b.rot.col(i)));
    }
    return std::abs(axis.dot(between)) - reach > allowance;
  };
  for (int i = 0; i < 3; ++i) {
    if (apart_along(a.rot.col(i)) || apart_along(b.rot.col(i))) return true;
  }
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      Vec3 axis = a.rot.col(i).cross(b.rot.col(j));
      const double length = axis.norm();
      if (length < 1e-6) continue;  // parallel edges: the face axes decide
      if (apart_along(axis / length)) return true;
    }
  }
  return false;
}

// The pair function for types a and b in either order (it takes the lower type first).
PairFunction PairFunctionOf(GeomType a, GeomType b) {
  return Index(a) <= Index(b) ? kPairTable[Index(a)][Index(b)] : kPairTable[Index(b)][Index(a)];
}

}  // namespace

int CollideShapes(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  if (IsSdfPair(a, b)) return BoundsApart(a, b, margin) ? 0 : CollideSdfPair(a, b, margin, out);
  const PairFunction collide = PairFunctionOf(a.type, b.type);
  if (collide == nullptr) return 0;
  // Mesh pairs first test their bounding spheres and boxes (BoundsApart): a cheap proof that
  // nothing is within the margin, which the general routine would reach with GJK after support
  // walks that start cold in every step. Pairs without a mesh skip the test, which keeps their
  // results bit for bit.
  if ((a.type == GeomType::kMesh || b.type == GeomType::kMesh) && BoundsApart(a, b, margin)) {
    return 0;
  }
  const bool swapped = Index(a.type) > Index(b.type);
  const GeomShape& first = swapped ? b : a;
  const GeomShape& second = swapped ? a : b;
  const int count = collide(first, second, margin, out);
  if (swapped) {
    for (int i = 0; i < count; ++i) out[i].normal = -out[i].normal;
  }
  return count;
}

namespace {

// CollideShapesCost by (type a, type b), either order.
std::array<std::array<int, kGeomTypes>, kGeomTypes> MakeCostTable() {
  std::array<std::array<int, kGeomTypes>, kGeomTypes> cost{};
  for (int a = 0; a < kGeomTypes; ++a) {
    for (int b = 0; b < kGeomTypes; ++b) {
      const GeomType ta = static_cast<GeomType>(a), tb = static_cast<GeomType>(b);
      const PairFunction collide = PairFunctionOf(ta, tb);
      if (ta == GeomType::kHeightField || tb == GeomType::kHeightField) {
        cost[a][b] = 0;
      } else if (ta == GeomType::kSdf || tb == GeomType::kSdf) {
        cost[a][b] = kSdfPairCost;
      } else {
        cost[a][b] = collide == nullptr ? 0 : collide == CollideConvex ? kGeneralConvexPairCost : 1;
      }
    }
  }
  return cost;
}

const auto kCostTable = MakeCostTable();

}  // namespace

int CollideShapesCost(GeomType a, GeomType b) { return kCostTable[Index(a)][Index(b)]; }

GeomShape ShapeOfGeom(const Model& m, const Data& d, int g) {
  GeomShape shape;
  shape.type = m.geom_type[g];
  shape.size = m.geom_size[g];
  shape.pos = d.geom_xpos[g];
  shape.rot = d.geom_xmat[g];
  shape.rbound = m.geom_rbound[g];
  shape.model = &m;
  shape.geom = g;
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
      shape.graph_dir_start =
          m.mesh_graph_dir_start.data() + 6 * kMeshStartCells * kMeshStartCells * mesh;
    }
  }
  return shape;
}

}  // namespace alsim
