#include "engine/collision/convex_pairs.h"

#include <ccd/ccd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "engine/collision/gjk_distance.h"
#include "engine/collision/mesh_hull.h"
#include "engine/collision/normal_refinement.h"
#include "engine/collision/smooth_pair_distance.h"

// Debian builds libccd in double precision (ccd/config.h defines CCD_DOUBLE), as does MuJoCo. A
// single-precision build could not reach the 1e-6 MPR tolerance, so refuse it at compile time.
static_assert(std::is_same_v<ccd_real_t, double>, "alsim needs libccd built with CCD_DOUBLE");

namespace alsim {
namespace {

constexpr double kTiny = 1e-15;

// ---------------------------------------------------------------- support functions

Vec3 UnitOrZero(const Vec3& d) {
  const double n = d.norm();
  return n > kTiny ? Vec3(d / n) : Vec3::Zero();
}

// +1 or -1; zero counts as positive so that ties pick a fixed corner.
double SignOrPlus(double x) { return x >= 0 ? 1.0 : -1.0; }

// The farthest mesh vertex along d (geom frame); the lowest index on ties.
Vec3 MeshSupport(const GeomShape& s, const Vec3& d) {
  if (s.vertex_count == 0) return Vec3::Zero();
  return s.vertices[MeshSupportVertex(s, d)];
}

// Support point in the geom frame along the geom-frame direction d.
Vec3 LocalSupport(const GeomShape& s, const Vec3& d) {
  switch (s.type) {
    case GeomType::kSphere:
      return s.size[0] * UnitOrZero(d);
    case GeomType::kCapsule:  // a sphere swept along z: sphere support plus the farther end
      return s.size[0] * UnitOrZero(d) + Vec3(0, 0, SignOrPlus(d.z()) * s.size[1]);
    case GeomType::kEllipsoid: {
      // x^T S^-2 x = 1 has normal S^-2 x; it is parallel to d at x = S^2 d / |S d|.
      const Vec3 scaled = s.size.cwiseProduct(d);
      const double norm = scaled.norm();
      if (norm < kTiny) return Vec3(s.size.x(), 0, 0);
      return s.size.cwiseProduct(scaled) / norm;
    }
    case GeomType::kCylinder: {  // the rim point of the end disk that faces d
      // d is a direction: hypot's overflow care is not needed, and it is slow.
      const double radial = std::sqrt(d.x() * d.x() + d.y() * d.y());
      const double scale = radial > kTiny ? s.size[0] / radial : 0.0;
      return Vec3(scale * d.x(), scale * d.y(), SignOrPlus(d.z()) * s.size[1]);
    }
    case GeomType::kBox:
      return Vec3(SignOrPlus(d.x()) * s.size.x(), SignOrPlus(d.y()) * s.size.y(),
                  SignOrPlus(d.z()) * s.size.z());
    case GeomType::kMesh:
      return MeshSupport(s, d);
    default:  // planes and height fields are not convex shapes
      return Vec3::Zero();
  }
}

// ---------------------------------------------------------------- MPR through libccd

// A shape as libccd sees it: grown by `inflation` in every direction (Minkowski sum with a
// ball), whose support is the shape's support plus inflation * unit(dir).
struct InflatedShape {
  const GeomShape* shape;
  double inflation;
};

Vec3 FromCcd(const ccd_vec3_t& v) { return Vec3(v.v[0], v.v[1], v.v[2]); }
void ToCcd(const Vec3& v, ccd_vec3_t* out) {
  for (int i = 0; i < 3; ++i) out->v[i] = v[i];
}

void CcdSupport(const void* obj, const ccd_vec3_t* dir, ccd_vec3_t* out) {
  const auto& inflated = *static_cast<const InflatedShape*>(obj);
  const Vec3 d = FromCcd(*dir);
  ToCcd(SupportPoint(*inflated.shape, d) + inflated.inflation * UnitOrZero(d), out);
}

// MPR needs a point inside each shape: the geom origin (MuJoCo centers meshes at their centroid).
void CcdCenter(const void* obj, ccd_vec3_t* center) {
  ToCcd(static_cast<const InflatedShape*>(obj)->shape->pos, center);
}

struct MprResult {
  double depth;  // penetration of the inflated shapes
  Vec3 normal;   // unit, from a toward b
  Vec3 pos;
};

// Penetration of a and b, each inflated by `inflation`; false when they do not overlap.
bool RunMpr(const GeomShape& a, const GeomShape& b, double inflation, MprResult* result) {
  ccd_t ccd;
  ccd.first_dir = ccdFirstDirDefault;
  ccd.support1 = CcdSupport;
  ccd.support2 = CcdSupport;
  ccd.center1 = CcdCenter;
  ccd.center2 = CcdCenter;
  ccd.max_iterations = kMprMaxIterations;
  ccd.mpr_tolerance = kMprTolerance;
  ccd.epa_tolerance = kMprTolerance;  // unused by MPR
  ccd.dist_tolerance = kMprTolerance;
  const InflatedShape obj_a{&a, inflation};
  const InflatedShape obj_b{&b, inflation};
  ccd_real_t depth = 0;
  ccd_vec3_t dir;
  ccd_vec3_t pos;
  // libccd: the penetration of obj2 into obj1; moving obj2 by depth * dir separates them.
  if (ccdMPRPenetration(&obj_a, &obj_b, &ccd, &depth, &dir, &pos) != 0) return false;
  const Vec3 normal = FromCcd(dir);
  if (!(normal.norm() > 0.5)) return false;  // touching at the center: no usable normal
  *result = {depth, normal.normalized(), FromCcd(pos)};
  return true;
}

// ---------------------------------------------------------------- support faces

constexpr int kMaxFaceVertices = 32;
constexpr int kDiskVertices = 8;  // a cylinder's end disk as an inscribed octagon

// A planar convex polygon on a shape's surface (world frame) with its outward unit normal.
struct Face {
  std::array<Vec3, kMaxFaceVertices> vertex;
  int count = 0;
  Vec3 normal = Vec3::Zero();
};

void SetFace(const GeomShape& s, const Vec3& local_normal, Face* face) {
  for (int i = 0; i < face->count; ++i) face->vertex[i] = s.rot * face->vertex[i] + s.pos;
  face->normal = s.rot * local_normal;
}

// The box face whose normal is closest to the geom-frame unit direction d.
void BoxFace(const GeomShape& s, const Vec3& d, Face* face) {
  int axis = 0;
  d.cwiseAbs().maxCoeff(&axis);
  const int j = (axis + 1) % 3;
  const int k = (axis + 2) % 3;
  const double side = SignOrPlus(d[axis]);
  const double corner_j[4] = {1, -1, -1, 1};
  const double corner_k[4] = {1, 1, -1, -1};
  for (int c = 0; c < 4; ++c) {
    Vec3& v = face->vertex[c];
    v[axis] = side * s.size[axis];
    v[j] = corner_j[c] * s.size[j];
    v[k] = corner_k[c] * s.size[k];
  }
  face->count = 4;
  SetFace(s, side * Vec3::Unit(axis), face);
}

// The end disk of a cylinder that faces d, as a regular polygon inscribed in its rim.
void CylinderDiskFace(const GeomShape& s, const Vec3& d, Face* face) {
  const double side = SignOrPlus(d.z());
  for (int i = 0; i < kDiskVertices; ++i) {
    const double angle = 2 * M_PI * i / kDiskVertices;
    face->vertex[i] =
        Vec3(s.size[0] * std::cos(angle), s.size[0] * std::sin(angle), side * s.size[1]);
  }
  face->count = kDiskVertices;
  SetFace(s, Vec3(0, 0, side), face);
}

// 2D cross product of (b - o) and (c - o).
double Cross2(const Eigen::Vector2d& o, const Eigen::Vector2d& b, const Eigen::Vector2d& c) {
  return (b.x() - o.x()) * (c.y() - o.y()) - (b.y() - o.y()) * (c.x() - o.x());
}

// Indices of the convex hull of points[0..n) in counter-clockwise order (Andrew's monotone chain),
// dropping collinear and repeated points; returns the hull size.
int ConvexHull2(const Eigen::Vector2d* points, int n, int* order, int* hull) {
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order, order + n, [points](int a, int b) {
    if (points[a].x() != points[b].x()) return points[a].x() < points[b].x();
    if (points[a].y() != points[b].y()) return points[a].y() < points[b].y();
    return a < b;
  });
  if (n < 3) return 0;
  int size = 0;
  for (int pass = 0; pass < 2; ++pass) {  // lower chain, then upper chain
    const int start = size;
    for (int step = 0; step < n; ++step) {
      const int i = pass == 0 ? order[step] : order[n - 1 - step];
      while (size >= start + 2 &&
             Cross2(points[hull[size - 2]], points[hull[size - 1]], points[i]) <= 0) {
        --size;
      }
      hull[size++] = i;
    }
    --size;  // the last point of each chain starts the other one
  }
  return size;
}

// A unit vector perpendicular to the unit vector n (deterministic).
Vec3 Perpendicular(const Vec3& n) {
  const Vec3 helper = std::abs(n.x()) < 0.6 ? Vec3::UnitX() : Vec3::UnitY();
  return n.cross(helper).normalized();
}

constexpr int kMaxGather = 2 * kMaxFaceVertices;  // vertices a mesh face may gather

// The face of mesh `s` with the given normal from its n vertices in the face's plane (source:
// their indices in s.vertices; flat: their plane coordinates): their convex hull. False when it
// is degenerate or has more than kMaxFaceVertices corners.
bool FaceFromPlaneVertices(const GeomShape& s, const Vec3& normal, const Eigen::Vector2d* flat,
                           const int* source, int n, Face* face) {
  std::array<int, kMaxGather> order;
  std::array<int, 2 * kMaxGather> hull;  // the monotone chain holds up to 2n - 1 points
  const int count = ConvexHull2(flat, n, order.data(), hull.data());
  if (count < 3 || count > kMaxFaceVertices) return false;
  for (int i = 0; i < count; ++i) face->vertex[i] = s.vertices[source[hull[i]]];
  face->count = count;
  SetFace(s, normal, face);
  return true;
}

// MeshFace for a mesh given with hull triangles but no hull graph (shapes built by hand): the
// hull triangle best aligned with d of all of them, grown to every vertex in its plane, by
// scanning. Imported meshes always carry the graph with their hull.
bool MeshFaceScan(const GeomShape& s, const Vec3& d, Face* face) {
  if (s.hull_face_count == 0 || s.vertex_count < 4) return false;
  Vec3 interior = Vec3::Zero();  // orients the triangle normals outward
  for (int i = 0; i < s.vertex_count; ++i) interior += s.vertices[i];
  interior /= s.vertex_count;
  double extent = 0;
  for (int i = 0; i < s.vertex_count; ++i) {
    extent = std::max(extent, (s.vertices[i] - interior).norm());
  }
  double best_cos = -2;
  Vec3 normal = Vec3::Zero();
  Vec3 on_plane = Vec3::Zero();
  for (int f = 0; f < s.hull_face_count; ++f) {
    const Eigen::Vector3i& t = s.hull_faces[f];
    const Vec3& v0 = s.vertices[t[0]];
    Vec3 n = (s.vertices[t[1]] - v0).cross(s.vertices[t[2]] - v0);
    const double len = n.norm();
    if (len <= 1e-12 * extent * extent) continue;  // sliver triangle
    n /= len;
    if (n.dot(v0 - interior) < 0) n = -n;
    if (n.dot(d) > best_cos) {
      best_cos = n.dot(d);
      normal = n;
      on_plane = v0;
    }
  }
  if (best_cos < -1) return false;
  // Vertices in the face's plane, in plane coordinates; their convex hull is the face.
  const double offset = normal.dot(on_plane);
  const double plane_tol = 1e-6 * extent;  // mesh vertices come from floats
  const Vec3 u = Perpendicular(normal);
  const Vec3 w = normal.cross(u);
  std::array<Eigen::Vector2d, kMaxGather> flat;
  std::array<int, kMaxGather> source;
  int n = 0;
  for (int i = 0; i < s.vertex_count; ++i) {
    if (std::abs(normal.dot(s.vertices[i]) - offset) > plane_tol) continue;
    if (n == kMaxGather) return false;
    flat[n] = Eigen::Vector2d(u.dot(s.vertices[i]), w.dot(s.vertices[i]));
    source[n++] = i;
  }
  return FaceFromPlaneVertices(s, normal, flat.data(), source.data(), n, face);
}

// The hull face of a mesh facing the geom-frame unit direction d: the hull triangle best aligned
// with d among those at the support vertex along d (MeshHullFace), grown to every hull vertex in
// its plane (qhull splits a planar face into triangles; the face is connected in the hull graph,
// so a walk from the support vertex finds it). False when the mesh has no hull graph or the face
// has too many vertices.
bool MeshFace(const GeomShape& s, const Vec3& d, Face* face) {
  if (s.graph_vert_count == 0) return MeshFaceScan(s, d, face);
  Vec3 normal;
  int support = -1;
  if (!MeshHullFace(s, d, &normal, &support)) return false;
  const Vec3& on_plane = s.vertices[s.graph_vert[support]];
  const double offset = normal.dot(on_plane);
  // The geom frame is centred on the mesh, so |on_plane| is its size; vertices come from floats.
  const double plane_tol = 1e-6 * on_plane.norm();
  std::array<int, kMaxGather + 1> in_plane;
  const int n = MeshHullVerticesAbove(s, normal, offset - plane_tol, support, kMaxGather + 1,
                                      in_plane.data());
  if (n > kMaxGather) return false;
  // The face's vertices in plane coordinates; their convex hull is the face.
  const Vec3 u = Perpendicular(normal);
  const Vec3 w = normal.cross(u);
  std::array<Eigen::Vector2d, kMaxGather> flat;
  std::array<int, kMaxGather> source;
  for (int i = 0; i < n; ++i) {
    source[i] = s.graph_vert[in_plane[i]];
    flat[i] = Eigen::Vector2d(u.dot(s.vertices[source[i]]), w.dot(s.vertices[source[i]]));
  }
  return FaceFromPlaneVertices(s, normal, flat.data(), source.data(), n, face);
}

// The flat feature of `s` facing the world unit direction `dir`, if `s` has one: a box face, a
// cylinder end disk or a mesh hull face.
bool SupportFace(const GeomShape& s, const Vec3& dir, Face* face) {
  const Vec3 d = s.rot.transpose() * dir;
  switch (s.type) {
    case GeomType::kBox:
      BoxFace(s, d, face);
      return true;
    case GeomType::kCylinder:
      CylinderDiskFace(s, d, face);
      return true;
    case GeomType::kMesh:
      return MeshFace(s, d, face);
    default:
      return false;
  }
}

// ---------------------------------------------------------------- face clipping

constexpr int kMaxClipVertices = 2 * kMaxFaceVertices;

// A convex polygon in contact-plane coordinates.
struct Polygon2 {
  std::array<Eigen::Vector2d, kMaxClipVertices> vertex;
  int count = 0;
};

// Keeps the part of `subject` on the left of the directed line c0 -> c1 (Sutherland-Hodgman step).
void ClipByEdge(const Polygon2& subject, const Eigen::Vector2d& c0, const Eigen::Vector2d& c1,
                Polygon2* out) {
  out->count = 0;
  for (int i = 0; i < subject.count; ++i) {
    const Eigen::Vector2d& p = subject.vertex[i];
    const Eigen::Vector2d& q = subject.vertex[(i + 1) % subject.count];
    const double dp = Cross2(c0, c1, p);
    const double dq = Cross2(c0, c1, q);
    if (dp >= 0 && out->count < kMaxClipVertices) out->vertex[out->count++] = p;
    if ((dp >= 0) != (dq >= 0) && out->count < kMaxClipVertices) {
      out->vertex[out->count++] = p + (dp / (dp - dq)) * (q - p);  // edge crosses the line
    }
  }
}

// subject ∩ clip for convex polygons; the clip polygon may have either orientation.
void ClipPolygon(const Polygon2& clip, Polygon2* subject) {
  double area2 = 0;
  for (int i = 0; i < clip.count; ++i) {
    area2 += Cross2(Eigen::Vector2d::Zero(), clip.vertex[i], clip.vertex[(i + 1) % clip.count]);
  }
  Polygon2 scratch;
  for (int i = 0; i < clip.count && subject->count > 0; ++i) {
    const Eigen::Vector2d& c0 = clip.vertex[i];
    const Eigen::Vector2d& c1 = clip.vertex[(i + 1) % clip.count];
    if (area2 >= 0) {
      ClipByEdge(*subject, c0, c1, &scratch);
    } else {
      ClipByEdge(*subject, c1, c0, &scratch);
    }
    *subject = scratch;
  }
}

// The contact plane: an origin and an orthonormal frame (u, w, normal).
struct ContactPlane {
  Vec3 origin;
  Vec3 u;
  Vec3 w;
  Vec3 normal;

