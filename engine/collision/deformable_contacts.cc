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

}  // namespace

void DeformableCollision(const Model& m, Data& d, double h) {
  d.vertex_contact.clear();
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
