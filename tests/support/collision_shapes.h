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

// A rotation drawn uniformly (a normalized 4-D Gaussian is a uniform unit quaternion). Here and
// below every draw goes into a named local, in source order: the order in which a call's
// arguments are evaluated is unspecified (g++ and clang differ), and the poses must not be.
inline Mat3 RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  const double w = normal(rng), x = normal(rng), y = normal(rng), z = normal(rng);
  return Eigen::Quaterniond(w, x, y, z).normalized().toRotationMatrix();
}

inline Vec3 RandomUnit(std::mt19937& rng) {
  std::normal_distribution<double> normal;
  const double x = normal(rng), y = normal(rng), z = normal(rng);
  return Vec3(x, y, z).normalized();
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

// A point uniform in the cube [lo, hi)^3, drawn x, then y, then z (named locals, so the order
// does not depend on the compiler's argument evaluation order).
inline Vec3 UniformVec3(std::mt19937& rng, double lo, double hi) {
  const double x = Uniform(rng, lo, hi);
  const double y = Uniform(rng, lo, hi);
  const double z = Uniform(rng, lo, hi);
  return Vec3(x, y, z);
}

// RandomUnit(rng) * Uniform(rng, lo, hi): the direction drawn first, then the length (the two
// operands of a product are evaluated in an unspecified order).
inline Vec3 RandomOffset(std::mt19937& rng, double lo, double hi) {
  const Vec3 direction = RandomUnit(rng);
  const double length = Uniform(rng, lo, hi);
  return direction * length;
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
