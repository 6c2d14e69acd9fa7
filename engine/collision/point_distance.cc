#include "engine/collision/point_distance.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <Eigen/Geometry>

#include "engine/collision/pair_geometry.h"

namespace alsim {
namespace {

// The sphere of radius r about c (local), for the local point q.
void SphereLocal(const Vec3& q, const Vec3& c, double r, double* d, Vec3* n, Vec3* s) {
  const Vec3 offset = q - c;
  const double length = offset.norm();
  *n = length > 0 ? Vec3(offset / length) : Vec3(Vec3::UnitZ());
  *d = length - r;
  *s = c + r * *n;
}

void Cylinder(const Vec3& q, double r, double h, double* d, Vec3* n, Vec3* s) {
  const double radial = std::hypot(q.x(), q.y());
  const Vec3 out_radial = radial > 0 ? Vec3(q.x() / radial, q.y() / radial, 0) : Vec3::UnitX();
  const double side = radial - r, cap = std::abs(q.z()) - h;
  const double sign = q.z() >= 0 ? 1 : -1;
  if (side <= 0 && cap <= 0) {  // inside: the nearer of the side and a cap
    if (side >= cap) {
      *d = side;
      *n = out_radial;
      *s = Vec3(r * out_radial.x(), r * out_radial.y(), q.z());
    } else {
      *d = cap;
      *n = Vec3(0, 0, sign);
      *s = Vec3(q.x(), q.y(), sign * h);
    }
    return;
  }
  if (cap <= 0) {  // beside the side
    *d = side;
    *n = out_radial;
    *s = Vec3(r * out_radial.x(), r * out_radial.y(), q.z());
  } else if (side <= 0) {  // above or below a cap
    *d = cap;
    *n = Vec3(0, 0, sign);
    *s = Vec3(q.x(), q.y(), sign * h);
  } else {  // nearest the rim
    const Vec3 rim(r * out_radial.x(), r * out_radial.y(), sign * h);
    const Vec3 offset = q - rim;
    *d = offset.norm();
    *n = offset / *d;
    *s = rim;
  }
}

void Box(const Vec3& q, const Vec3& half, double* d, Vec3* n, Vec3* s) {
  const Vec3 excess = q.cwiseAbs() - half;
  if ((excess.array() <= 0).all()) {  // inside: the nearest face
    int axis = 0;
    for (int i = 1; i < 3; ++i) {
      if (excess[i] > excess[axis]) axis = i;
    }
    const double sign = q[axis] >= 0 ? 1 : -1;
    *d = excess[axis];
    *n = Vec3::Zero();
    (*n)[axis] = sign;
    *s = q;
    (*s)[axis] = sign * half[axis];
    return;
  }
  const Vec3 clamped = q.cwiseMax(-half).cwiseMin(half);
  const Vec3 offset = q - clamped;
  *d = offset.norm();
  *n = offset / *d;
  *s = clamped;
}

// The convex hull of a mesh geom (local vertices and hull faces).
bool Hull(const GeomShape& shape, const Vec3& q, double* d, Vec3* n, Vec3* s) {
  if (shape.vertices == nullptr || shape.hull_faces == nullptr || shape.hull_face_count == 0) {
    return false;
  }
  double inside = -std::numeric_limits<double>::infinity();
  Vec3 inside_normal = Vec3::UnitZ();
  bool outside = false;
  for (int f = 0; f < shape.hull_face_count; ++f) {
    const Eigen::Vector3i& face = shape.hull_faces[f];
    const Vec3 &a = shape.vertices[face[0]], &b = shape.vertices[face[1]],
               &c = shape.vertices[face[2]];
    Vec3 normal = (b - a).cross(c - a);
    const double area = normal.norm();
    if (!(area > 0)) continue;
    normal /= area;
    const double plane = normal.dot(q - a);
    if (plane > 0) outside = true;
    if (plane > inside) {
      inside = plane;
      inside_normal = normal;
    }
  }
  if (!outside) {
    *d = inside;
    *n = inside_normal;
    *s = q - inside * inside_normal;
    return true;
  }
  double best = std::numeric_limits<double>::infinity();
  for (int f = 0; f < shape.hull_face_count; ++f) {
    const Eigen::Vector3i& face = shape.hull_faces[f];
    Vec3 weights;
    const Vec3 closest = ClosestPointOnTriangle(q, shape.vertices[face[0]], shape.vertices[face[1]],
                                                shape.vertices[face[2]], &weights);
    const double distance = (q - closest).norm();
    if (distance < best) {
      best = distance;
      *s = closest;
    }
  }
  *d = best;
  *n = (q - *s) / best;
  return true;
}

}  // namespace

bool PointGeomDistance(const GeomShape& shape, const Vec3& point, PointDistance* out) {
  const Vec3 q = shape.rot.transpose() * (point - shape.pos);
  double d = 0;
  Vec3 n = Vec3::UnitZ(), s = Vec3::Zero();
  switch (shape.type) {
    case GeomType::kPlane:
      d = q.z();
      s = Vec3(q.x(), q.y(), 0);
      break;
    case GeomType::kSphere:
      SphereLocal(q, Vec3::Zero(), shape.size[0], &d, &n, &s);
      break;
    case GeomType::kCapsule: {
      const double h = shape.size[1];
      SphereLocal(q, Vec3(0, 0, std::clamp(q.z(), -h, h)), shape.size[0], &d, &n, &s);
      break;
    }
    case GeomType::kCylinder:
      Cylinder(q, shape.size[0], shape.size[1], &d, &n, &s);
      break;
    case GeomType::kBox:
      Box(q, shape.size, &d, &n, &s);
      break;
    case GeomType::kMesh:
      if (!Hull(shape, q, &d, &n, &s)) return false;
      break;
    default:
      return false;
  }
  out->distance = d;
  out->normal = shape.rot * n;
  out->surface = shape.pos + shape.rot * s;
  return true;
}

Vec3 ClosestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                            Vec3* barycentric) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) {  // vertex a
    *barycentric = Vec3(1, 0, 0);
    return a;
  }
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) {  // vertex b
    *barycentric = Vec3(0, 1, 0);
    return b;
  }
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {  // edge ab
    const double v = d1 / (d1 - d3);
    *barycentric = Vec3(1 - v, v, 0);
    return a + v * ab;
  }
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) {  // vertex c
    *barycentric = Vec3(0, 0, 1);
    return c;
  }
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {  // edge ac
    const double w = d2 / (d2 - d6);
    *barycentric = Vec3(1 - w, 0, w);
    return a + w * ac;
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {  // edge bc
    const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    *barycentric = Vec3(0, 1 - w, w);
    return b + w * (c - b);
  }
  const double denominator = 1 / (va + vb + vc);  // the face
  const double v = vb * denominator, w = vc * denominator;
  *barycentric = Vec3(1 - v - w, v, w);
  return a + ab * v + ac * w;
}

