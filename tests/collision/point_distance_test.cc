// Point-to-geom and point-to-triangle distances (engine/collision/point_distance.h): closed forms
// at chosen points, and at random points the identity p = s + d n, s on the surface, the sign
// (inside or out), and d against a brute-force minimum over a dense sampling of the surface; a
// box's mesh hull gives the box's distances; a posed geom the same as in its own frame.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/Geometry>

#include "engine/collision/point_distance.h"

namespace alsim {
namespace {

GeomShape Shape(GeomType type, const Vec3& size) {
  GeomShape s;
  s.type = type;
  s.size = size;
  return s;
}

TEST(PointDistanceTest, ClosedFormsAtChosenPoints) {
  PointDistance out;
  ASSERT_TRUE(PointGeomDistance(Shape(GeomType::kSphere, Vec3(0.5, 0, 0)), Vec3(0, 2, 0), &out));
  EXPECT_DOUBLE_EQ(out.distance, 1.5);
  EXPECT_EQ(out.normal, Vec3(0, 1, 0));
  ASSERT_TRUE(PointGeomDistance(Shape(GeomType::kCapsule, Vec3(0.1, 1, 0)), Vec3(0.3, 0, 2), &out));
  EXPECT_NEAR(out.distance, std::hypot(0.3, 1.0) - 0.1, 1e-15);  // beyond the top cap's centre
  ASSERT_TRUE(PointGeomDistance(Shape(GeomType::kBox, Vec3(1, 2, 3)), Vec3(0.5, 0, 0), &out));
  EXPECT_DOUBLE_EQ(out.distance, -0.5);  // inside, nearest the +x face
  EXPECT_EQ(out.normal, Vec3(1, 0, 0));
  ASSERT_TRUE(PointGeomDistance(Shape(GeomType::kBox, Vec3(1, 2, 3)), Vec3(2, 3, 0), &out));
  EXPECT_DOUBLE_EQ(out.distance, std::sqrt(2.0));  // nearest the edge (1, 2, z)
  ASSERT_TRUE(PointGeomDistance(Shape(GeomType::kCylinder, Vec3(1, 1, 0)), Vec3(2, 0, 2), &out));
  EXPECT_DOUBLE_EQ(out.distance, std::sqrt(2.0));  // nearest the rim
  ASSERT_TRUE(PointGeomDistance(Shape(GeomType::kPlane, Vec3(1, 1, 0)), Vec3(3, 4, -0.2), &out));
  EXPECT_DOUBLE_EQ(out.distance, -0.2);
  EXPECT_FALSE(PointGeomDistance(Shape(GeomType::kEllipsoid, Vec3(1, 1, 1)), Vec3(3, 0, 0), &out));
}

// Dense samples of a shape's surface (local frame) and its inside predicate.
struct Surface {
  std::vector<Vec3> points;
  std::function<bool(const Vec3&)> inside;
  double resolution = 0;  // the largest gap between samples
};

Surface SampleSurface(GeomType type, const Vec3& size) {
  Surface s;
  const int n = 120;
  constexpr double kPi = 3.14159265358979323846;
  switch (type) {
    case GeomType::kSphere:
    case GeomType::kCapsule: {
      const double r = size[0], h = type == GeomType::kCapsule ? size[1] : 0;
      for (int i = 0; i <= n; ++i) {
        const double theta = kPi * i / n;
        for (int j = 0; j < 2 * n; ++j) {
          const double phi = kPi * j / n;
          const Vec3 d(std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi),
                       std::cos(theta));
          s.points.push_back(d * r + Vec3(0, 0, d.z() >= 0 ? h : -h));
        }
      }
      for (int k = 0; k <= n; ++k) {  // the capsule's side
        for (int j = 0; j < 2 * n; ++j) {
          const double phi = kPi * j / n;
          s.points.emplace_back(r * std::cos(phi), r * std::sin(phi), -h + 2 * h * k / n);
        }
      }
      s.inside = [r, h](const Vec3& q) {
        return (q - Vec3(0, 0, std::clamp(q.z(), -h, h))).norm() < r;
      };
      s.resolution = kPi * r / n + 2 * h / n;
      break;
    }
    case GeomType::kCylinder: {
      const double r = size[0], h = size[1];
      for (int k = 0; k <= n; ++k) {
        for (int j = 0; j < 2 * n; ++j) {
          const double phi = kPi * j / n, t = static_cast<double>(k) / n;
          s.points.emplace_back(r * std::cos(phi), r * std::sin(phi), -h + 2 * h * t);
          s.points.emplace_back(t * r * std::cos(phi), t * r * std::sin(phi), h);
          s.points.emplace_back(t * r * std::cos(phi), t * r * std::sin(phi), -h);
        }
      }
      s.inside = [r, h](const Vec3& q) {
        return std::hypot(q.x(), q.y()) < r && std::abs(q.z()) < h;
      };
      s.resolution = kPi * r / n + 2 * h / n;
      break;
    }
    default: {  // box
      for (int axis = 0; axis < 3; ++axis) {
        for (const double sign : {-1.0, 1.0}) {
          for (int i = 0; i <= n; ++i) {
            for (int j = 0; j <= n; ++j) {
              Vec3 p;
              p[axis] = sign * size[axis];
              p[(axis + 1) % 3] = size[(axis + 1) % 3] * (2.0 * i / n - 1);
              p[(axis + 2) % 3] = size[(axis + 2) % 3] * (2.0 * j / n - 1);
              s.points.push_back(p);
            }
          }
        }
      }
      s.inside = [size](const Vec3& q) { return (q.cwiseAbs() - size).maxCoeff() < 0; };
      s.resolution = 2 * size.maxCoeff() / n;
    }
  }
  return s;
}

TEST(PointDistanceTest, RandomPointsAgreeWithTheSampledSurfaceInAnyPose) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(-1, 1);
  const Eigen::Matrix3d rot = Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  const Vec3 pos(0.3, -1, 2);
  for (const auto& [type, size] : {std::pair{GeomType::kSphere, Vec3(0.4, 0, 0)},
                                   {GeomType::kCapsule, Vec3(0.2, 0.5, 0)},
                                   {GeomType::kCylinder, Vec3(0.3, 0.4, 0)},
                                   {GeomType::kBox, Vec3(0.2, 0.5, 0.3)}}) {
    const Surface surface = SampleSurface(type, size);
    GeomShape shape = Shape(type, size);
    shape.rot = rot;
    shape.pos = pos;
    for (int trial = 0; trial < 200; ++trial) {
      const Vec3 q(unit(rng), unit(rng), unit(rng));  // local, within about the shape's size
      const Vec3 p = pos + rot * q;
      PointDistance out;
      ASSERT_TRUE(PointGeomDistance(shape, p, &out));
      EXPECT_NEAR((out.surface + out.distance * out.normal - p).norm(), 0, 1e-12);
      EXPECT_NEAR(out.normal.norm(), 1, 1e-12);
      EXPECT_EQ(out.distance < 0, surface.inside(q)) << static_cast<int>(type) << " " << trial;
      double nearest = std::numeric_limits<double>::infinity();
      for (const Vec3& s : surface.points) nearest = std::min(nearest, (q - s).norm());
      EXPECT_NEAR(std::abs(out.distance), nearest, surface.resolution)
          << static_cast<int>(type) << " " << trial;
      EXPECT_LE(std::abs(out.distance), nearest + 1e-12);  // s is on the surface, none nearer
    }
  }
}

