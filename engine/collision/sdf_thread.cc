#include "engine/collision/sdf_thread.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace alsim {
namespace {

using Vec2 = Eigen::Vector2d;

constexpr double kPi = 3.14159265358979323846;
// The ISO 68-1 basic profile in units of the pitch: H / P, and the depth of the basic thread
// (crest to root flat), 5H/8, which gives d1 = d - 2 (5H/8) = d - 1.082532 P.
const double kTriangleHeight = std::sqrt(3.0) / 2;
const double kDepth = 5.0 / 8 * kTriangleHeight;

// The nearest feature of the half-period profile to q = (r, w), w in [0, P/2]: its unsigned
// distance, the unit direction from it toward q (the segment's outward normal on the curve) and
// whether q lies inside the thread (r < R(w)).
struct ProfileDistance {
  double distance = 0;
  Vec2 direction = Vec2::UnitX();
};

// The outward (larger r) unit normal of a segment p0 -> p1 traversed with w increasing: the right
// normal (e_w, -e_r) / |e|.
Vec2 OutwardNormal(const Vec2& e) { return Vec2(e.y(), -e.x()) / e.norm(); }

// The planar distance from q to the closed segment p0-p1, with the unit direction from its nearest
// point toward q. Inside the segment's span the offset along the outward normal n, s = n.(q - p0),
// by the cross product, so that near the segment the direction stays sign(s) n (n at s = 0) rather
// than rounding noise along it; beyond an end, that end, and on it the normal.
ProfileDistance DistanceToSegment(const Vec2& q, const Vec2& p0, const Vec2& p1) {
  ProfileDistance result;
  const Vec2 e = p1 - p0, w = q - p0;
  const double along = w.dot(e), length2 = e.squaredNorm();
  if (along <= 0 || along >= length2) {
    const Vec2 offset = along <= 0 ? w : Vec2(q - p1);
    result.distance = offset.norm();
    result.direction = result.distance > 0 ? Vec2(offset / result.distance) : OutwardNormal(e);
    return result;
  }
  const double length = std::sqrt(length2);
  const double s = (e.y() * w.x() - e.x() * w.y()) / length;
  const Vec2 n = OutwardNormal(e);
  result.distance = std::abs(s);
  result.direction = s < 0 ? Vec2(-n) : n;
  return result;
}

// The thread's term: s(r, u) of the header and its planar gradient (g_r, g_u), for the profile of
// major radius r_maj, pitch P.
struct ThreadTerm {
  double value = 0;
  double g_r = 1;
  double g_u = 0;
};

// R(u), the profile's radius at screw coordinate u.
double ProfileRadius(double u, double r_maj, double pitch) {
  const double w = std::abs(u - pitch * std::floor(u / pitch + 0.5));
  const double r_min = r_maj - kDepth * pitch;
  if (w <= pitch / 16) return r_maj;
  if (w >= 3 * pitch / 8) return r_min;
  return r_maj - (w - pitch / 16) * (r_maj - r_min) / (5 * pitch / 16);
}

ThreadTerm ThreadDistance(double r, double u, double r_maj, double pitch) {
  // u reduced to [-P/2, P/2), then folded onto w = |u| with the side kept for g_u's sign; u = 0
  // folds to the u >= 0 side.
  const double reduced = u - pitch * std::floor(u / pitch + 0.5);
  const double side = reduced < 0 ? -1.0 : 1.0;
  const double w = std::abs(reduced);
  const double r_min = r_maj - kDepth * pitch;
  const Vec2 crest_center(r_maj, 0), crest_end(r_maj, pitch / 16);
  const Vec2 root_start(r_min, 3 * pitch / 8), root_center(r_min, pitch / 2);
  const Vec2 q(r, w);
  // Ties go to the earlier segment: crest, flank, root.
  ProfileDistance nearest = DistanceToSegment(q, crest_center, crest_end);
  const ProfileDistance flank = DistanceToSegment(q, crest_end, root_start);
  if (flank.distance < nearest.distance) nearest = flank;
  const ProfileDistance root = DistanceToSegment(q, root_start, root_center);
  if (root.distance < nearest.distance) nearest = root;
  ThreadTerm term;
  if (r < ProfileRadius(w, r_maj, pitch)) {  // inside
    term.value = -nearest.distance;
    // Inside the thread the direction toward q points inward; grad s points away from it. A
    // segment's interior gave sign(s) n = -n there, so -direction is n again.
    term.g_r = -nearest.direction.x();
    term.g_u = -nearest.direction.y() * side;
  } else {
    term.value = nearest.distance;
    term.g_r = nearest.direction.x();
    term.g_u = nearest.direction.y() * side;
  }
  return term;
}

}  // namespace

