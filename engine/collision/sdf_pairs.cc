#include "engine/collision/sdf_pairs.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "engine/collision/convex_pairs.h"
#include "engine/collision/sdf_revolution.h"
#include "engine/collision/sdf_thread.h"

namespace alsim {
namespace {

// ---------------------------------------------------------------- fields, in their own frame

// Each field's Lipschitz(c, rho): a Lipschitz constant over the ball of radius rho about c, for
// the cull F(y) >= F(c) - L |y - c| (infinite where none is known).
struct RevolutionField {
  SdfRevolution shape;
  double Value(const Vec3& p) const { return shape.Distance(p); }
  double ValueAndGradient(const Vec3& p, Vec3* g) const { return shape.DistanceAndGradient(p, g); }
  double Lipschitz(const Vec3&, double) const { return 1; }
};

// |grad| <= sec alpha(r) = sqrt(1 + (b / r)^2), b = P / (2 pi) (sdf_thread.h), largest at the
// ball's smallest radius from the axis.
struct ThreadField {
  SdfThread shape;
  double Value(const Vec3& p) const { return shape.Distance(p); }
  double ValueAndGradient(const Vec3& p, Vec3* g) const { return shape.DistanceAndGradient(p, g); }
  double Lipschitz(const Vec3& c, double rho) const {
    const double r = std::hypot(c.x(), c.y()) - rho;
    if (!(r > 0)) return std::numeric_limits<double>::infinity();
    const double b = shape.pitch / (2 * 3.14159265358979323846);
    return std::sqrt(1 + (b / r) * (b / r));
  }
};

// |p| - r; the gradient +z at the center.
struct SphereField {
  double Lipschitz(const Vec3&, double) const { return 1; }
  double radius;
  double Value(const Vec3& p) const { return p.norm() - radius; }
  double ValueAndGradient(const Vec3& p, Vec3* g) const {
    const double length = p.norm();
    *g = length > 0 ? Vec3(p / length) : Vec3::UnitZ();
    return length - radius;
  }
};

// The distance to the segment z in [-h, h] minus r; on the axis the gradient is +x.
struct CapsuleField {
  double Lipschitz(const Vec3&, double) const { return 1; }
  double radius;
  double half;
  double Value(const Vec3& p) const {
    return (p - Vec3(0, 0, std::clamp(p.z(), -half, half))).norm() - radius;
  }
  double ValueAndGradient(const Vec3& p, Vec3* g) const {
    const Vec3 offset = p - Vec3(0, 0, std::clamp(p.z(), -half, half));
    const double length = offset.norm();
    *g = length > 0 ? Vec3(offset / length) : Vec3::UnitX();
    return length - radius;
  }
};

// The box's, cylinder's and ellipsoid's fields (BoxField, CylinderField, EllipsoidField).
struct BoxPrimitiveField {
  Vec3 half;
  double Lipschitz(const Vec3&, double) const { return 1; }
  double Value(const Vec3& p) const {
    Vec3 g;
    return BoxField(half, p, &g);
  }
  double ValueAndGradient(const Vec3& p, Vec3* g) const { return BoxField(half, p, g); }
};

struct CylinderPrimitiveField {
  double radius;
  double half;
  double Lipschitz(const Vec3&, double) const { return 1; }
  double Value(const Vec3& p) const {
    Vec3 g;
    return CylinderField(radius, half, p, &g);
  }
  double ValueAndGradient(const Vec3& p, Vec3* g) const {
    return CylinderField(radius, half, p, g);
  }
};

// L = 2 + (a_max / a_min)^2 bounds |grad f| outside the solid (sdf_pairs.h).
struct EllipsoidPrimitiveField {
  Vec3 semi;
  double Lipschitz(const Vec3&, double) const {
    const double ratio = semi.maxCoeff() / semi.minCoeff();
    return 2 + ratio * ratio;
  }
  double Value(const Vec3& p) const {
    Vec3 g;
    return EllipsoidField(semi, p, &g);
  }
  double ValueAndGradient(const Vec3& p, Vec3* g) const { return EllipsoidField(semi, p, g); }
};

// A field with its pose in the world and its box in its own frame.
template <class Field>
struct PlacedField {
  Field field;
  Vec3 pos;
  Mat3 rot;
  Vec3 lo;
  Vec3 hi;
};

// ---------------------------------------------------------------- raw contacts

// Raw contacts of one pair on the stack, reduced to kMaxContactsPerSdfPair whenever the array
// fills (a function of the order of arrival, so deterministic).
class RawContacts {
 public:
  explicit RawContacts(double spacing) : spacing_(spacing), base_spacing_(spacing) {}
  // A full buffer is reduced, and the next such reduction starts from the spacing that one
  // needed: the kept contacts are already that far apart, so the passes below it would fail
  // again. The last reduction starts from the base spacing, so that the pair keeps as many
  // contacts, up to the cap, as the smallest spacing allows.
  void Add(double dist, const Vec3& pos, const Vec3& normal) {
    if (count_ == kSdfRawContacts) {
      count_ = ReduceContacts(raw_.data(), count_, kMaxContactsPerSdfPair, spacing_, &spacing_);
    }
    raw_[count_++] = RawContact{pos, normal, dist};
  }
  int Finish(Contact* out) {
    count_ = ReduceContacts(raw_.data(), count_, kMaxContactsPerSdfPair, base_spacing_);
    for (int i = 0; i < count_; ++i) {
      out[i].dist = raw_[i].dist;
      out[i].pos = raw_[i].pos;
      out[i].normal = raw_[i].normal;
    }
    return count_;
  }

