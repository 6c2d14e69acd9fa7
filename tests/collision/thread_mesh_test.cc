// The M48 nut and bolt meshes of scenes/assets/ (written by scenes/generate_thread_meshes.py)
// against SdfThread, the bolt's field: each is watertight with outward normals and of the volume
// its profile gives; every nut vertex lies at the documented clearance c = 50 um from the bolt (no
// nearer; the thread's vertices exactly there), every point of its faces within the chords' sag
// of it; every bolt vertex lies on the field's zero set, and SdfThread::Triangulate writes the
// same bolt.
#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "engine/collision/sdf_thread.h"

namespace alsim {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kClearance = 50e-6;
// The faces' sag toward the bolt the generator documents: 8.2 um across its 3 deg columns, 1.7 um
// on the crest arcs.
constexpr double kSag = 10e-6;
// float32 coordinates of points 0.05 m from the origin: 4e-9 m apart; the field is within
// 1.0007-Lipschitz there.
constexpr double kRounding = 1e-8;

using Triangle = std::array<Vec3, 3>;

std::vector<Triangle> ReadBinaryStl(const std::string& path, std::uintmax_t* bytes) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  *bytes = data.size();
  std::vector<Triangle> triangles;
  if (data.size() < 84) return triangles;
  std::uint32_t count = 0;
  std::memcpy(&count, data.data() + 80, 4);
  EXPECT_EQ(data.size(), 84 + 50 * std::uintmax_t(count)) << path;
  EXPECT_NE(std::string(data.data(), 5), "solid") << "a binary STL must not open like ASCII";
  if (data.size() != 84 + 50 * std::uintmax_t(count)) return triangles;
  for (std::uint32_t t = 0; t < count; ++t) {
    float values[12];
    std::memcpy(values, data.data() + 84 + 50 * std::size_t(t), sizeof(values));
    Triangle triangle;
    for (int v = 0; v < 3; ++v) {
      triangle[v] = Vec3(values[3 + 3 * v], values[4 + 3 * v], values[5 + 3 * v]);
    }
    triangles.push_back(triangle);
  }
  return triangles;
}

struct Indexed {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> faces;
};

// Vertices merged where their float32 coordinates are equal.
Indexed Index(const std::vector<Triangle>& triangles) {
  Indexed mesh;
  std::map<std::array<double, 3>, int> index;
  for (const Triangle& triangle : triangles) {
    std::array<int, 3> face{};
    for (int v = 0; v < 3; ++v) {
      const std::array<double, 3> key{triangle[v].x(), triangle[v].y(), triangle[v].z()};
      const auto [it, added] = index.emplace(key, int(mesh.vertices.size()));
      if (added) mesh.vertices.push_back(triangle[v]);
      face[v] = it->second;
    }
    mesh.faces.push_back(face);
  }
  return mesh;
}

// Every directed edge once and its reverse once: each edge in exactly two triangles, oriented
// consistently; no degenerate face. Returns the Euler characteristic V - E + F.
int ExpectWatertight(const Indexed& mesh, const std::string& name) {
  std::map<std::pair<int, int>, int> directed;
  for (const auto& f : mesh.faces) {
    EXPECT_TRUE(f[0] != f[1] && f[1] != f[2] && f[2] != f[0]) << name;
    for (int e = 0; e < 3; ++e) ++directed[{f[e], f[(e + 1) % 3]}];
  }
  int bad = 0;
  for (const auto& [edge, count] : directed) {
    const auto reverse = directed.find({edge.second, edge.first});
    if (count != 1 || reverse == directed.end() || reverse->second != 1) ++bad;
  }
  EXPECT_EQ(bad, 0) << name << ": edges not shared by exactly two consistently oriented faces";
  return int(mesh.vertices.size()) - int(directed.size() / 2) + int(mesh.faces.size());
}

double SignedVolume(const std::vector<Triangle>& triangles) {
  double volume = 0;
  for (const Triangle& t : triangles) volume += t[0].dot(t[1].cross(t[2])) / 6;
  return volume;
}

