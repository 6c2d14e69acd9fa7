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
}

}  // namespace alsim