bool SdfThread::IsValid() const {
  return std::isfinite(pitch) && pitch > 0 && std::isfinite(major_diameter) &&
         major_diameter > 2 * kDepth * pitch && std::isfinite(z0) && std::isfinite(z1) && z0 < z1;
}

double SdfThread::MinorDiameter() const { return major_diameter - 2 * kDepth * pitch; }

double SdfThread::Distance(const Vec3& p) const {
  Vec3 gradient;
  return DistanceAndGradient(p, &gradient);
}

double SdfThread::DistanceAndGradient(const Vec3& p, Vec3* gradient) const {
  const double r = std::sqrt(p.x() * p.x() + p.y() * p.y());
  const double lead = right_handed ? pitch / (2 * kPi) : -pitch / (2 * kPi);  // h b
  const double theta = std::atan2(p.y(), p.x());
  const ThreadTerm thread = ThreadDistance(r, p.z() - lead * theta, major_diameter / 2, pitch);
  const double below = z0 - p.z(), above = p.z() - z1;
  const double slab = std::max(below, above);
  if (slab > thread.value) {
    *gradient = Vec3(0, 0, below >= above ? -1 : 1);
    return slab;
  }
  // grad phi_T = g_r e_r + g_u (e_z - h (b / r) e_theta), e_theta = (-y, x) / r; on the axis,
  // (g_r, 0, g_u).
  if (r > 0) {
    const double radial = thread.g_r / r, twist = thread.g_u * lead / (r * r);
    *gradient = Vec3(radial * p.x() + twist * p.y(), radial * p.y() - twist * p.x(), thread.g_u);
  } else {
    *gradient = Vec3(thread.g_r, 0, thread.g_u);
  }
  return thread.value;
}

double SdfThread::BoundingRadius() const {
  return std::hypot(major_diameter / 2, std::max(std::abs(z0), std::abs(z1)));
}

SdfBox SdfThread::LocalBox() const {
  const double r_maj = major_diameter / 2;
  return SdfBox{Vec3(-r_maj, -r_maj, z0), Vec3(r_maj, r_maj, z1)};
}

SdfThread SdfThread::FromParameters(const double* parameters) {
  SdfThread shape;
  shape.major_diameter = parameters[0];
  shape.pitch = parameters[1];
  shape.z0 = parameters[2];
  shape.z1 = parameters[3];
  shape.right_handed = parameters[4] > 0;
  return shape;
}

namespace {

// A vertex of the thread surface and its screw coordinate.
struct ColumnVertex {
  double u = 0;
  int index = 0;
};

}  // namespace