// The radius where the thread's field (caps far away) equals `level` on the half-plane theta = 0
// at screw coordinate u = z, by bisection: the inner radius of a thread offset by `level`.
double LevelRadius(const SdfThread& thread, double u, double level) {
  double lo = 0, hi = thread.major_diameter;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (thread.Distance(Vec3(mid, 0, u)) < level ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The mean of R^2 over a period for the level set `level`: the volume of r <= R over a length L
// is pi <R^2> L for any L, since over each turn's angles every u occurs once.
double MeanSquaredRadius(const SdfThread& thread, double level) {
  constexpr int kSamples = 20000;
  double sum = 0;
  for (int i = 0; i < kSamples; ++i) {
    const double r = LevelRadius(thread, thread.pitch * ((i + 0.5) / kSamples - 0.5), level);
    sum += r * r;
  }
  return sum / kSamples;
}

SdfThread Unbounded() {
  SdfThread thread;
  thread.z0 = -1;
  thread.z1 = 1;
  return thread;
}

std::string Asset(const char* name) { return std::string(ALSIM_SCENES_DIR) + "/assets/" + name; }

TEST(ThreadMeshes, NutIsWatertightWithTheHexagonAndVolumeOfIso4032) {
  std::uintmax_t bytes = 0;
  const std::vector<Triangle> triangles = ReadBinaryStl(Asset("m48_nut.stl"), &bytes);
  ASSERT_FALSE(triangles.empty());
  EXPECT_LT(bytes, 2u << 20);
  EXPECT_GE(triangles.size(), 5000u);
  EXPECT_LE(triangles.size(), 20000u);
  const Indexed mesh = Index(triangles);
  EXPECT_EQ(ExpectWatertight(mesh, "nut"), 0);  // a solid with one hole: a torus's genus
  // The hexagon across flats 75 mm (flat normals at 30 + 60 k deg), 38 mm high, about the origin.
  double across = 0, z_lo = 1, z_hi = -1;
  for (const Vec3& v : mesh.vertices) {
    for (int k = 0; k < 3; ++k) {
      const double angle = kPi / 6 + k * kPi / 3;
      across = std::max(across, 2 * std::abs(v.x() * std::cos(angle) + v.y() * std::sin(angle)));
    }
    z_lo = std::min(z_lo, v.z()), z_hi = std::max(z_hi, v.z());
  }
  EXPECT_NEAR(across, 0.075, 1e-7);
  EXPECT_NEAR(z_lo, -0.019, 1e-8);
  EXPECT_NEAR(z_hi, 0.019, 1e-8);
  // Hexagon (sqrt(3)/2 s^2) times m less the hole, pi <R_c^2> m. The faces' chords shrink the
  // hole by under the sag times its area (9e-3 m^2 x 8 um, 7e-8 m^3 of 1.2e-4 m^3).
  const double hole = kPi * MeanSquaredRadius(Unbounded(), kClearance) * 0.038;
  const double expected = std::sqrt(3.0) / 2 * 0.075 * 0.075 * 0.038 - hole;
  EXPECT_NEAR(SignedVolume(triangles), expected, 1e-3 * expected);
  EXPECT_GT(SignedVolume(triangles), expected);
}

// Every nut vertex at least c from the bolt (the field's value), the thread's vertices at c; every
// face's points at least c less the chords' sag. The bolt is the mesh's own shank, longer than
// the nut, so its caps play no part.
TEST(ThreadMeshes, NutKeepsItsClearanceFromTheBoltField) {
  std::uintmax_t bytes = 0;
  const std::vector<Triangle> triangles = ReadBinaryStl(Asset("m48_nut.stl"), &bytes);
  ASSERT_FALSE(triangles.empty());
  const SdfThread bolt;
  const Indexed mesh = Index(triangles);
  int thread_vertices = 0;
  double nearest_vertex = 1;
  for (const Vec3& v : mesh.vertices) {
    const double phi = bolt.Distance(v);
    nearest_vertex = std::min(nearest_vertex, phi);
    EXPECT_GE(phi, kClearance - kRounding) << v.transpose();
    if (std::hypot(v.x(), v.y()) < 0.03) {  // the hole's, not the hexagon's
      ++thread_vertices;
      EXPECT_LE(phi, kClearance + kRounding) << v.transpose();
    }
  }
  EXPECT_GT(thread_vertices, int(mesh.vertices.size()) * 9 / 10);
  EXPECT_NEAR(nearest_vertex, kClearance, kRounding);
  double nearest_face = 1;
  for (const Triangle& t : triangles) {
    for (int i = 0; i <= 4; ++i) {
      for (int j = 0; i + j <= 4; ++j) {
        const Vec3 p = t[0] + (t[1] - t[0]) * (i / 4.0) + (t[2] - t[0]) * (j / 4.0);
        nearest_face = std::min(nearest_face, bolt.Distance(p));
      }
    }
  }
  EXPECT_GE(nearest_face, kClearance - kSag);
  // The sag is real: the faces come nearer than the vertices by more than half the bound.
  EXPECT_LT(nearest_face, kClearance - kSag / 2);
}

// The bolt mesh: watertight (genus 0), its vertices on the field's zero set (caps included), its
// volume pi <R^2> (z1 - z0) less the chords' sag.
TEST(ThreadMeshes, BoltIsWatertightOnTheFieldsZeroSet) {
  std::uintmax_t bytes = 0;
  const std::vector<Triangle> triangles = ReadBinaryStl(Asset("m48_bolt.stl"), &bytes);
  ASSERT_FALSE(triangles.empty());
  EXPECT_LT(bytes, 2u << 20);
  EXPECT_LE(triangles.size(), 20000u);
  const Indexed mesh = Index(triangles);
  EXPECT_EQ(ExpectWatertight(mesh, "bolt"), 2);
  const SdfThread bolt;
  for (const Vec3& v : mesh.vertices) EXPECT_NEAR(bolt.Distance(v), 0, kRounding) << v.transpose();
  // The chords cut into the shank by under its area times the sag (2.3e-2 m^2 x 8 um).
  const double expected = kPi * MeanSquaredRadius(Unbounded(), 0) * (bolt.z1 - bolt.z0);
  EXPECT_NEAR(SignedVolume(triangles), expected, 1.5e-3 * expected);
  EXPECT_LT(SignedVolume(triangles), expected);
}

// SdfThread::Triangulate: the M48 at 120 segments is the asset's bolt (the same vertices at
// float32, as many triangles); other threads, right- and left-handed, are watertight with outward
// normals, their vertices on the zero set, and their volume pi <R^2> L less at most the columns'
// chord sag.
TEST(ThreadMeshes, TriangulateIsTheAssetsBoltAndWatertight) {
  std::uintmax_t bytes = 0;
  const std::vector<Triangle> asset = ReadBinaryStl(Asset("m48_bolt.stl"), &bytes);
  ASSERT_FALSE(asset.empty());
  std::vector<Vec3> vertices(2, Vec3::Constant(7));  // appended after what is there
  std::vector<Eigen::Vector3i> faces(1, Eigen::Vector3i(0, 1, 0));
  SdfThread().Triangulate(120, &vertices, &faces);
  ASSERT_EQ(faces.size() - 1, asset.size());
  std::vector<Triangle> triangles;
  for (size_t f = 1; f < faces.size(); ++f) {
    Triangle t;
    for (int v = 0; v < 3; ++v) t[v] = vertices[2 + faces[f][v]].cast<float>().cast<double>();
    triangles.push_back(t);
  }
  const Indexed ours = Index(triangles), theirs = Index(asset);
  ASSERT_EQ(ours.vertices.size(), theirs.vertices.size());
  std::vector<std::array<double, 3>> a, b;
  for (const Vec3& v : ours.vertices) a.push_back({v.x(), v.y(), v.z()});
  for (const Vec3& v : theirs.vertices) b.push_back({v.x(), v.y(), v.z()});
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_NEAR(SignedVolume(triangles), SignedVolume(asset), 1e-12);

  for (const bool right_handed : {true, false}) {
    for (const int segments : {7, 60}) {
      SdfThread thread;
      thread.major_diameter = 0.01;
      thread.pitch = 0.0015;
      thread.z0 = -0.013;
      thread.z1 = 0.0071;
      thread.right_handed = right_handed;
      std::vector<Vec3> v;
      std::vector<Eigen::Vector3i> f;
      thread.Triangulate(segments, &v, &f);
      std::vector<Triangle> t;
      for (const Eigen::Vector3i& face : f) t.push_back({v[face[0]], v[face[1]], v[face[2]]});
      const std::string name = std::to_string(segments) + (right_handed ? " right" : " left");
      EXPECT_EQ(ExpectWatertight(Index(t), name), 2) << name;
      for (const Vec3& p : v) EXPECT_NEAR(thread.Distance(p), 0, 1e-15) << name;
      SdfThread unbounded = thread;
      unbounded.z0 = -1, unbounded.z1 = 1;
      const double expected = kPi * MeanSquaredRadius(unbounded, 0) * (thread.z1 - thread.z0);
      const double sag = 1 - std::cos(kPi / segments);
      EXPECT_LT(SignedVolume(t), expected) << name;
      EXPECT_GT(SignedVolume(t), (1 - 3 * sag) * expected) << name;
    }
  }
}

}  // namespace
}  // namespace alsim
