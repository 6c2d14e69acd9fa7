// A box of tetrahedra for the deformables' tests: nx x ny x nz cells of size (dx, dy, dz) from
// the origin, each cell split into the six Kuhn tets about its main diagonal (one per order in
// which the path from the cell's low corner to its high corner steps along x, y and z), which
// conform between cells; every tet is positively oriented (TetGen's orientation).
#pragma once

#include <array>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Geometry>

#include "engine/math/types.h"

namespace alsim::testing {

struct KuhnGrid {
  int nx = 0, ny = 0, nz = 0;
  std::vector<Vec3> points;
  std::vector<std::array<int, 4>> tets;
  // The point at grid coordinates (x, y, z).
  int Id(int x, int y, int z) const { return (z * (ny + 1) + y) * (nx + 1) + x; }
};

inline KuhnGrid MakeKuhnGrid(int nx, int ny, int nz, double dx, double dy, double dz) {
  KuhnGrid g;
  g.nx = nx;
  g.ny = ny;
  g.nz = nz;
  for (int z = 0; z <= nz; ++z) {
    for (int y = 0; y <= ny; ++y) {
      for (int x = 0; x <= nx; ++x) g.points.emplace_back(dx * x, dy * y, dz * z);
    }
  }
  constexpr int kOrders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int z = 0; z < nz; ++z) {
    for (int y = 0; y < ny; ++y) {
      for (int x = 0; x < nx; ++x) {
        for (const auto& order : kOrders) {
          int c[3] = {x, y, z};
          std::array<int, 4> t;
          t[0] = g.Id(c[0], c[1], c[2]);
          for (int k = 0; k < 3; ++k) {
            ++c[order[k]];
            t[k + 1] = g.Id(c[0], c[1], c[2]);
          }
          const Vec3 a = g.points[t[1]] - g.points[t[0]], b = g.points[t[2]] - g.points[t[0]],
                     e = g.points[t[3]] - g.points[t[0]];
          if (a.dot(b.cross(e)) < 0) std::swap(t[1], t[2]);
          g.tets.push_back(t);
        }
      }
    }
  }
  return g;
}

// The grid as a deformable's inline <tetmesh vertices="..." tets="..."/>
// (engine/model/deformable_spec.h).
inline std::string TetMeshXml(const KuhnGrid& grid) {
  std::string vertices, tets;
  char text[96];
  for (const Vec3& p : grid.points) {
    std::snprintf(text, sizeof text, "%.17g %.17g %.17g ", p.x(), p.y(), p.z());
    vertices += text;
  }
  for (const auto& t : grid.tets) {
    std::snprintf(text, sizeof text, "%d %d %d %d ", t[0], t[1], t[2], t[3]);
    tets += text;
  }
  return "<tetmesh vertices='" + vertices + "' tets='" + tets + "'/>";
}

}  // namespace alsim::testing