 private:
  std::array<RawContact, kSdfRawContacts> raw_;
  int count_ = 0;
  double spacing_;
  double base_spacing_;
};

// ---------------------------------------------------------------- Frank-Wolfe

// One descent step from x (value, gradient g) along `step` (the whole step stays feasible): the
// secant of the directional derivative between 0 and 1 (1 where the field still descends at the
// end), halved until the field decreases. False when no trial decreases it.
template <class Field>
bool DescentStep(const Field& f, const Vec3& step, Vec3* x, double* value, Vec3* g) {
  const double slope0 = g->dot(step);
  if (!(slope0 < 0)) return false;
  Vec3 g_end;
  f.ValueAndGradient(*x + step, &g_end);
  const double slope1 = g_end.dot(step);
  double gamma = slope1 <= 0 ? 1.0 : slope0 / (slope0 - slope1);
  for (int halving = 0; halving < 4; ++halving, gamma *= 0.5) {
    Vec3 g_try;
    const Vec3 y = *x + gamma * step;
    const double value_try = f.ValueAndGradient(y, &g_try);
    if (value_try < *value) {
      *x = y;
      *g = g_try;
      *value = value_try;
      return true;
    }
  }
  return false;
}

// Minimizes the field over the triangle v (its frame; a repeated or collinear vertex makes it a
// segment): the minimum's value, point and gradient. Each iteration first tries the projected
// gradient, -g minus its part off the triangle's plane (or line) taken to the triangle's edge,
// which reaches an interior minimum where Frank-Wolfe alone would zig-zag, then the Frank-Wolfe
// step; the Frank-Wolfe gap bounds the error of a convex field.
template <class Field>
double MinimizeOverTriangle(const Field& f, const Vec3* v, Vec3* x_out, Vec3* g_out) {
  int start = 0;
  double values[3];
  for (int i = 0; i < 3; ++i) {
    values[i] = f.Value(v[i]);
    if (values[i] < values[start]) start = i;
  }
  // The triangle's plane through barycentric coordinates (e1, e2 from v0), or its longest side.
  const Vec3 e1 = v[1] - v[0], e2 = v[2] - v[0];
  const double g11 = e1.dot(e1), g12 = e1.dot(e2), g22 = e2.dot(e2);
  const double det = g11 * g22 - g12 * g12;
  const bool planar = det > 1e-12 * std::max(g11, g22) * std::max(g11, g22);
  int p0 = 0, p1 = 1;  // the longest side's ends
  if (!planar) {
    if ((v[2] - v[0]).squaredNorm() > (v[p1] - v[p0]).squaredNorm()) p1 = 2;
    if ((v[2] - v[1]).squaredNorm() > (v[p1] - v[p0]).squaredNorm()) p0 = 1, p1 = 2;
  }
  const Vec3 side = v[p1] - v[p0];
  const double side2 = side.squaredNorm();
  // Coordinates of a point: barycentric (planar) or the parameter along the side.
  const auto coordinates = [&](const Vec3& p, double* c) {
    const Vec3 w = p - v[0];
    if (planar) {
      const double r1 = e1.dot(w), r2 = e2.dot(w);
      c[1] = (g22 * r1 - g12 * r2) / det;
      c[2] = (g11 * r2 - g12 * r1) / det;
      c[0] = 1 - c[1] - c[2];
    } else {
      c[1] = side2 > 0 ? (p - v[p0]).dot(side) / side2 : 0;
      c[0] = 1 - c[1];
      c[2] = 0;
    }
  };
  const Vec3 normal = planar ? Vec3(e1.cross(e2).normalized()) : Vec3::Zero();
  Vec3 x = v[start];
  Vec3 g;
  double value = f.ValueAndGradient(x, &g);
  for (int iteration = 0; iteration < kFrankWolfeIterations; ++iteration) {
    int s = 0;
    for (int i = 1; i < 3; ++i) {
      if (g.dot(v[i]) < g.dot(v[s])) s = i;
    }
    if (g.dot(x - v[s]) <= kFrankWolfeGap) break;
    // Projected gradient to the edge: the largest t with every coordinate of x + t d >= 0.
    Vec3 d = Vec3::Zero();
    if (planar) {
      d = -(g - g.dot(normal) * normal);
    } else if (side2 > 0) {
      d = -(g.dot(side) / side2) * side;
    }
    bool moved = false;
    if (d.squaredNorm() > 0) {
      double at[3], ahead[3];
      coordinates(x, at);
      coordinates(x + d, ahead);
      double t_max = 1e300;
      for (int i = 0; i < (planar ? 3 : 2); ++i) {
        const double rate = ahead[i] - at[i];
        if (rate < 0) t_max = std::min(t_max, std::max(at[i], 0.0) / -rate);
      }
      if (t_max * d.norm() > kFrankWolfeGap) moved = DescentStep(f, t_max * d, &x, &value, &g);
    }
    if (!moved) moved = DescentStep(f, Vec3(v[s] - x), &x, &value, &g);
    if (!moved) break;
  }
  *x_out = x;
  *g_out = g;
  return value;
}

// The field's minimum over each triangle of `faces` (vertices in the other geom's frame, placed
// at other_pos, other_rot) that can come within the margin: raw contacts at dist F - inflate,
// normals the field's gradient (negated when the field's geom is b: `field_is_b`).
template <class Field>
void FieldOverTriangles(const PlacedField<Field>& f, const Vec3& other_pos, const Mat3& other_rot,
                        const Vec3* vertices, const Eigen::Vector3i* faces, int face_count,
                        double inflate, double margin, bool field_is_b, RawContacts* raw) {
  const Mat3 rot = f.rot.transpose() * other_rot;  // other frame -> field frame
  const Vec3 shift = f.rot.transpose() * (other_pos - f.pos);
  const Vec3 lo = f.lo - Vec3::Constant(margin + inflate);
  const Vec3 hi = f.hi + Vec3::Constant(margin + inflate);
  for (int t = 0; t < face_count; ++t) {
    Vec3 v[3];
    for (int i = 0; i < 3; ++i) v[i] = rot * vertices[faces[t][i]] + shift;
    const Vec3 tlo = v[0].cwiseMin(v[1]).cwiseMin(v[2]);
    const Vec3 thi = v[0].cwiseMax(v[1]).cwiseMax(v[2]);
    if ((tlo.array() > hi.array()).any() || (thi.array() < lo.array()).any()) continue;
    const Vec3 centroid = (v[0] + v[1] + v[2]) / 3;
    const double circumradius =
        std::max({(v[0] - centroid).norm(), (v[1] - centroid).norm(), (v[2] - centroid).norm()});
    const double lipschitz = f.field.Lipschitz(centroid, circumradius);
    if (f.field.Value(centroid) - lipschitz * circumradius - inflate >= margin) continue;
    const auto add = [&](const Vec3& x, const Vec3& g, double value) {
      const double dist = value - inflate;
      if (!(dist < margin)) return;
      const Vec3 unit = g.normalized();  // the thread's gradient is not unit
      const Vec3 normal = f.rot * unit;
      const Vec3 pos = f.pos + f.rot * (x - unit * ((value + inflate) / 2));
      raw->Add(dist, pos, field_is_b ? Vec3(-normal) : normal);
    };
    Vec3 x;
    Vec3 g;
    const double minimum = MinimizeOverTriangle(f.field, v, &x, &g);
    add(x, g, minimum);
    // The vertices within the margin too: where the field is flat over a face (a box on a floor,
    // conforming dishes) the minimum is any of them, and the contact area needs them all.
    for (int i = 0; i < 3; ++i) {
      if (v[i] == x) continue;
      Vec3 gv;
      const double value = f.field.ValueAndGradient(v[i], &gv);
      add(v[i], gv, value);
    }
  }
}

// ---------------------------------------------------------------- the pairs

// Calls fn with the SDF geom's field, placed: SdfKind selects the field's type.
template <class Shape, class Field>
PlacedField<Field> Place(const Shape& shape, const GeomShape& s) {
  const SdfBox box = shape.LocalBox();
  return PlacedField<Field>{Field{shape}, s.pos, s.rot, box.lo, box.hi};
}

// An SDF geom's record in its Model (ShapeOfGeom's shapes only).
struct SdfRecord {
  SdfKind kind;
  const double* param;
  const Vec3* vertices;
  int vertex_count;
  const Eigen::Vector3i* faces;
  int face_count;
};

SdfRecord RecordOf(const GeomShape& s) {
  const Model& m = *s.model;
  const int k = m.geom_sdf[s.geom];
  return {m.sdf_kind[k],
          m.sdf_param.data() + m.sdf_param_adr[k],
          m.sdf_vert.data() + m.sdf_vert_adr[k],
          m.sdf_vert_num[k],
          m.sdf_face.data() + m.sdf_face_adr[k],
          m.sdf_face_num[k]};
}

template <class Fn>
void WithField(const GeomShape& s, const Fn& fn) {
  const SdfRecord record = RecordOf(s);
  if (record.kind == SdfKind::kThread) {
    fn(Place<SdfThread, ThreadField>(SdfThread::FromParameters(record.param), s));
  } else {
    fn(Place<SdfRevolution, RevolutionField>(SdfRevolution::FromParameters(record.param), s));
  }
}

// The box's 8 corners (bit i of the index: the sign along axis i) and its 12 face triangles.
constexpr int kBoxFaces[12][3] = {{0, 4, 6}, {0, 6, 2}, {1, 3, 7}, {1, 7, 5}, {0, 1, 5}, {0, 5, 4},
                                  {2, 6, 7}, {2, 7, 3}, {0, 2, 3}, {0, 3, 1}, {4, 5, 7}, {4, 7, 6}};

template <class Field>
void FieldOverBox(const PlacedField<Field>& f, const GeomShape& box, double margin, bool field_is_b,
                  RawContacts* raw) {
  std::array<Vec3, 8> corners;
  for (int i = 0; i < 8; ++i) {
    corners[i] = Vec3((i & 1) ? box.size[0] : -box.size[0], (i & 2) ? box.size[1] : -box.size[1],
                      (i & 4) ? box.size[2] : -box.size[2]);
  }
  std::array<Eigen::Vector3i, 12> faces;
  for (int t = 0; t < 12; ++t)
    faces[t] = Eigen::Vector3i(kBoxFaces[t][0], kBoxFaces[t][1], kBoxFaces[t][2]);
  FieldOverTriangles(f, box.pos, box.rot, corners.data(), faces.data(), 12, 0.0, margin, field_is_b,
                     raw);
}

// A capsule's axis in kCapsulePieces pieces, each a triangle with a repeated vertex, inflated
// by its radius.
constexpr int kCapsulePieces = 8;

template <class Field>
void FieldOverCapsule(const PlacedField<Field>& f, const GeomShape& capsule, double margin,
                      bool field_is_b, RawContacts* raw) {
  std::array<Vec3, kCapsulePieces + 1> points;
  std::array<Eigen::Vector3i, kCapsulePieces> pieces;
  for (int i = 0; i <= kCapsulePieces; ++i) {
    points[i] = Vec3(0, 0, capsule.size[1] * (2.0 * i / kCapsulePieces - 1));
  }
  for (int i = 0; i < kCapsulePieces; ++i) pieces[i] = Eigen::Vector3i(i, i + 1, i + 1);
  FieldOverTriangles(f, capsule.pos, capsule.rot, points.data(), pieces.data(), kCapsulePieces,
                     capsule.size[0], margin, field_is_b, raw);
}

// The SDF's surface vertices against a plane (normal its local z, from the plane toward the SDF).
void SdfOverPlane(const GeomShape& sdf, const GeomShape& plane, double margin, bool sdf_is_b,
                  RawContacts* raw) {
  const Vec3 normal = plane.rot.col(2);
  const double offset = normal.dot(plane.pos);
  const SdfRecord record = RecordOf(sdf);
  for (int i = 0; i < record.vertex_count; ++i) {
    const Vec3 v = sdf.pos + sdf.rot * record.vertices[i];
    const double dist = normal.dot(v) - offset;
    if (!(dist < margin)) continue;
    raw->Add(dist, v - normal * (dist / 2), sdf_is_b ? normal : Vec3(-normal));
  }
}

// Frank-Wolfe over a convex solid with its support point as the oracle: one contact.
template <class Field>
void SdfOverConvex(const PlacedField<Field>& f, const GeomShape& convex, double margin,
                   bool field_is_b, RawContacts* raw) {
  const auto evaluate = [&f](const Vec3& x, Vec3* g) {
    Vec3 local_g;
    const double value = f.field.ValueAndGradient(f.rot.transpose() * (x - f.pos), &local_g);
    *g = f.rot * local_g;
    return value;
  };
  Vec3 g;
  evaluate(convex.pos, &g);
  Vec3 x = SupportPoint(convex, -g);
  double value = evaluate(x, &g);
  for (int iteration = 0; iteration < kFrankWolfeIterations; ++iteration) {
    const Vec3 s = SupportPoint(convex, -g);
    const Vec3 direction = s - x;
    const double slope0 = g.dot(direction);
    if (-slope0 <= kFrankWolfeGap) break;
    Vec3 g_end;
    evaluate(s, &g_end);
    const double slope1 = g_end.dot(direction);
    double gamma = slope1 <= 0 ? 1.0 : slope0 / (slope0 - slope1);
    bool moved = false;
    for (int halving = 0; halving < 4 && !moved; ++halving, gamma *= 0.5) {
      Vec3 g_try;
      const Vec3 y = x + gamma * direction;
      const double value_try = evaluate(y, &g_try);
      if (value_try < value) {
        x = y;
        g = g_try;
        value = value_try;
        moved = true;
      }
    }
    if (!moved) break;
  }
  if (!(value < margin)) return;
  const Vec3 unit = g.normalized();
  raw->Add(value, x - unit * (value / 2), field_is_b ? Vec3(-unit) : unit);
}

// The triangles a mesh collides by: its own if concave, else its hull's.
const Eigen::Vector3i* MeshTriangles(const GeomShape& mesh, int* count) {
  if (!IsConcave(mesh)) {
    *count = mesh.hull_face_count;
    return mesh.hull_faces;
  }
  const Model& m = *mesh.model;
  const int k = m.geom_mesh[mesh.geom];
  *count = m.mesh_face_num[k];
  return m.mesh_face.data() + m.mesh_face_adr[k];
}

// SDF geom `sdf` against any geom `other`; `sdf_is_b` orients the normals from a toward b.
template <class Field>
void FieldAgainst(const PlacedField<Field>& f, const GeomShape& sdf, const GeomShape& other,
                  double margin, bool sdf_is_b, RawContacts* raw) {
  switch (other.type) {
    case GeomType::kSphere: {
      Vec3 g;
      const Vec3 c = sdf.rot.transpose() * (other.pos - sdf.pos);
      const double value = f.field.ValueAndGradient(c, &g);
      const double dist = value - other.size[0];
      if (!(dist < margin)) return;
      const Vec3 unit = g.normalized();
      const Vec3 normal = sdf.rot * unit;
      raw->Add(dist, sdf.pos + sdf.rot * (c - unit * ((value + other.size[0]) / 2)),
               sdf_is_b ? Vec3(-normal) : normal);
      return;
    }
    case GeomType::kCapsule:
      FieldOverCapsule(f, other, margin, sdf_is_b, raw);
      return;
    case GeomType::kBox:
      FieldOverBox(f, other, margin, sdf_is_b, raw);
      return;
    case GeomType::kPlane:
      SdfOverPlane(sdf, other, margin, sdf_is_b, raw);
      return;
    case GeomType::kMesh: {
      int count = 0;
      const Eigen::Vector3i* faces = MeshTriangles(other, &count);
      FieldOverTriangles(f, other.pos, other.rot, other.vertices, faces, count, 0.0, margin,
                         sdf_is_b, raw);
      return;
    }
    case GeomType::kSdf: {
      const SdfRecord record = RecordOf(other);
      FieldOverTriangles(f, other.pos, other.rot, record.vertices, record.faces, record.face_count,
                         0.0, margin, sdf_is_b, raw);
      return;
    }
    case GeomType::kCylinder:
    case GeomType::kEllipsoid:
      SdfOverConvex(f, other, margin, sdf_is_b, raw);
      return;
    default:
      return;  // height fields never collide
  }
}

void SdfAgainst(const GeomShape& sdf, const GeomShape& other, double margin, bool sdf_is_b,
                RawContacts* raw) {
  WithField(sdf, [&](const auto& f) { FieldAgainst(f, sdf, other, margin, sdf_is_b, raw); });
}

// The primitive's surface points `points` (world) against the mesh's triangles (sdf_pairs.h):
// each triangle's normal oriented toward the primitive's center; a point within [-depth, margin)
// of its plane whose projection lies inside it (barycentric coordinates >= 0) is a contact.
// Triangles are culled by their box against the points' box grown by margin and depth.
void PointsOverTriangles(const Vec3* points, int point_count, const Vec3& center,
                         const GeomShape& mesh, const Eigen::Vector3i* faces, int face_count,
                         double depth, double margin, bool primitive_is_b, RawContacts* raw) {
  constexpr int kMaxPoints = 2 * kCylinderRimPoints;
  std::array<Vec3, kMaxPoints> local;
  const Vec3 c = mesh.rot.transpose() * (center - mesh.pos);
  const double reach = std::max(margin, 0.0) + depth;
  Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity());
  Vec3 hi = -lo;
  for (int i = 0; i < point_count; ++i) {
    local[i] = mesh.rot.transpose() * (points[i] - mesh.pos);
    lo = lo.cwiseMin(local[i]);
    hi = hi.cwiseMax(local[i]);
  }
  lo.array() -= reach;
  hi.array() += reach;
  for (int t = 0; t < face_count; ++t) {
    const Vec3& v0 = mesh.vertices[faces[t][0]];
    const Vec3& v1 = mesh.vertices[faces[t][1]];
    const Vec3& v2 = mesh.vertices[faces[t][2]];
    const Vec3 tlo = v0.cwiseMin(v1).cwiseMin(v2);
    const Vec3 thi = v0.cwiseMax(v1).cwiseMax(v2);
    if ((tlo.array() > hi.array()).any() || (thi.array() < lo.array()).any()) continue;
    const Vec3 e1 = v1 - v0, e2 = v2 - v0;
    Vec3 n = e1.cross(e2);
    const double area2 = n.norm();
    if (!(area2 > 0)) continue;  // a degenerate triangle has no plane
    n /= area2;
    const double side = n.dot(c - v0);
    if (side == 0) continue;  // the center on the plane: no side to push toward
    if (side < 0) n = -n;
    // Barycentric coordinates of the projection q = p - s n from the Gram matrix of e1, e2.
    const double g11 = e1.dot(e1), g12 = e1.dot(e2), g22 = e2.dot(e2);
    const double det = g11 * g22 - g12 * g12;
    for (int i = 0; i < point_count; ++i) {
      const Vec3 w = local[i] - v0;
      const double s = n.dot(w);
      if (!(s < margin) || s < -depth) continue;
      const double r1 = e1.dot(w), r2 = e2.dot(w);
      const double b1 = (g22 * r1 - g12 * r2) / det, b2 = (g11 * r2 - g12 * r1) / det;
      if (b1 < 0 || b2 < 0 || b1 + b2 > 1) continue;
      const Vec3 normal = mesh.rot * n;
      raw->Add(s, points[i] - normal * (s / 2), primitive_is_b ? normal : Vec3(-normal));
    }
  }
}

// A primitive's field over a concave mesh's triangles, and a box's corners or a cylinder's rim
// points against them.
void PrimitiveOverConcave(const GeomShape& primitive, const GeomShape& mesh, double margin,
                          bool primitive_is_b, RawContacts* raw) {
  int count = 0;
  const Eigen::Vector3i* faces = MeshTriangles(mesh, &count);
  const auto over = [&](const auto& f) {
    FieldOverTriangles(f, mesh.pos, mesh.rot, mesh.vertices, faces, count, 0.0, margin,
                       primitive_is_b, raw);
  };
  const Vec3& size = primitive.size;
  switch (primitive.type) {
    case GeomType::kSphere: {
      const double r = size[0];
      over(PlacedField<SphereField>{
          {r}, primitive.pos, primitive.rot, Vec3::Constant(-r), Vec3::Constant(r)});
      return;
    }
    case GeomType::kCapsule: {
      const double r = size[0], h = size[1];
      over(PlacedField<CapsuleField>{
          {r, h}, primitive.pos, primitive.rot, Vec3(-r, -r, -h - r), Vec3(r, r, h + r)});
      return;
    }
    case GeomType::kBox: {
      over(PlacedField<BoxPrimitiveField>{{size}, primitive.pos, primitive.rot, -size, size});
      std::array<Vec3, 8> corners;
      for (int i = 0; i < 8; ++i) {
        const Vec3 local((i & 1) ? size[0] : -size[0], (i & 2) ? size[1] : -size[1],
                         (i & 4) ? size[2] : -size[2]);
        corners[i] = primitive.pos + primitive.rot * local;
      }
      PointsOverTriangles(corners.data(), 8, primitive.pos, mesh, faces, count, size.minCoeff(),
                          margin, primitive_is_b, raw);
      return;
    }
    case GeomType::kCylinder: {
      const double r = size[0], h = size[1];
      over(PlacedField<CylinderPrimitiveField>{
          {r, h}, primitive.pos, primitive.rot, Vec3(-r, -r, -h), Vec3(r, r, h)});
      // Rim points at angles 2 pi k / kCylinderRimPoints, the lower circle first.
      std::array<Vec3, 2 * kCylinderRimPoints> rim;
      for (int k = 0; k < 2 * kCylinderRimPoints; ++k) {
        const double angle =
            2 * 3.14159265358979323846 * (k % kCylinderRimPoints) / kCylinderRimPoints;
        const Vec3 local(r * std::cos(angle), r * std::sin(angle), k < kCylinderRimPoints ? -h : h);
        rim[k] = primitive.pos + primitive.rot * local;
      }
      PointsOverTriangles(rim.data(), 2 * kCylinderRimPoints, primitive.pos, mesh, faces, count,
                          std::min(r, h), margin, primitive_is_b, raw);
      return;
    }
    case GeomType::kEllipsoid:
      over(PlacedField<EllipsoidPrimitiveField>{{size}, primitive.pos, primitive.rot, -size, size});
      return;
    default:
      return;  // IsSdfPair sends no other type here
  }
}

}  // namespace