  Eigen::Vector2d Project(const Vec3& p) const { return {u.dot(p - origin), w.dot(p - origin)}; }
  Vec3 Lift(const Eigen::Vector2d& p, double height) const {
    return origin + p.x() * u + p.y() * w + height * normal;
  }
  // Height along `normal` at which the plane of `face` passes above the plane point p.
  double FaceHeight(const Face& face, const Eigen::Vector2d& p) const {
    return (face.vertex[0] - Lift(p, 0)).dot(face.normal) / normal.dot(face.normal);
  }
};

Polygon2 ProjectFace(const ContactPlane& plane, const Face& face) {
  Polygon2 polygon;
  for (int i = 0; i < face.count; ++i) polygon.vertex[i] = plane.Project(face.vertex[i]);
  polygon.count = face.count;
  return polygon;
}

// ---------------------------------------------------------------- point selection

constexpr int kMaxCandidates = kMaxClipVertices + 1;

// Writes at most kMaxContactsPerPair of the candidates to `out`: the deepest first, then each
// time the one farthest from those already taken, so the points span the contact area.
// Candidates closer than `merge_dist` to a taken point are dropped as repeats.
int SelectSpread(const Contact* candidates, int n, double merge_dist, Contact* out) {
  if (n == 0) return 0;
  std::array<bool, kMaxCandidates> taken{};
  std::array<double, kMaxCandidates> gap2;  // squared distance to the nearest taken point
  int first = 0;
  for (int i = 1; i < n; ++i) {
    if (candidates[i].dist < candidates[first].dist) first = i;
  }
  int count = 0;
  int next = first;
  gap2.fill(INFINITY);
  while (next >= 0 && count < kMaxContactsPerPair) {
    taken[next] = true;
    out[count++] = candidates[next];
    int farthest = -1;
    for (int i = 0; i < n; ++i) {
      if (taken[i]) continue;
      gap2[i] = std::min(gap2[i], (candidates[i].pos - candidates[next].pos).squaredNorm());
      if (gap2[i] > merge_dist * merge_dist && (farthest < 0 || gap2[i] > gap2[farthest])) {
        farthest = i;
      }
    }
    next = farthest;
  }
  return count;
}

// ---------------------------------------------------------------- flat contact

// Alignment needed to treat the normal as a face normal of one shape (the reference face) and,
// looser, for the other shape's facing feature to count as a face (the incident face): points of
// a tilted incident face keep their true heights, so only the margin decides which of them count.
const double kReferenceCos = std::cos(1e-3);
const double kIncidentCos = std::cos(25 * M_PI / 180);

// Several points for face-on-face contact; 0 when the contact is not flat. `deepest` is the MPR
// point, which is added when it lies deeper than every clipped point (a tilted disk touches
// between the vertices of its polygon).
int FlatContacts(const GeomShape& a, const GeomShape& b, const Contact& deepest, double margin,
                 Contact* out) {
  Face face_a;
  Face face_b;
  if (!SupportFace(a, deepest.normal, &face_a) || !SupportFace(b, -deepest.normal, &face_b)) {
    return 0;
  }
  const double cos_a = face_a.normal.dot(deepest.normal);
  const double cos_b = -face_b.normal.dot(deepest.normal);
  if (std::max(cos_a, cos_b) < kReferenceCos || std::min(cos_a, cos_b) < kIncidentCos) return 0;
  // The better aligned face gives the normal exactly.
  ContactPlane plane;
  plane.normal = cos_a >= cos_b ? face_a.normal : Vec3(-face_b.normal);
  plane.origin = deepest.pos;
  plane.u = Perpendicular(plane.normal);
  plane.w = plane.normal.cross(plane.u);

  Polygon2 overlap = ProjectFace(plane, face_b);
  ClipPolygon(ProjectFace(plane, face_a), &overlap);

  std::array<Contact, kMaxCandidates> candidates;
  int n = 0;
  double deepest_clipped_dist = INFINITY;
  for (int i = 0; i < overlap.count; ++i) {
    const double height_a = plane.FaceHeight(face_a, overlap.vertex[i]);
    const double height_b = plane.FaceHeight(face_b, overlap.vertex[i]);
    const double dist = height_b - height_a;
    deepest_clipped_dist = std::min(deepest_clipped_dist, dist);
    if (!(dist < margin)) continue;
    Contact& c = candidates[n++];
    c.dist = dist;
    c.pos = plane.Lift(overlap.vertex[i], (height_a + height_b) / 2);
    c.normal = plane.normal;
  }
  if (n == 0) return 0;
  if (deepest.dist < deepest_clipped_dist - kMprTolerance) {
    candidates[n] = deepest;
    candidates[n++].normal = plane.normal;
  }
  const double size = std::max((a.size.norm() + b.size.norm()), kTiny);
  // With a mesh, points closer than kMeshPointSpacing are repeats; a fine mesh's face overlap
  // that is all one cluster is then no flat contact, and the caller's refined single point
  // (exact depth and normal) describes it better than a clipped vertex.
  const bool mesh = a.type == GeomType::kMesh || b.type == GeomType::kMesh;
  const double merge_dist =
      mesh ? std::max(1e-6 * size, kMeshPointSpacing * std::min(a.rbound, b.rbound)) : 1e-6 * size;
  const int count = SelectSpread(candidates.data(), n, merge_dist, out);
  return mesh && count == 1 ? 0 : count;
}

// ---------------------------------------------------------------- canonical order

// A strict order on shapes (type, pose, size, mesh) so that a pair is always solved the same way
// round, which makes CollideConvex exactly antisymmetric.
bool Precedes(const GeomShape& a, const GeomShape& b) {
  const auto key = [](const GeomShape& s) {
    std::array<double, 18> k;
    k[0] = static_cast<double>(s.type);
    for (int i = 0; i < 3; ++i) k[1 + i] = s.pos[i];
    for (int i = 0; i < 9; ++i) k[4 + i] = s.rot(i / 3, i % 3);
    for (int i = 0; i < 3; ++i) k[13 + i] = s.size[i];
    k[16] = s.vertex_count;
    k[17] = s.hull_face_count;
    return k;
  };
  const auto ka = key(a);
  const auto kb = key(b);
  if (ka != kb) return ka < kb;
  return std::less<const Vec3*>()(a.vertices, b.vertices);
}

bool StrictlyConvex(const GeomShape& s) {
  return s.type == GeomType::kSphere || s.type == GeomType::kEllipsoid;
}

// The midpoint between the surfaces. MPR's own point is a blend of portal support points that
// can sit millimetres off to the side; a strictly convex shape has a unique deepest point along
// the normal, and the other surface lies `dist` beyond it.
Vec3 ContactPoint(const GeomShape& a, const GeomShape& b, const Vec3& normal, double dist,
                  const Vec3& mpr_pos) {
  Vec3 from_a = SupportPoint(a, normal) + normal * (dist / 2);
  Vec3 from_b = SupportPoint(b, -normal) - normal * (dist / 2);
  if (StrictlyConvex(a) && StrictlyConvex(b)) return (from_a + from_b) / 2;
  if (StrictlyConvex(a)) return from_a;
  if (StrictlyConvex(b)) return from_b;
  return mpr_pos;
}

// ---------------------------------------------------------------- cores and GJK

// A geom as a body for distance queries. A sphere is its center and a capsule its axis segment
// (the core) grown by a ball of the geom's radius, so the geoms' distance is the cores' distance
// minus the radii, exactly, as long as the cores do not touch. Other types are their whole shape.
struct Body {
  const GeomShape* shape;
  bool core;
};

bool HasCore(const GeomShape& s) {
  return s.type == GeomType::kSphere || s.type == GeomType::kCapsule;
}

double CoreRadius(const Body& body) { return body.core ? body.shape->size[0] : 0.0; }

Vec3 BodySupport(const void* set, const Vec3& dir) {
  const Body& body = *static_cast<const Body*>(set);
  const GeomShape& s = *body.shape;
  if (!body.core) return SupportPoint(s, dir);
  if (s.type == GeomType::kSphere) return s.pos;
  const Vec3 axis = s.rot.col(2);
  return s.pos + SignOrPlus(axis.dot(dir)) * s.size[1] * axis;
}

// The body for RefineNormal; capsules and cylinders (and capsule cores) carry their axis, boxes
// their edge directions.
AxialBody Axial(const Body& body) {
  AxialBody axial;
  axial.mapping = {BodySupport, &body, body.shape->pos};
  const GeomType type = body.shape->type;
  if (type == GeomType::kCapsule || type == GeomType::kCylinder) {
    axial.axes[axial.axis_count++] = body.shape->rot.col(2);
  } else if (type == GeomType::kBox) {
    for (int k = 0; k < 3; ++k) axial.axes[axial.axis_count++] = body.shape->rot.col(k);
  }
  return axial;
}

// True when the body touches others at a single point along any direction: a sphere's center,
// a sphere or an ellipsoid.
bool UniqueSupport(const Body& body) {
  const GeomType type = body.shape->type;
  return type == GeomType::kSphere || (!body.core && type == GeomType::kEllipsoid);
}

// Curved bodies, whose GJK answer converges only linearly and is refined by RefineNormal.
bool Curved(const Body& body) {
  const GeomType type = body.shape->type;
  return !body.core && type != GeomType::kBox && type != GeomType::kMesh;
}

double PairScale(const GeomShape& a, const GeomShape& b) {
  return (a.pos - b.pos).norm() + a.size.norm() + b.size.norm() + kTiny;
}

// A body of smooth_pair_distance.h's family: a sphere's or capsule's core (a point or a
// segment), a whole ellipsoid or a whole cylinder.
bool InFamily(const Body& body) {
  const GeomType type = body.shape->type;
  if (body.core) return type == GeomType::kSphere || type == GeomType::kCapsule;
  return type == GeomType::kEllipsoid || type == GeomType::kCylinder;
}

SmoothBody SmoothBodyOf(const Body& body) {
  const GeomShape& s = *body.shape;
  switch (s.type) {
    case GeomType::kSphere:
      return PointBody(s.pos);
    case GeomType::kCapsule:
      return SegmentBody(s.pos, s.rot.col(2), s.size[1]);
    case GeomType::kCylinder:
      return CylinderBody(s.pos, s.rot.col(2), s.size[0], s.size[1]);
    default:
      return EllipsoidBody(s.pos, s.rot, s.size);
  }
}

// Whole ellipsoids and cylinders try the certificate before GJK (SmoothPairContact). Sphere and
// capsule cores do not: GJK between a core and a curved shape is short already, and the attempts
// cost more than they saved (docs/benchmarks-history.md).
bool CertifyFirst(const Body& body) { return InFamily(body) && !body.core; }

// The contact of a certified distance between the cores (or whole shapes) a and b.
Contact CertifiedContact(const Body& a, const Body& b, const SmoothPairDistance& found) {
  Contact c;
  c.normal = found.normal;
  c.dist = found.distance - CoreRadius(a) - CoreRadius(b);
  c.pos = found.point_a + found.normal * (CoreRadius(a) + c.dist / 2);
  return c;
}

// The contact of separated cores (or whole shapes): GJK's closest points, then, for curved
// bodies, the normal of least overlap with the distance along it (*refined_out says whether it
// replaced GJK's). Two bodies of the family get it certified (smooth_pair_distance.h) from GJK's
// normal, or along a segment's or cylinder's side; where neither holds, from RefineNormal. The
// touching point of a body with a unique support is exact; the other lies core_dist along the
// normal from it.
Contact SeparatedContact(const Body& a, const Body& b, const GjkDistanceResult& gjk,
                         bool* refined_out) {
  Vec3 normal = (gjk.point_b - gjk.point_a) / gjk.distance;
  double core_dist = gjk.distance;
  Vec3 witness_a = gjk.point_a;
  *refined_out = false;
  if ((Curved(a) || Curved(b)) && InFamily(a) && InFamily(b)) {
    const SmoothBody smooth_a = SmoothBodyOf(a);
    const SmoothBody smooth_b = SmoothBodyOf(b);
    const double scale = PairScale(*a.shape, *b.shape);
    // Whole shapes tried the sides in SmoothPairContact already, from the same start.
    SmoothPairDistance found;
    if (!(CertifyFirst(a) && CertifyFirst(b))) {
      found = SideDistance(smooth_a, smooth_b, INFINITY, scale);
    }
    if (found.outcome != SmoothPairOutcome::kApart) {
      found = SmoothPairDistanceOf(smooth_a, smooth_b, normal, INFINITY, scale);
    }
    if (found.outcome == SmoothPairOutcome::kApart) {
      *refined_out = true;
      return CertifiedContact(a, b, found);
    }
  }
  if (Curved(a) || Curved(b)) {
    const RefinedNormal refined =
        RefineNormal(Axial(a), Axial(b), normal, PairScale(*a.shape, *b.shape));
    *refined_out = refined.refined;
    if (refined.refined) {
      normal = refined.normal;
      core_dist = -refined.overlap;
      if (UniqueSupport(a)) {
        witness_a = BodySupport(&a, normal);
      } else if (UniqueSupport(b)) {
        witness_a = BodySupport(&b, -normal) - core_dist * normal;
      }
    }
  }
  Contact c;
  c.normal = normal;
  c.dist = core_dist - CoreRadius(a) - CoreRadius(b);
  c.pos = witness_a + normal * (CoreRadius(a) + c.dist / 2);
  return c;
}

// ---------------------------------------------------------------- MPR fallback

// The deepest point of overlapping cores or shapes from MPR on the shapes inflated by margin/2.
bool MprContact(const GeomShape& a, const GeomShape& b, double margin, Contact* deepest,
                Vec3* mpr_pos) {
  MprResult mpr;
  if (!RunMpr(a, b, margin / 2, &mpr)) return false;
  deepest->dist = margin - mpr.depth;
  deepest->normal = mpr.normal;
  deepest->pos = ContactPoint(a, b, mpr.normal, deepest->dist, mpr.pos);
  *mpr_pos = mpr.pos;
  return true;
}

// The outward surface normal (world) of a smooth shape through the world point p, from the
// level set of its shape function there; zero when undefined (p on the axis or the center).
Vec3 SurfaceNormalAt(const GeomShape& s, const Vec3& p) {
  const Vec3 local = s.rot.transpose() * (p - s.pos);
  Vec3 gradient = Vec3::Zero();
  switch (s.type) {
    case GeomType::kSphere:
      gradient = local;
      break;
    case GeomType::kCapsule:  // away from the nearest axis point
      gradient = local - Vec3(0, 0, std::clamp(local.z(), -s.size[1], s.size[1]));
      break;
    case GeomType::kEllipsoid:  // grad of x^T diag(1/a^2) x
      gradient = local.cwiseQuotient(s.size.cwiseAbs2());
      break;
    case GeomType::kCylinder:  // the curved side: radial
      gradient = Vec3(local.x(), local.y(), 0);
      break;
    default:
      break;
  }
  return s.rot * UnitOrZero(gradient);
}

// Directions where a face or a smooth surface may decide the contact: the face axes of boxes
// and cylinders (toward `start`), and the outward surface normal of each smooth shape at MPR's
// point (MuJoCo's correction), from a toward b. Returns the count (at most 8).
int CandidateDirections(const GeomShape& a, const GeomShape& b, const Vec3& start,
                        const Vec3& mpr_pos, Vec3* out) {
  int count = 0;
  const auto add = [&](const Vec3& n) {
    if (n.squaredNorm() > 0.25) out[count++] = n;
  };
  const auto oriented = [&start](const Vec3& n) { return n.dot(start) >= 0 ? n : Vec3(-n); };
  for (const GeomShape* s : {&a, &b}) {
    if (s->type == GeomType::kBox) {
      for (int k = 0; k < 3; ++k) add(oriented(s->rot.col(k)));
    } else {
      if (s->type == GeomType::kCylinder) add(oriented(s->rot.col(2)));
      const Vec3 outward = SurfaceNormalAt(*s, mpr_pos);
      add(s == &a ? outward : Vec3(-outward));
    }
  }
  return count;
}

// MPR's direction is wherever its portal converged, not the least overlap: for a pair with a
// curved shape, replace it by the refined normal (the surface normal of the smooth shape at its
// touching point) and measure the depth along it from the two support points (MPR's own depth
// can fall short of the overlap along its direction).
void RefineMprContact(const GeomShape& a, const GeomShape& b, const Vec3& mpr_pos,
                      Contact* deepest) {
  const Body body_a{&a, false};
  const Body body_b{&b, false};
  if (!Curved(body_a) && !Curved(body_b)) return;
  std::array<Vec3, 8> directions;
  const int direction_count =
      CandidateDirections(a, b, deepest->normal, mpr_pos, directions.data());
  const RefinedNormal refined = RefineNormal(Axial(body_a), Axial(body_b), deepest->normal,
                                             PairScale(a, b), directions.data(), direction_count);
  deepest->normal = refined.normal;  // MPR's own when nothing did better
  deepest->dist = -refined.overlap;
  deepest->pos = ContactPoint(a, b, refined.normal, deepest->dist, mpr_pos);
}

// ---------------------------------------------------------------- smooth pairs

enum class SmoothPairResult {
  kContact,   // *contact is the pair's contact (dist may be at or beyond the margin)
  kNone,      // certified farther apart than `reach`
  kTouching,  // GJK found the bodies touching: the caller's MPR path
  kUnknown,   // no certificate: the caller's general path
};

// Two whole shapes of the family apart, by the certificates of smooth_pair_distance.h: an end
// face, a side, or Newton from the direction between the centers, else from the first direction
// that GJK finds separating them (flat ellipsoids lying on each other are not apart along the line
// of their centers). For resting ellipsoid pairs this replaces GJK's long linear tail by a few
// Newton steps (BENCHMARKS.md, "General convex pairs").
SmoothPairResult SmoothPairContact(const Body& a, const Body& b, const SupportMapping& mapping_a,
                                   const SupportMapping& mapping_b, double reach,
                                   Contact* contact) {
  const Vec3 between = b.shape->pos - a.shape->pos;
  const double length = between.norm();
  if (!(length > 0)) return SmoothPairResult::kUnknown;
  const SmoothBody smooth_a = SmoothBodyOf(a);
  const SmoothBody smooth_b = SmoothBodyOf(b);
  const double scale = PairScale(*a.shape, *b.shape);
  const double beyond = reach * (1 + 1e-9);  // as GJK's stop in CollideOrdered
  SmoothPairDistance found = EndFaceDistance(smooth_a, smooth_b, beyond);
  if (found.outcome == SmoothPairOutcome::kUnknown) {
    found = SideDistance(smooth_a, smooth_b, beyond, scale);
  }
  if (found.outcome == SmoothPairOutcome::kUnknown) {
    found = SmoothPairDistanceOf(smooth_a, smooth_b, between / length, beyond, scale);
  }
  if (found.outcome == SmoothPairOutcome::kUnknown) {
    // GJK stopped at its first positive lower bound. It can only report touching if the full run
    // would: neither of that run's stops (the tolerance, the reach) comes before one.
    const GjkDistanceResult probe = GjkDistance(mapping_a, mapping_b, kGjkRelativeTolerance, 0.0);
    if (!probe.separated) return SmoothPairResult::kTouching;
    if (!probe.beyond) return SmoothPairResult::kUnknown;
    found = SmoothPairDistanceOf(smooth_a, smooth_b, probe.direction, beyond, scale);
  }
  if (found.outcome == SmoothPairOutcome::kBeyond) return SmoothPairResult::kNone;
  if (found.outcome != SmoothPairOutcome::kApart) return SmoothPairResult::kUnknown;
  *contact = CertifiedContact(a, b, found);
  return SmoothPairResult::kContact;
}

// Smooth pairs apart first (SmoothPairContact), then GJK between the cores (a sphere or capsule)
// or whole shapes: apart, the contact is exact; only touching cores fall back to MPR on the whole
// shapes.
int CollideOrdered(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  const Body body_a{&a, HasCore(a)};
  const Body body_b{&b, HasCore(b)};
  const SupportMapping mapping_a{BodySupport, &body_a, a.pos};
  const SupportMapping mapping_b{BodySupport, &body_b, b.pos};
  // A curved pair with a unique-support side gets its normal, distance and witness from
  // RefineNormal, exact whatever GJK's precision, so GJK may stop early there (it converges only
  // linearly on curved sets, and may run to kGjkMaxIterations).
  const bool refined_exactly =
      (Curved(body_a) || Curved(body_b)) && (UniqueSupport(body_a) || UniqueSupport(body_b));
  const double tolerance = refined_exactly ? kGjkRefinedTolerance : kGjkRelativeTolerance;
  // Cores farther apart than `reach` make no contact (the check below), so GJK may stop once it
  // proves that. The factors keep that stop strictly inside the check, rounding included: the
  // answer is the one GJK run to the end gives (the saving: docs/benchmarks-history.md).
  const double reach = margin + kTiny + CoreRadius(body_a) + CoreRadius(body_b);
  Contact deepest;
  bool touching = false;
  if (CertifyFirst(body_a) && CertifyFirst(body_b)) {
    switch (SmoothPairContact(body_a, body_b, mapping_a, mapping_b, reach, &deepest)) {
      case SmoothPairResult::kContact: {
        if (!(deepest.dist < margin)) return 0;
        const int flat = FlatContacts(a, b, deepest, margin, out);  // cylinder end faces
        if (flat > 0) return flat;
        out[0] = deepest;
        return 1;
      }
      case SmoothPairResult::kNone:
        return 0;
      case SmoothPairResult::kTouching:
        touching = true;
        break;
      case SmoothPairResult::kUnknown:
        break;
    }
  }
  GjkDistanceResult gjk;  // separated = false: touching
  if (!touching) {
    gjk = GjkDistance(mapping_a, mapping_b, tolerance, reach / (1 - tolerance) * (1 + 1e-9));
    if (gjk.beyond) return 0;
  }
  Vec3 mpr_pos = Vec3::Zero();
  if (gjk.separated) {
    // gjk.distance is an upper bound, within `tolerance` of the distance.
    const double lower_bound = gjk.distance * (1 - tolerance);
    if (!(lower_bound - CoreRadius(body_a) - CoreRadius(body_b) < margin + kTiny)) return 0;
    bool refined = false;
    deepest = SeparatedContact(body_a, body_b, gjk, &refined);
    if (!refined && refined_exactly) {
      // GJK's own answer is used after all: make it precise.
      const GjkDistanceResult precise = GjkDistance(mapping_a, mapping_b);
      if (precise.separated) deepest = SeparatedContact(body_a, body_b, precise, &refined);
    }
  } else if (!MprContact(a, b, margin, &deepest, &mpr_pos)) {
    return 0;
  }
  if (!(deepest.dist < margin)) return 0;
  const int flat = FlatContacts(a, b, deepest, margin, out);
  if (flat > 0) return flat;
  if (!gjk.separated) RefineMprContact(a, b, mpr_pos, &deepest);
  if (!(deepest.dist < margin)) return 0;
  out[0] = deepest;
  return 1;
}

}  // namespace

Vec3 SupportPoint(const GeomShape& shape, const Vec3& dir) {
  return shape.rot * LocalSupport(shape, shape.rot.transpose() * dir) + shape.pos;
}

int CollideConvex(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  if (!Precedes(b, a)) return CollideOrdered(a, b, margin, out);
  const int count = CollideOrdered(b, a, margin, out);
  for (int i = 0; i < count; ++i) out[i].normal = -out[i].normal;
  return count;
}

}  // namespace alsim