TEST(PointDistanceTest, ABoxMeshHullGivesTheBoxsDistances) {
  const Vec3 half(0.2, 0.5, 0.3);
  std::vector<Vec3> vertices;
  for (int i = 0; i < 8; ++i) {
    vertices.emplace_back(i & 1 ? half.x() : -half.x(), i & 2 ? half.y() : -half.y(),
                          i & 4 ? half.z() : -half.z());
  }
  // Twelve outward triangles (two per face).
  const std::vector<Eigen::Vector3i> faces = {{0, 2, 1}, {1, 2, 3}, {4, 5, 6}, {5, 7, 6},
                                              {0, 1, 4}, {1, 5, 4}, {2, 6, 3}, {3, 6, 7},
                                              {0, 4, 2}, {2, 4, 6}, {1, 3, 5}, {3, 7, 5}};
  GeomShape mesh = Shape(GeomType::kMesh, Vec3::Zero());
  mesh.vertices = vertices.data();
  mesh.vertex_count = 8;
  mesh.hull_faces = faces.data();
  mesh.hull_face_count = 12;
  const GeomShape box = Shape(GeomType::kBox, half);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int trial = 0; trial < 500; ++trial) {
    const Vec3 p(unit(rng), unit(rng), unit(rng));
    PointDistance a, b;
    ASSERT_TRUE(PointGeomDistance(mesh, p, &a));
    ASSERT_TRUE(PointGeomDistance(box, p, &b));
    EXPECT_NEAR(a.distance, b.distance, 1e-12) << trial;
    EXPECT_NEAR((a.surface - b.surface).norm(), 0, 1e-12) << trial;
  }
}