int CollideSdfPair(const GeomShape& a, const GeomShape& b, double margin, Contact* out) {
  // Spacing of repeats: a thousandth of the smaller geom (a plane's rbound is 0).
  const double scale =
      a.rbound > 0 && b.rbound > 0 ? std::min(a.rbound, b.rbound) : std::max(a.rbound, b.rbound);
  RawContacts raw(1e-3 * scale);
  if (a.type == GeomType::kSdf && b.type == GeomType::kSdf) {
    // The larger field over the smaller one's triangles (ties: a's field over b's): the smaller
    // triangulation's chords sag less. A geom without a triangulation gives the field.
    const int a_faces = RecordOf(a).face_count, b_faces = RecordOf(b).face_count;
    const bool b_field = a_faces == 0 ? true : b_faces == 0 ? false : b.rbound > a.rbound;
    if (b_field) {
      SdfAgainst(b, a, margin, true, &raw);
    } else {
      SdfAgainst(a, b, margin, false, &raw);
    }
  } else if (a.type == GeomType::kSdf) {
    SdfAgainst(a, b, margin, false, &raw);
  } else if (b.type == GeomType::kSdf) {
    SdfAgainst(b, a, margin, true, &raw);
  } else {
    if (IsConcave(a)) {
      PrimitiveOverConcave(b, a, margin, true, &raw);
    } else {
      PrimitiveOverConcave(a, b, margin, false, &raw);
    }
  }
  return raw.Finish(out);
}