void SdfThread::Triangulate(int segments, std::vector<Vec3>* vertices,
                            std::vector<Eigen::Vector3i>* faces) const {
  // Built right-handed (u = z - b theta) and mirrored through the xz plane for a left-handed
  // thread, which is the right-handed one's mirror image.
  const int first = static_cast<int>(vertices->size());
  const int first_face = static_cast<int>(faces->size());
  const double r_maj = major_diameter / 2, b = pitch / (2 * kPi);
  const double corners[4] = {-3 * pitch / 8, -pitch / 16, pitch / 16, 3 * pitch / 8};
  // The corners' helices k P + corner strictly between lo and hi, ascending; one within 1e-7 P of
  // an end is left to the end's vertex.
  const auto corners_between = [&](double lo, double hi) {
    std::vector<double> found;
    const double epsilon = 1e-7 * pitch;
    for (double k = std::floor(lo / pitch) - 1; k * pitch + corners[0] < hi; k += 1) {
      for (const double corner : corners) {
        const double u = k * pitch + corner;
        if (lo + epsilon < u && u < hi - epsilon) found.push_back(u);
      }
    }
    return found;
  };
  const auto add = [&](double theta, double u, double z) {
    const double r = ProfileRadius(u, r_maj, pitch);
    vertices->push_back(Vec3(r * std::cos(theta), r * std::sin(theta), z));
    return static_cast<int>(vertices->size()) - 1 - first;
  };
  // Columns at theta_i = 2 pi i / segments, from z0 to z1; column `segments` is column 0 turned
  // once: the same vertices, u lower by P.
  std::vector<std::vector<ColumnVertex>> columns(segments + 1);
  for (int i = 0; i < segments; ++i) {
    const double theta = 2 * kPi * i / segments, shift = b * theta;
    std::vector<double> us = corners_between(z0 - shift, z1 - shift);
    us.insert(us.begin(), z0 - shift);
    us.push_back(z1 - shift);
    for (size_t j = 0; j < us.size(); ++j) {
      const double z = j == 0 ? z0 : j + 1 == us.size() ? z1 : us[j] + shift;
      columns[i].push_back({us[j], add(theta, us[j], z)});
    }
  }
  for (const ColumnVertex& v : columns[0]) columns[segments].push_back({v.u - pitch, v.index});
  // Per column step: the strip's rim vertices on the caps, then the strip merged in u between the
  // chain at theta_i (the bottom rim, then column i) and the one at theta_i+1 (column i + 1, then
  // the top rim); ties advance the first chain, so a quad between two helices splits inside its
  // strip. Along a rim theta grows as u falls.
  std::vector<std::vector<int>> bottoms(segments), tops(segments);
  for (int i = 0; i < segments; ++i) {
    const std::vector<ColumnVertex>& a_col = columns[i];
    const std::vector<ColumnVertex>& b_col = columns[i + 1];
    std::vector<ColumnVertex> left, right = b_col;
    for (const double u : corners_between(b_col.front().u, a_col.front().u)) {
      left.push_back({u, add((z0 - u) / b, u, z0)});
    }
    const size_t bottom_rim = left.size();
    left.insert(left.end(), a_col.begin(), a_col.end());
    for (const double u : corners_between(b_col.back().u, a_col.back().u)) {
      right.push_back({u, add((z1 - u) / b, u, z1)});
    }
    size_t a = 0, c = 0;
    while (a + 1 < left.size() || c + 1 < right.size()) {
      const bool advance_left =
          c + 1 == right.size() ||
          (a + 1 < left.size() && left[a + 1].u <= right[c + 1].u + 1e-12 * pitch);
      if (advance_left) {
        faces->push_back(Eigen::Vector3i(left[a].index, right[c].index, left[a + 1].index));
        ++a;
      } else {
        faces->push_back(Eigen::Vector3i(left[a].index, right[c].index, right[c + 1].index));
        ++c;
      }
    }
    bottoms[i].push_back(a_col.front().index);
    for (size_t k = bottom_rim; k-- > 0;) bottoms[i].push_back(left[k].index);
    bottoms[i].push_back(b_col.front().index);
    tops[i].push_back(a_col.back().index);
    for (size_t k = right.size(); k-- > b_col.size();) tops[i].push_back(right[k].index);
    tops[i].push_back(b_col.back().index);
  }
  vertices->push_back(Vec3(0, 0, z0));
  const int bottom_center = static_cast<int>(vertices->size()) - 1 - first;
  vertices->push_back(Vec3(0, 0, z1));
  const int top_center = bottom_center + 1;
  for (int i = 0; i < segments; ++i) {
    for (size_t k = 0; k + 1 < bottoms[i].size(); ++k) {
      faces->push_back(Eigen::Vector3i(bottom_center, bottoms[i][k + 1], bottoms[i][k]));
    }
    for (size_t k = 0; k + 1 < tops[i].size(); ++k) {
      faces->push_back(Eigen::Vector3i(top_center, tops[i][k], tops[i][k + 1]));
    }
  }
  if (!right_handed) {
    for (size_t v = first; v < vertices->size(); ++v) (*vertices)[v].y() = -(*vertices)[v].y();
    for (size_t f = first_face; f < faces->size(); ++f) std::swap((*faces)[f][1], (*faces)[f][2]);
  }
}

}  // namespace alsim
