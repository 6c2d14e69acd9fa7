// Test support for narrowphase tests: shapes at a pose, random draws, the deepest contact.
#pragma once

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "engine/collision/geom_shape.h"
#include "engine/data/contact.h"

namespace alsim::testing {

inline GeomShape Shape(GeomType type, const Vec3& size, const Vec3& pos = Vec3::Zero(),
                       const Mat3& rot = Mat3::Identity()) {
  GeomShape shape;
  shape.type = type;
  shape.size = size;
  shape.pos = pos;
  shape.rot = rot;
  return shape;
}

// Whether unit n is (up to sign) a face normal of box a or box b.
inline bool IsFaceNormal(const GeomShape& a, const GeomShape& b, const Vec3& n) {
  for (int i = 0; i < 3; ++i) {
    if (std::abs(a.rot.col(i).dot(n)) > 1 - 1e-9 || std::abs(b.rot.col(i).dot(n)) > 1 - 1e-9) {
      return true;
    }
  }
  return false;
}

// A rotation drawn uniformly (a normalized 4-D Gaussian is a uniform unit quaternion).
inline Mat3 RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  return Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng))
      .normalized()
      .toRotationMatrix();
}

inline Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  return Vec3(normal(rng), normal(rng), normal(rng)).normalized();
}

// The points as an MJCF mesh's `vertex` attribute (x y z ..., 9 significant digits).
inline std::string VertexList(const std::vector<Vec3>& points) {
  std::ostringstream out;
  out.precision(9);
  for (const Vec3& p : points) out << p.x() << " " << p.y() << " " << p.z() << " ";
  return out.str();
}

inline double Uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

// Index of the contact with the smallest (most negative) distance among c[0 .. n).
inline int Deepest(const Contact* c, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (c[i].dist < c[best].dist) best = i;
  }
  return best;
}

}  // namespace alsim::testing