double BoxField(const Vec3& h, const Vec3& p, Vec3* gradient) {
  const Vec3 q = p.cwiseAbs() - h;
  const Vec3 sign(p.x() < 0 ? -1.0 : 1.0, p.y() < 0 ? -1.0 : 1.0, p.z() < 0 ? -1.0 : 1.0);
  int axis = 0;
  for (int i = 1; i < 3; ++i) {
    if (q[i] > q[axis]) axis = i;
  }
  if (q[axis] > 0) {
    // Outside: the distance to the nearest surface point, |max(q, 0)|, along sign * max(q, 0).
    const Vec3 outside = q.cwiseMax(0.0);
    const double length = outside.norm();
    *gradient = sign.cwiseProduct(outside) / length;
    return length;
  }
  // Inside: the nearest face's depth, max_i q_i, along that face's normal.
  *gradient = Vec3::Zero();
  (*gradient)[axis] = sign[axis];
  return q[axis];
}

double CylinderField(double r, double h, const Vec3& p, Vec3* gradient) {
  const double rho = std::hypot(p.x(), p.y());
  const Vec3 radial = rho > 0 ? Vec3(p.x() / rho, p.y() / rho, 0) : Vec3::UnitX();
  const Vec3 axial(0, 0, p.z() < 0 ? -1.0 : 1.0);
  const double qr = rho - r, qz = std::abs(p.z()) - h;
  if (qr > 0 || qz > 0) {
    // Outside: the distance |(max(qr, 0), max(qz, 0))| in the (rho, |z|) half-plane.
    const double or_ = std::max(qr, 0.0), oz = std::max(qz, 0.0);
    const double length = std::hypot(or_, oz);
    *gradient = (or_ * radial + oz * axial) / length;
    return length;
  }
  // Inside: the nearer of the side and the cap, max(qr, qz); ties the side.
  *gradient = qr >= qz ? radial : axial;
  return std::max(qr, qz);
}