TEST(PointDistanceTest, ClosestPointOnATriangleIsTheSampledMinimum) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> unit(-1, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const Vec3 a(unit(rng), unit(rng), unit(rng)), b(unit(rng), unit(rng), unit(rng)),
        c(unit(rng), unit(rng), unit(rng)), p(2 * unit(rng), 2 * unit(rng), 2 * unit(rng));
    Vec3 w;
    const Vec3 q = ClosestPointOnTriangle(p, a, b, c, &w);
    EXPECT_NEAR(w.sum(), 1, 1e-12);
    EXPECT_GE(w.minCoeff(), -1e-12);
    EXPECT_NEAR((w[0] * a + w[1] * b + w[2] * c - q).norm(), 0, 1e-12);
    const int n = 200;
    double nearest = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= n; ++i) {
      for (int j = 0; i + j <= n; ++j) {
        const Vec3 s =
            a + (b - a) * (static_cast<double>(i) / n) + (c - a) * (static_cast<double>(j) / n);
        nearest = std::min(nearest, (p - s).norm());
      }
    }
    const double edge = std::max({(b - a).norm(), (c - a).norm(), (c - b).norm()});
    EXPECT_LE((p - q).norm(), nearest + 1e-12) << trial;
    EXPECT_NEAR((p - q).norm(), nearest, edge / n) << trial;
  }
}

TEST(PointDistanceTest, ClosestSegmentTriangleIsTheSampledMinimum) {
  std::mt19937 rng(21);
  std::uniform_real_distribution<double> unit(-1, 1);
  int crossings = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Vec3 a(unit(rng), unit(rng), 0.3 * unit(rng)), b(unit(rng), unit(rng), 0.3 * unit(rng)),
        c(unit(rng), unit(rng), 0.3 * unit(rng));
    const Vec3 p0(unit(rng), unit(rng), 1.5 * unit(rng)), p1(unit(rng), unit(rng), 1.5 * unit(rng));
    double t = -1;
    Vec3 w;
    const double distance = ClosestSegmentTriangle(p0, p1, a, b, c, &t, &w);
    ASSERT_GE(t, 0);
    ASSERT_LE(t, 1);
    EXPECT_NEAR(w.sum(), 1, 1e-12);
    EXPECT_GE(w.minCoeff(), -1e-12);
    const Vec3 on_segment = p0 + t * (p1 - p0), on_triangle = w[0] * a + w[1] * b + w[2] * c;
    EXPECT_NEAR((on_segment - on_triangle).norm(), distance, 1e-12) << trial;
    crossings += distance == 0;
    // Brute force: the segment sampled against the triangle's closest point (exact per sample).
    const int n = 2000;
    double nearest = std::numeric_limits<double>::infinity();
    for (int k = 0; k <= n; ++k) {
      const Vec3 x = p0 + (p1 - p0) * (static_cast<double>(k) / n);
      Vec3 weights;
      nearest = std::min(nearest, (ClosestPointOnTriangle(x, a, b, c, &weights) - x).norm());
    }
    EXPECT_LE(distance, nearest + 1e-12) << trial;
    EXPECT_NEAR(distance, nearest, (p1 - p0).norm() / n) << trial;
  }
  EXPECT_GT(crossings, 10);  // the crossing branch ran
}

}  // namespace
}  // namespace alsim
