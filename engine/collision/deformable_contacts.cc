#include "engine/collision/deformable_contacts.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/collision/narrowphase.h"
#include "engine/collision/point_distance.h"

namespace alsim {
namespace {

bool Overlap(const Vec3& lo1, const Vec3& hi1, const Vec3& lo2, const Vec3& hi2) {
  for (int c = 0; c < 3; ++c) {
    if (lo1[c] > hi2[c] || lo2[c] > hi1[c]) return false;
  }
  return true;
}

// Whether geom g collides with deformables through their surface triangles instead of their
// vertices: a sphere or capsule (a round surface between the vertices).
bool AgainstTriangles(const Model& m, int g) {
  return m.geom_type[g] == GeomType::kSphere || m.geom_type[g] == GeomType::kCapsule;
}

// Geom g (a sphere or capsule) against deformable k's surface triangles, within `threshold` of
// their layer; a point already found for this geom (a vertex or edge the nearest of several
// triangles) is kept once.
void TriangleContacts(const Model& m, Data& d, int k, int g, double threshold) {
  const GeomShape shape = ShapeOfGeom(m, d, g);
  const double radius = shape.size[0];
  const double half = m.geom_type[g] == GeomType::kCapsule ? shape.size[1] : 0;
  const Vec3 p0 = shape.pos - half * shape.rot.col(2), p1 = shape.pos + half * shape.rot.col(2);
  const int body = m.geom_body[g];
  const double thickness = m.deform_thickness[k];
  const size_t first = d.triangle_contact.size();
  for (int t = m.deform_tri_adr[k]; t < m.deform_tri_adr[k] + m.deform_tri_num[k]; ++t) {
    const auto& tri = m.tri_vert[t];
    const Vec3& a = d.vert_xpos[tri[0]];
    const Vec3& b = d.vert_xpos[tri[1]];
    const Vec3& c = d.vert_xpos[tri[2]];
    double along = 0;
    Vec3 weights;
    double distance = 0;
    if (half > 0) {
      distance = ClosestSegmentTriangle(p0, p1, a, b, c, &along, &weights);
    } else {  // a sphere: its centre against the triangle
      distance = (ClosestPointOnTriangle(p0, a, b, c, &weights) - p0).norm();
    }
    const double gap = distance - radius - thickness;
    if (!(gap < threshold)) continue;
    const Vec3 point = weights[0] * a + weights[1] * b + weights[2] * c;
    bool seen = false;
    for (size_t x = first; x < d.triangle_contact.size() && !seen; ++x) {
      const TriangleContact& other = d.triangle_contact[x];
      const auto& o = m.tri_vert[other.triangle];
      const Vec3 q = other.barycentric[0] * d.vert_xpos[o[0]] +
                     other.barycentric[1] * d.vert_xpos[o[1]] +
                     other.barycentric[2] * d.vert_xpos[o[2]];
      seen = (q - point).norm() <= 1e-9;
    }
    if (seen) continue;
    const Vec3 axis = p0 + along * (p1 - p0);
    Vec3 normal = axis - point;
    // On the triangle (the axis crosses it): its outward normal.
    normal =
        normal.norm() > 1e-12 ? Vec3(normal.normalized()) : Vec3((b - a).cross(c - a).normalized());
    TriangleContact& contact = d.triangle_contact.emplace_back();
    contact.triangle = t;
    contact.geom = g;
    contact.dist = gap;
    contact.barycentric = weights;
    contact.normal = normal;
    contact.anchor = d.xmat[body].transpose() * (axis - d.xpos[body]);
    contact.friction = std::max(m.geom_friction[g][0], m.deform_friction[k]);
  }
}

// The point of deformable k's surface nearest p: its triangle, barycentric weights, the unit
// normal from it toward p (the triangle's outward normal where p is on it or behind it) and the
// signed distance along that normal (negative behind the surface). False without triangles.
struct SurfacePoint {
  int triangle = -1;
  Vec3 weights = Vec3::Zero();
  Vec3 normal = Vec3::UnitZ();
  double distance = 0;
};
bool NearestSurfacePoint(const Model& m, const Data& d, int k, const Vec3& p, SurfacePoint* out) {
  double best = std::numeric_limits<double>::infinity();
  Vec3 closest = Vec3::Zero();
  for (int t = m.deform_tri_adr[k]; t < m.deform_tri_adr[k] + m.deform_tri_num[k]; ++t) {
    const auto& tri = m.tri_vert[t];
    Vec3 weights;
    const Vec3 q = ClosestPointOnTriangle(p, d.vert_xpos[tri[0]], d.vert_xpos[tri[1]],
                                          d.vert_xpos[tri[2]], &weights);
    const double distance = (p - q).norm();
    if (distance < best) {  // strict: the first of equally near triangles, in model order
      best = distance;
      closest = q;
      out->triangle = t;
      out->weights = weights;
    }
  }
  if (out->triangle < 0) return false;
  const auto& tri = m.tri_vert[out->triangle];
  const Vec3& a = d.vert_xpos[tri[0]];
  const Vec3 face = (d.vert_xpos[tri[1]] - a).cross(d.vert_xpos[tri[2]] - a).normalized();
  const Vec3 offset = p - closest;
  if (face.dot(offset) > 0 && best > 1e-12) {
    out->normal = offset / best;
    out->distance = best;
  } else {
    out->normal = face;
    out->distance = face.dot(offset);
  }
  return true;
}

// The corners of box geom g, or the vertices of mesh geom g, against deformable k's surface
// triangles: each point within `threshold` of the surface's layer gets a TriangleContact with its
// nearest triangle (the point kept on the geom's body, radius 0).
void CornerContacts(const Model& m, Data& d, int k, int g, const Vec3& lo, const Vec3& hi,
                    double threshold) {
  const GeomShape shape = ShapeOfGeom(m, d, g);
  const int body = m.geom_body[g];
  const bool box = m.geom_type[g] == GeomType::kBox;
  const int count = box ? 8 : shape.vertex_count;
  for (int i = 0; i < count; ++i) {
    const Vec3 local =
        box ? Vec3((i & 1 ? 1 : -1) * shape.size[0], (i & 2 ? 1 : -1) * shape.size[1],
                   (i & 4 ? 1 : -1) * shape.size[2])
            : shape.vertices[i];
    const Vec3 p = shape.pos + shape.rot * local;
    if (!Overlap(p, p, lo, hi)) continue;
    SurfacePoint surface;
    if (!NearestSurfacePoint(m, d, k, p, &surface)) return;
    const double gap = surface.distance - m.deform_thickness[k];
    if (!(gap < threshold)) continue;
    TriangleContact& contact = d.triangle_contact.emplace_back();
    contact.triangle = surface.triangle;
    contact.geom = g;
    contact.dist = gap;
    contact.barycentric = surface.weights;
    contact.normal = surface.normal;
    contact.anchor = d.xmat[body].transpose() * (p - d.xpos[body]);
    contact.friction = std::max(m.geom_friction[g][0], m.deform_friction[k]);
  }
}

// Deformable k's free vertices' box grown by the step's reach: lo, hi and the largest vertex
// speed. False when it has no free vertex.
bool DeformableBox(const Model& m, const Data& d, int k, Vec3* lo, Vec3* hi, double* speed) {
  constexpr double kInfinity = std::numeric_limits<double>::infinity();
  *lo = Vec3::Constant(kInfinity);
  *hi = Vec3::Constant(-kInfinity);
  *speed = 0;
  bool any = false;
  for (int v = m.deform_vert_adr[k]; v < m.deform_vert_adr[k] + m.deform_vert_num[k]; ++v) {
    if (m.vert_body[v] == 0) continue;  // pinned in the world
    *lo = lo->cwiseMin(d.vert_xpos[v]);
    *hi = hi->cwiseMax(d.vert_xpos[v]);
    *speed = std::max(*speed, d.vert_xvel[v].norm());
    any = true;
  }
  return any;
}

// Deformable k's free vertices against deformable l's surface triangles: each vertex within
// `threshold` of the two layers gets a VertexTriangleContact with its nearest triangle.
void DeformablePairContacts(const Model& m, Data& d, int k, int l, const Vec3& lo, const Vec3& hi,
                            double threshold) {
  const double thickness = m.deform_thickness[k] + m.deform_thickness[l];
  const double mu = std::max(m.deform_friction[k], m.deform_friction[l]);
  for (int v = m.deform_vert_adr[k]; v < m.deform_vert_adr[k] + m.deform_vert_num[k]; ++v) {
    if (m.vert_body[v] == 0) continue;
    const Vec3& x = d.vert_xpos[v];
    if (!Overlap(x, x, lo, hi)) continue;
    SurfacePoint surface;
    if (!NearestSurfacePoint(m, d, l, x, &surface)) return;
    const double gap = surface.distance - thickness;
    if (!(gap < threshold)) continue;
    VertexTriangleContact& contact = d.vertex_triangle_contact.emplace_back();
    contact.vertex = v;
    contact.triangle = surface.triangle;
    contact.dist = gap;
    contact.barycentric = surface.weights;
    contact.normal = surface.normal;
    contact.friction = mu;
  }
}

}  // namespace

void DeformableCollision(const Model& m, Data& d, double h) {
  d.vertex_contact.clear();
  d.triangle_contact.clear();
  for (int k = 0; k < m.ndeform; ++k) {
    const int begin = m.deform_vert_adr[k], end = begin + m.deform_vert_num[k];
    const double thickness = m.deform_thickness[k];
    constexpr double kInfinity = std::numeric_limits<double>::infinity();
    Vec3 lo = Vec3::Constant(kInfinity), hi = Vec3::Constant(-kInfinity);
    double reach = 0;
    for (int v = begin; v < end; ++v) {
      if (m.vert_body[v] == 0) continue;  // pinned in the world
      lo = lo.cwiseMin(d.vert_xpos[v]);
      hi = hi.cwiseMax(d.vert_xpos[v]);
      reach = std::max(reach, d.vert_xvel[v].norm());
    }
    const double threshold = thickness + 2 * h * reach + kDeformableContactSlack;
    lo.array() -= threshold;
    hi.array() += threshold;
    for (int g = 0; g < m.ngeom; ++g) {
      if (m.geom_contype[g] == 0 && m.geom_conaffinity[g] == 0) continue;
      if (m.geom_type[g] != GeomType::kPlane &&
          !Overlap(lo, hi, d.geom_aabb_lo[g], d.geom_aabb_hi[g])) {
        continue;
      }
      if (AgainstTriangles(m, g)) {
        TriangleContacts(m, d, k, g, threshold - thickness);
        continue;
      }
      if (m.geom_type[g] == GeomType::kBox || m.geom_type[g] == GeomType::kMesh) {
        CornerContacts(m, d, k, g, lo, hi, threshold - thickness);
      }
      const GeomShape shape = ShapeOfGeom(m, d, g);
      const int body = m.geom_body[g];
      const double mu = std::max(m.geom_friction[g][0], m.deform_friction[k]);
      for (int v = begin; v < end; ++v) {
        if (m.vert_body[v] == 0) continue;
        const Vec3& x = d.vert_xpos[v];
        if (m.geom_type[g] != GeomType::kPlane &&
            !Overlap(x, x, d.geom_aabb_lo[g] - Vec3::Constant(threshold),
                     d.geom_aabb_hi[g] + Vec3::Constant(threshold))) {
          continue;
        }
        PointDistance distance;
        if (!PointGeomDistance(shape, x, &distance)) break;  // a shape without a distance
        const double gap = distance.distance - thickness;
        if (!(gap < 2 * h * d.vert_xvel[v].norm() + kDeformableContactSlack)) continue;
        VertexContact& contact = d.vertex_contact.emplace_back();
        contact.vertex = v;
        contact.geom = g;
        contact.dist = gap;
        contact.normal = distance.normal;
        contact.anchor = d.xmat[body].transpose() * (distance.surface - d.xpos[body]);
        contact.friction = mu;
      }
    }
  }
  // Deformable pairs, both ways: k's vertices against l's triangles.
  d.vertex_triangle_contact.clear();
  for (int k = 0; k < m.ndeform; ++k) {
    Vec3 lo_k, hi_k;
    double speed_k = 0;
    if (!DeformableBox(m, d, k, &lo_k, &hi_k, &speed_k)) continue;
    for (int l = 0; l < m.ndeform; ++l) {
      if (l == k) continue;
      Vec3 lo_l, hi_l;
      double speed_l = 0;
      if (!DeformableBox(m, d, l, &lo_l, &hi_l, &speed_l)) {
        // A fully pinned deformable: its box is all its vertices'.
        lo_l = Vec3::Constant(std::numeric_limits<double>::infinity());
        hi_l = -lo_l;
        for (int v = m.deform_vert_adr[l]; v < m.deform_vert_adr[l] + m.deform_vert_num[l]; ++v) {
          lo_l = lo_l.cwiseMin(d.vert_xpos[v]);
          hi_l = hi_l.cwiseMax(d.vert_xpos[v]);
        }
      }
      const double reach = 2 * h * (speed_k + speed_l) + kDeformableContactSlack;
      const double grow = m.deform_thickness[k] + m.deform_thickness[l] + reach;
      const Vec3 lo = lo_l - Vec3::Constant(grow), hi = hi_l + Vec3::Constant(grow);
      if (!Overlap(lo_k, hi_k, lo, hi)) continue;
      DeformablePairContacts(m, d, k, l, lo, hi, reach);
    }
  }
}

}  // namespace alsim