double EllipsoidField(const Vec3& a, const Vec3& p, Vec3* gradient) {
  const Vec3 v = p.cwiseQuotient(a.cwiseProduct(a));  // p / a^2, grad k0 = v / k0
  const double k0 = p.cwiseQuotient(a).norm(), k1 = v.norm();
  if (!(k1 > 0)) {
    int axis = 0;
    for (int i = 1; i < 3; ++i) {
      if (a[i] < a[axis]) axis = i;
    }
    *gradient = Vec3::Zero();
    (*gradient)[axis] = 1;
    return -a[axis];
  }
  // f = k0 (k0 - 1) / k1: grad f = (2 k0 - 1) v / (k0 k1) - k0 (k0 - 1) (v / a^2) / k1^3.
  *gradient = ((2 * k0 - 1) / (k0 * k1)) * v -
              (k0 * (k0 - 1) / (k1 * k1 * k1)) * v.cwiseQuotient(a.cwiseProduct(a));
  return k0 * (k0 - 1) / k1;
}

int ReduceContacts(RawContact* raw, int n, int limit, double spacing, double* final_spacing) {
  if (n == 0) return 0;
  limit = std::min(limit, kMaxContactsPerSdfPair);
  // Depth order; ties by index.
  std::array<int, kSdfRawContacts> order;
  for (int i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.begin() + n, [raw](int i, int j) {
    return raw[i].dist < raw[j].dist || (raw[i].dist == raw[j].dist && i < j);
  });
  constexpr double kCos45 = 0.70710678118654752;
  std::array<int, kSdfRawContacts> kept;
  int count = 0;
  double rho = spacing;
  for (int pass = 0;; ++pass, rho *= 2) {
    count = 0;
    const double rho2 = rho * rho;
    for (int k = 0; k < n; ++k) {
      const RawContact& c = raw[order[k]];
      bool merged = false;
      for (int j = 0; j < count && !merged; ++j) {
        const RawContact& keeper = raw[kept[j]];
        merged =
            (c.pos - keeper.pos).squaredNorm() <= rho2 && c.normal.dot(keeper.normal) >= kCos45;
      }
      if (!merged) kept[count++] = order[k];
      if (count > limit && pass < 60) break;
    }
    if (count <= limit) break;
    if (pass >= 60) {
      std::copy(order.begin(), order.begin() + limit, kept.begin());
      count = limit;
      break;
    }
  }
  if (final_spacing != nullptr) *final_spacing = rho;
  // Gather the kept contacts to the front, deepest first.
  std::array<RawContact, kMaxContactsPerSdfPair> front;
  for (int j = 0; j < count; ++j) front[j] = raw[kept[j]];
  std::copy(front.begin(), front.begin() + count, raw);
  return count;
}

}  // namespace alsim