double ClosestSegmentTriangle(const Vec3& p0, const Vec3& p1, const Vec3& a, const Vec3& b,
                              const Vec3& c, double* t, Vec3* barycentric) {
  // A crossing of the triangle's interior: distance 0 there.
  const Vec3 normal = (b - a).cross(c - a);
  const double s0 = normal.dot(p0 - a), s1 = normal.dot(p1 - a);
  if ((s0 <= 0 && s1 >= 0) || (s0 >= 0 && s1 <= 0)) {
    if (s0 != s1) {
      const double crossing = s0 / (s0 - s1);
      const Vec3 x = p0 + crossing * (p1 - p0);
      Vec3 weights;
      const Vec3 q = ClosestPointOnTriangle(x, a, b, c, &weights);
      if ((q - x).squaredNorm() <= 1e-24 * (1 + x.squaredNorm())) {
        *t = crossing;
        *barycentric = weights;
        return 0;
      }
    }
  }
  // The endpoints against the triangle, then the segment against each edge.
  double best = std::numeric_limits<double>::infinity();
  for (const double end : {0.0, 1.0}) {
    Vec3 weights;
    const Vec3 x = end == 0 ? p0 : p1;
    const double distance = (ClosestPointOnTriangle(x, a, b, c, &weights) - x).norm();
    if (distance < best) {
      best = distance;
      *t = end;
      *barycentric = weights;
    }
  }
  using collision_detail::ClosestSegmentParams;
  using collision_detail::PointAt;
  using collision_detail::Segment;
  const Segment segment{p0, p1};
  const Vec3* corners[3] = {&a, &b, &c};
  for (int e = 0; e < 3; ++e) {
    const int i = e, j = (e + 1) % 3;
    double s = 0, u = 0;
    ClosestSegmentParams(segment, Segment{*corners[i], *corners[j]}, &s, &u);
    const double distance =
        (PointAt(segment, s) - PointAt(Segment{*corners[i], *corners[j]}, u)).norm();
    if (distance < best) {
      best = distance;
      *t = s;
      Vec3 weights = Vec3::Zero();
      weights[i] = 1 - u;
      weights[j] = u;
      *barycentric = weights;
    }
  }
  return best;
}

}  // namespace alsim
