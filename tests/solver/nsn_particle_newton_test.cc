// The non-smooth Newton step on particles (engine/solver/nsn/particle_newton.h) against closed
// forms: damped Newton from u = 0 reaches (1 - (1 - t)^N) u~ with no rows (digest 14, the
// README's claim); a bar of Kuhn tets hanging from its top stretches by rho g L^2 / (2 Y), and
// the same column standing on a frictionless floor shortens by as much, its contact forces
// summing to its weight, for the linear and corotated materials at small strain. (Neo-Hookean
// rows in principal stretches do not converge here yet: particle_newton.h.)
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <Eigen/Geometry>

#include "engine/solver/nsn/particle_newton.h"
#include "tests/support/allocation_counter.h"

namespace alsim {
namespace {

constexpr double kG = 9.81;

// A box of nx x ny x nz cells of size (dx, dy, dz) from the origin, six Kuhn tets per cell
// (conforming), positively oriented.
struct Grid {
  int nx, ny, nz;
  std::vector<Vec3> points;
  std::vector<std::array<int, 4>> tets;
  int Id(int x, int y, int z) const { return (z * (ny + 1) + y) * (nx + 1) + x; }
};

Grid MakeGrid(int nx, int ny, int nz, double dx, double dy, double dz) {
  Grid g{nx, ny, nz, {}, {}};
  for (int z = 0; z <= nz; ++z) {
    for (int y = 0; y <= ny; ++y) {
      for (int x = 0; x <= nx; ++x) g.points.emplace_back(dx * x, dy * y, dz * z);
    }
  }
  const int permutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int z = 0; z < nz; ++z) {
    for (int y = 0; y < ny; ++y) {
      for (int x = 0; x < nx; ++x) {
        for (const auto& p : permutations) {
          int c[3] = {x, y, z};
          std::array<int, 4> t;
          t[0] = g.Id(c[0], c[1], c[2]);
          for (int k = 0; k < 3; ++k) {
            ++c[p[k]];
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

// The system of a grid: lumped masses rho V_e / 4, the material's tets.
struct System {
  std::vector<double> mass;
  std::vector<ParticleTet> tets;
};

System MakeSystem(const Grid& grid, double rho, double young, double poisson,
                  DeformableMaterial material) {
  System s;
  s.mass.assign(grid.points.size(), 0);
  for (const auto& t : grid.tets) {
    ParticleTet tet;
    tet.vertices = t;
    TetVertices rest;
    for (int a = 0; a < 4; ++a) rest.col(a) = grid.points[t[a]];
    EXPECT_TRUE(MakeTetRest(rest, &tet.rest));
    tet.material = material;
    tet.linear = LinearMaterialFromYoungPoisson(young, poisson);
    tet.neo_hookean = NeoHookeanFromYoungPoisson(young, poisson);
    for (const int v : t) s.mass[v] += rho * tet.rest.volume / 4;
    s.tets.push_back(tet);
  }
  return s;
}

ParticleNewtonParameters Converged() {
  ParticleNewtonParameters p;
  p.newton_iterations = 60;
  p.newton_tolerance = 1e-11;
  p.step_fraction = 1;
  p.regularization = 0;
  p.krylov.max_iterations = 2000;
  p.krylov.relative_tolerance = 1e-13;
  return p;
}

std::vector<double> Positions(const Grid& grid) {
  std::vector<double> x;
  for (const Vec3& p : grid.points) x.insert(x.end(), {p.x(), p.y(), p.z()});
  return x;
}

// No rows: each damped iteration moves u by t (u~ - u), so after N of them u = (1 - (1 - t)^N) u~.
TEST(ParticleNewtonTest, DampedNewtonFromRestReachesTheGeometricFractionOfTheFreeVelocity) {
  ParticleNewtonStep step;
  step.SetSystem({1.0, 2.0}, {0, 0}, {}, {});
  for (const int n : {1, 2, 4, 6}) {
    ParticleNewtonParameters p;
    p.newton_iterations = n;
    std::vector<double> x = {0, 0, 1, 1, 0, 1}, v = {0.5, 0, 0, 0, -1, 2};
    const std::vector<double> f = {0, 0, -kG, 0, 0, -2 * kG};
    const double h = 0.01;
    std::vector<double> free(6);
    for (int i = 0; i < 6; ++i) free[i] = v[i] + h * f[i] / (i < 3 ? 1.0 : 2.0);
    const ParticleNewtonStatistics stats = step.Step(h, p, f.data(), 0, x.data(), v.data());
    EXPECT_EQ(stats.newton_iterations, n);
    const double fraction = 1 - std::pow(1 - p.step_fraction, n);
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(v[i], fraction * free[i], 1e-15) << n << " " << i;
  }
}

struct BarResult {
  double displacement = 0;   // of the free end's vertices, mean, m
  double speed = 0;          // largest vertex speed at the end, m/s
  double contact_force = 0;  // sum of contact multipliers, N
  double weight = 0;
};

// A bar of a x a x L (1 x 1 x nz cells) settled under gravity: hanging from its pinned top, or
// standing on a frictionless floor.
BarResult SettleBar(DeformableMaterial material, bool hanging) {
  const int nz = 8;
  const double a = 0.1, length = 1, rho = 1000, young = 1e8;
  const Grid grid = MakeGrid(1, 1, nz, a, a, length / nz);
  const System system = MakeSystem(grid, rho, young, 0, material);
  std::vector<char> pinned(grid.points.size(), 0);
  std::vector<ParticlePlane> planes;
  if (hanging) {
    for (int y = 0; y <= 1; ++y) {
      for (int x = 0; x <= 1; ++x) pinned[grid.Id(x, y, nz)] = 1;
    }
  } else {
    planes.push_back(ParticlePlane{});
  }
  ParticleNewtonStep step;
  step.SetSystem(system.mass, pinned, system.tets, planes);
  std::vector<double> x = Positions(grid), v(x.size(), 0), f(x.size(), 0);
  BarResult out;
  for (size_t k = 0; k < system.mass.size(); ++k) {
    f[3 * k + 2] = -system.mass[k] * kG;
    out.weight += system.mass[k] * kG;
  }
  const ParticleNewtonParameters p = Converged();
  for (int n = 0; n < 200; ++n) {
    const ParticleNewtonStatistics stats = step.Step(0.01, p, f.data(), 1e-3, x.data(), v.data());
    EXPECT_TRUE(stats.converged) << n << " " << stats.momentum_residual << " "
                                 << stats.row_residual;
  }
  // The free end: the bottom (hanging) or the top (standing).
  const int end = hanging ? 0 : nz;
  for (int y = 0; y <= 1; ++y) {
    for (int xx = 0; xx <= 1; ++xx) {
      const int id = grid.Id(xx, y, end);
      out.displacement += (x[3 * id + 2] - grid.points[id].z()) / 4;
    }
  }
  for (const double s : v) out.speed = std::max(out.speed, std::abs(s));
  const auto& lambda = step.lambda();
  for (size_t k = step.num_element_rows(); k < lambda.size(); ++k) out.contact_force += lambda[k];
  return out;
}

TEST(ParticleNewtonTest, AHangingBarStretchesByRhoGLSquaredOverTwoY) {
  const double expected = 1000 * kG * 1 * 1 / (2 * 1e8);  // 4.905e-5 m
  for (const DeformableMaterial material :
       {DeformableMaterial::kLinear, DeformableMaterial::kCorotated}) {
    const BarResult bar = SettleBar(material, true);
    EXPECT_NEAR(-bar.displacement, expected, 0.01 * expected) << static_cast<int>(material);
    EXPECT_LT(bar.speed, 1e-6);
  }
}

TEST(ParticleNewtonTest, AColumnOnAFrictionlessFloorShortensByRhoGLSquaredOverTwoY) {
  const double expected = 1000 * kG * 1 * 1 / (2 * 1e8);
  for (const DeformableMaterial material :
       {DeformableMaterial::kLinear, DeformableMaterial::kCorotated}) {
    const BarResult bar = SettleBar(material, false);
    EXPECT_NEAR(-bar.displacement, expected, 0.01 * expected) << static_cast<int>(material);
    EXPECT_NEAR(bar.contact_force, bar.weight, 1e-6 * bar.weight);
    EXPECT_LT(bar.speed, 1e-6);
  }
}

// A step of sizes seen before allocates nothing.
TEST(ParticleNewtonTest, ARepeatedStepAllocatesNothing) {
  const Grid grid = MakeGrid(2, 2, 2, 0.1, 0.1, 0.1);
  const System system = MakeSystem(grid, 1000, 1e6, 0.3, DeformableMaterial::kNeoHookean);
  ParticleNewtonStep step;
  step.SetSystem(system.mass, std::vector<char>(grid.points.size(), 0), system.tets,
                 {ParticlePlane{}});
  std::vector<double> x = Positions(grid), v(x.size(), 0), f(x.size(), 0);
  for (size_t k = 0; k < system.mass.size(); ++k) f[3 * k + 2] = -system.mass[k] * kG;
  ParticleNewtonParameters p;
  std::vector<double> x0 = x, v0 = v;
  step.Step(0.01, p, f.data(), 1e-3, x.data(), v.data());
  const std::vector<double> once = x;
  x = x0;
  v = v0;
  long count = 0;
  {
    const testing::AllocationCounter allocations;
    step.Step(0.01, p, f.data(), 1e-3, x.data(), v.data());
    count = allocations.count();
  }
  EXPECT_EQ(count, 0);
  EXPECT_EQ(x, once);  // and the same bits
}

}  // namespace
}  // namespace alsim
