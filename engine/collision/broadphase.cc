#include "engine/collision/broadphase.h"

#include <algorithm>
#include <cmath>

#include "engine/collision/collision_filter.h"

namespace alsim {
namespace {

// Half-extents of the world-aligned box around a geom (tight for primitives; the bounding sphere
// for meshes).
Vec3 HalfExtents(const Model& m, const Data& d, int g) {
  const Vec3& size = m.geom_size[g];
  const Mat3& rot = d.geom_xmat[g];
  const Vec3 axis = rot.col(2);
  switch (m.geom_type[g]) {
    case GeomType::kSphere:
      return Vec3::Constant(size[0]);
    case GeomType::kCapsule:
      return axis.cwiseAbs() * size[1] + Vec3::Constant(size[0]);
    case GeomType::kCylinder: {
      // a disk of radius r with normal a spans r sqrt(1 - a_i^2) along world axis i
      const Vec3 disk = (Vec3::Ones() - axis.cwiseAbs2()).cwiseMax(0.0).cwiseSqrt() * size[0];
      return axis.cwiseAbs() * size[1] + disk;
    }
    case GeomType::kBox:
      return rot.cwiseAbs() * size;
    case GeomType::kEllipsoid:
      return (rot * size.asDiagonal()).rowwise().norm();
    default:
      return Vec3::Constant(m.geom_rbound[g]);
  }
}

// The scene's margin plus both geoms' speculative margins (SpeculativeMarginsOfBodies in
// collision.h).
double PairMargin(const Model& m, const Data& d, int g1, int g2) {
  return std::max(m.geom_margin[g1], m.geom_margin[g2]) + d.geom_speculative_margin[g1] +
         d.geom_speculative_margin[g2];
}

void AddCandidate(Data& d, int g1, int g2, int explicit_pair, double margin) {
  if (g1 > g2) std::swap(g1, g2);
  d.collision_candidates.push_back({g1, g2, explicit_pair, margin});
}

// Sorts the sweep order by the boxes' lower bounds on `axis` (ties by geom id, so the result does
// not depend on the previous order). Insertion sort: the order of the last step is nearly right.
void SortSweepOrder(Data& d, int axis) {
  auto before = [&](int a, int b) {
    const double la = d.geom_aabb_lo[a][axis], lb = d.geom_aabb_lo[b][axis];
    return la < lb || (la == lb && a < b);
  };
  std::vector<int>& order = d.sweep_order;
  for (size_t i = 1; i < order.size(); ++i) {
    const int g = order[i];
    size_t j = i;
    for (; j > 0 && before(g, order[j - 1]); --j) order[j] = order[j - 1];
    order[j] = g;
  }
}

// The axis along which the geom centers are most spread out: the sweep prunes best there.
int SweepAxis(const Data& d) {
  Vec3 mean = Vec3::Zero(), second = Vec3::Zero();
  for (const int g : d.sweep_order) {
    mean += d.geom_xpos[g];
    second += d.geom_xpos[g].cwiseAbs2();
  }
  const double n = std::max<double>(1.0, static_cast<double>(d.sweep_order.size()));
  const Vec3 variance = second / n - (mean / n).cwiseAbs2();
  int axis = 0;
  variance.maxCoeff(&axis);
  return axis;
}

void SweepAndPrune(const Model& m, Data& d) {
  const int axis = SweepAxis(d);
  SortSweepOrder(d, axis);
  const int n = static_cast<int>(d.sweep_order.size());
  SweepBox* boxes = d.sweep_boxes.data();
  for (int i = 0; i < n; ++i) {
    const int g = d.sweep_order[i];
    for (int k = 0; k < 3; ++k) {
      boxes[i].lo[k] = d.geom_aabb_lo[g][k];
      boxes[i].hi[k] = d.geom_aabb_hi[g][k];
    }
    boxes[i].geom = g;
  }
  // Boxes sorted by lo[axis]: the boxes that reach box i along the axis follow it, up to the first
  // that starts beyond its end; the other two axes decide the overlap. (The sweep axis is tested
  // once more: always true for finite boxes, false for a box with a NaN bound.)
  const int u = (axis + 1) % 3, w = (axis + 2) % 3;
  for (int i = 0; i < n; ++i) {
    const SweepBox& a = boxes[i];
    for (int j = i + 1; j < n; ++j) {
      const SweepBox& b = boxes[j];
      if (b.lo[axis] > a.hi[axis]) break;  // no later box reaches a
      const bool overlap = a.lo[axis] <= b.hi[axis] && a.lo[u] <= b.hi[u] && b.lo[u] <= a.hi[u] &&
                           a.lo[w] <= b.hi[w] && b.lo[w] <= a.hi[w];
      if (overlap && MayCollide(m, a.geom, b.geom)) {
        AddCandidate(d, a.geom, b.geom, -1, PairMargin(m, d, a.geom, b.geom));
      }
    }
  }
}

// A geom is near a plane when its box's support along -normal comes within the margin.
void PlanesAgainstGeoms(const Model& m, Data& d) {
  for (const int p : d.plane_geoms) {
    const Vec3 normal = d.geom_xmat[p].col(2);
    for (const int g : d.sweep_order) {
      if (!MayCollide(m, p, g)) continue;
      const double margin = PairMargin(m, d, p, g);
      const double center_height = normal.dot(d.geom_xpos[g] - d.geom_xpos[p]);
      const Vec3 half = 0.5 * (d.geom_aabb_hi[g] - d.geom_aabb_lo[g]);
      const double reach =
          std::min(half.dot(normal.cwiseAbs()),
                   m.geom_rbound[g] + m.geom_margin[g] + d.geom_speculative_margin[g]);
      if (center_height - reach < margin) AddCandidate(d, p, g, -1, margin);
    }
  }
}

}  // namespace

void BoundingBoxesOfBodies(const Model& m, Data& d, int body_begin, int body_end) {
  for (int g = m.body_geom_adr[body_begin]; g < m.body_geom_adr[body_end]; ++g) {
    if (!d.geom_in_sweep[g]) continue;
    const Vec3 reach =
        HalfExtents(m, d, g) + Vec3::Constant(m.geom_margin[g] + d.geom_speculative_margin[g]);
    d.geom_aabb_lo[g] = d.geom_xpos[g] - reach;
    d.geom_aabb_hi[g] = d.geom_xpos[g] + reach;
  }
}

void Broadphase(const Model& m, Data& d, bool boxes_ready) {
  d.collision_candidates.clear();
  if (!m.contact_enabled) return;
  if (!boxes_ready) BoundingBoxesOfBodies(m, d, 0, m.nbody);
  SweepAndPrune(m, d);
  PlanesAgainstGeoms(m, d);
  for (int i = 0; i < m.npair; ++i)
    AddCandidate(d, m.pair_geom1[i], m.pair_geom2[i], i,
                 m.pair_margin[i] + d.geom_speculative_margin[m.pair_geom1[i]] +
                     d.geom_speculative_margin[m.pair_geom2[i]]);
  std::sort(d.collision_candidates.begin(), d.collision_candidates.end(),
            [](const CollisionCandidate& a, const CollisionCandidate& b) {
              return a.geom1 < b.geom1 || (a.geom1 == b.geom1 && a.geom2 < b.geom2);
            });
}

}  // namespace alsim
