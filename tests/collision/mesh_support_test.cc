// Mesh support by hill climbing on MuJoCo's convex-hull graph: the walk must return exactly the
// brute-force scan's maximizer of d.x (lowest index on ties) for any direction and any start.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "engine/collision/convex_pairs.h"
#include "engine/collision/narrowphase.h"
#include "tests/support/collision_shapes.h"
#include "tests/support/mujoco_oracle.h"

namespace alsim {
namespace {

using testing::OracleScene;
using testing::RandomUnit;
using testing::VertexList;

// Four meshes: points on a sphere (all on the hull), points in a cube (most inside), a box (8
// vertices: axis directions tie on faces) and a 40-gon prism (big coplanar faces and ties).
std::string MeshScene() {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<Vec3> sphere, cube, box, prism;
  for (int i = 0; i < 3000; ++i) sphere.push_back(0.1 * RandomUnit(rng));
  for (int i = 0; i < 3000; ++i) {
    const double x = uniform(rng);
    const double y = uniform(rng);
    const double z = uniform(rng);
    cube.push_back(0.1 * Vec3(x, y, z));
  }
  for (int i = 0; i < 8; ++i) {
    box.emplace_back(i & 1 ? 0.1 : -0.1, i & 2 ? 0.05 : -0.05, i & 4 ? 0.02 : -0.02);
  }
  for (int i = 0; i < 40; ++i) {
    const double angle = 2 * M_PI * i / 40;
    prism.emplace_back(0.1 * std::cos(angle), 0.1 * std::sin(angle), -0.05);
    prism.emplace_back(0.1 * std::cos(angle), 0.1 * std::sin(angle), 0.05);
  }
  std::ostringstream xml;
  xml << "<mujoco><asset>"
      << "<mesh name='sphere' vertex='" << VertexList(sphere) << "'/>"
      << "<mesh name='cube' vertex='" << VertexList(cube) << "'/>"
      << "<mesh name='box' vertex='" << VertexList(box) << "'/>"
      << "<mesh name='prism' vertex='" << VertexList(prism) << "'/>"
      << "</asset><worldbody>";
  for (const char* name : {"sphere", "cube", "box", "prism"}) {
    xml << "<body><freejoint/><geom type='mesh' mesh='" << name << "'/></body>";
  }
  xml << "</worldbody></mujoco>";
  return xml.str();
}

TEST(MeshSupportTest, WalkMatchesScanOnRandomAndAxisDirections) {
  OracleScene scene(testing::WriteTempScene("mesh_support.xml", MeshScene()));
  const Model& m = scene.model();
  ASSERT_EQ(m.nmesh, 4);
  std::mt19937 rng(17);
  for (int g = 0; g < m.ngeom; ++g) {
    const GeomShape walked = ShapeOfGeom(m, scene.data(), g);
    ASSERT_GT(walked.graph_vert_count, 3) << "mesh " << g << " has no hull graph";
    GeomShape scanned = walked;
    scanned.graph_vert_count = 0;  // MeshSupport then scans every vertex
    std::vector<Vec3> directions;
    for (int i = 0; i < 3; ++i) {
      directions.push_back(Vec3::Unit(i));
      directions.push_back(-Vec3::Unit(i));
    }
    directions.push_back(Vec3(1, 1, 0));
    directions.push_back(Vec3(1, 0, -1));
    for (int i = 0; i < 3000; ++i) directions.push_back(RandomUnit(rng));
    // Nearby directions in sequence, as MPR asks them, exercise the warm start.
    for (int i = 0; i < 300; ++i) {
      Vec3 d = RandomUnit(rng);
      for (int k = 0; k < 10; ++k) directions.push_back((d += 0.05 * RandomUnit(rng)));
    }
    for (const Vec3& d : directions) {
      const Vec3 expected = SupportPoint(scanned, d);
      EXPECT_EQ(SupportPoint(walked, d), expected) << "mesh " << g << " d " << d.transpose();
      GeomShape cold = walked;
      cold.warm_vertex = -1;
      EXPECT_EQ(SupportPoint(cold, d), expected) << "mesh " << g << " cold";
    }
  }
}

// The warm start must change only the speed: from every hull vertex as the start (and the
// direction's cube-map cell, which the walk compares it with), the walk returns the scan's vertex.
TEST(MeshSupportTest, WalkAnswerIsTheSameFromEveryStart) {
  OracleScene scene(testing::WriteTempScene("mesh_support_starts.xml", MeshScene()));
  const Model& m = scene.model();
  std::mt19937 rng(29);
  for (int g = 0; g < m.ngeom; ++g) {
    const GeomShape walked = ShapeOfGeom(m, scene.data(), g);
    GeomShape scanned = walked;
    scanned.graph_vert_count = 0;
    const int starts = walked.graph_vert_count;
    const int stride = std::max(1, starts / 200);  // up to ~200 starts on the big hulls
    for (int i = 0; i < 40; ++i) {
      const Vec3 d = RandomUnit(rng);
      const Vec3 expected = SupportPoint(scanned, d);
      for (int start = 0; start < starts; start += stride) {
        GeomShape warm = walked;
        warm.warm_vertex = start;
        ASSERT_EQ(SupportPoint(warm, d), expected) << "mesh " << g << " start " << start;
      }
    }
  }
}

// Each cube-map cell's start is the support along the cell's centre direction (the import climbs
// to it; equal support values, since ties may pick another vertex of the same face), so a walk
// from it needs at most a few moves for any direction in the cell.
TEST(MeshSupportTest, CubeMapStartsAreTheSupportsAlongTheCellCentres) {
  OracleScene scene(testing::WriteTempScene("mesh_support_cells.xml", MeshScene()));
  const Model& m = scene.model();
  ASSERT_EQ(m.mesh_graph_dir_start.size(),
            static_cast<size_t>(6 * kMeshStartCells * kMeshStartCells * m.nmesh));
  for (int g = 0; g < m.ngeom; ++g) {
    const GeomShape s = ShapeOfGeom(m, scene.data(), g);
    for (int face = 0; face < 6; ++face) {
      const int axis = face / 2;
      for (int row = 0; row < kMeshStartCells; ++row) {
        for (int col = 0; col < kMeshStartCells; ++col) {
          Vec3 d = Vec3::Zero();
          d[axis] = face % 2 == 0 ? 1 : -1;
          d[(axis + 1) % 3] = (2.0 * row + 1) / kMeshStartCells - 1;
          d[(axis + 2) % 3] = (2.0 * col + 1) / kMeshStartCells - 1;
          double best = -INFINITY;
          for (int v = 0; v < s.vertex_count; ++v) best = std::max(best, s.vertices[v].dot(d));
          const int h = s.graph_dir_start[(face * kMeshStartCells + row) * kMeshStartCells + col];
          ASSERT_GE(h, 0);
          ASSERT_LT(h, s.graph_vert_count);
          EXPECT_NEAR(s.vertices[s.graph_vert[h]].dot(d), best, 1e-12)
              << "mesh " << g << " face " << face << " cell " << row << "," << col;
        }
      }
    }
  }
}

}  // namespace
}  // namespace alsim
