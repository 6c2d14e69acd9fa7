// The non-smooth Newton step on particles (engine/solver/nsn/particle_newton.h) against closed
// forms: damped Newton from u = 0 reaches (1 - (1 - t)^N) u~ with no rows (digest 14, the
// README's claim); a bar of Kuhn tets hanging from its top stretches by rho g L^2 / (2 Y), and
// the same column standing on a frictionless floor shortens by as much, its contact forces
// summing to its weight, for the linear and corotated materials at small strain. (Neo-Hookean
// rows in principal stretches do not converge here yet: particle_newton.h.) Friction: a particle
// on an incline holds iff tan theta <= mu, else slides at g (sin theta - mu cos theta), in 8
// directions, inside the cone; mu = 0 is bit-identical to a frictionless plane.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Geometry>

#include "engine/solver/nsn/particle_newton.h"
#include "tests/support/allocation_counter.h"
#include "tests/support/kuhn_grid.h"

namespace alsim {
namespace {

constexpr double kG = 9.81;

// Grids of Kuhn tets (tests/support/kuhn_grid.h).
using Grid = testing::KuhnGrid;
using testing::MakeKuhnGrid;

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
BarResult SettleBar(DeformableMaterial material, bool hanging, bool geometric_stiffness = false) {
  const int nz = 8;
  const double a = 0.1, length = 1, rho = 1000, young = 1e8;
  const Grid grid = MakeKuhnGrid(1, 1, nz, a, a, length / nz);
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
  ParticleNewtonParameters p = Converged();
  p.geometric_stiffness = geometric_stiffness;
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
  for (int k = 0; k < step.num_contacts(); ++k)
    out.contact_force += lambda[step.num_element_rows() + k];
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

struct InclineResult {
  double acceleration = 0;  // mean downhill acceleration over the last half second, m/s^2
  double cross_speed = 0;   // largest speed across the slope (in the plane), m/s
  double normal_speed = 0;  // largest speed along the plane normal, m/s
  double speed = 0;         // largest particle speed at the end, m/s
  double cone_excess = 0;   // largest |lambda_f| - mu lambda_n (1 + 1e-6) over contacts, steps, N
  int friction_rows = 0;    // at the last step
  int unconverged_steps = 0;
};

// On the plane through the origin tilted by theta from horizontal, its downhill direction at angle
// phi about z, with friction coefficient mu: a particle of 1 kg (block = false), or a stiff 2 x 2 x
// 1-cell block of linear tets (0.1 x 0.1 x 0.05 m, block = true), at rest on it for one second
// under gravity at h = 0.01 s.
InclineResult SlideOnIncline(double theta, double phi, double mu, bool block,
                             const ParticleNewtonParameters& p) {
  Grid grid;
  grid.points = {Vec3::Zero()};
  System system{{1.0}, {}};
  if (block) {
    grid = MakeKuhnGrid(2, 2, 1, 0.05, 0.05, 0.05);
    system = MakeSystem(grid, 1000, 1e8, 0.3, DeformableMaterial::kLinear);
  }
  const Vec3 normal(std::sin(theta) * std::cos(phi), std::sin(theta) * std::sin(phi),
                    std::cos(theta));
  const Eigen::AngleAxisd rotation(theta, Vec3(-std::sin(phi), std::cos(phi), 0));
  const Vec3 downhill = rotation * Vec3(std::cos(phi), std::sin(phi), 0);  // steepest descent
  const Vec3 across = normal.cross(downhill);
  ParticlePlane plane;
  plane.normal = normal;
  plane.friction = mu;
  ParticleNewtonStep step;
  step.SetSystem(system.mass, std::vector<char>(grid.points.size(), 0), system.tets, {plane});
  std::vector<double> x, v(3 * grid.points.size(), 0), f(v.size(), 0);
  for (const Vec3& point : grid.points) {
    const Vec3 q = rotation * point;
    x.insert(x.end(), {q.x(), q.y(), q.z()});
  }
  for (size_t k = 0; k < system.mass.size(); ++k) f[3 * k + 2] = -system.mass[k] * kG;
  const int steps = 100;
  const double h = 0.01;
  InclineResult out;
  const auto mean_downhill = [&] {
    double sum = 0;
    for (size_t k = 0; k < grid.points.size(); ++k) {
      sum += downhill.dot(Vec3(v[3 * k], v[3 * k + 1], v[3 * k + 2]));
    }
    return sum / grid.points.size();
  };
  double half_speed = 0;
  for (int n = 1; n <= steps; ++n) {
    const ParticleNewtonStatistics stats = step.Step(h, p, f.data(), 1e-3, x.data(), v.data());
    if (!stats.converged) ++out.unconverged_steps;
    const auto& lambda = step.lambda();
    for (int k = 0; k < step.num_contacts(); ++k) {
      const int row = step.contact_friction_rows()[k];
      const double limit = mu * lambda[step.num_element_rows() + k] * (1 + 1e-6);
      out.cone_excess = std::max(out.cone_excess, std::hypot(lambda[row], lambda[row + 1]) - limit);
    }
    if (n == steps / 2) half_speed = mean_downhill();
  }
  out.acceleration = (mean_downhill() - half_speed) / (h * (steps - steps / 2));
  for (size_t k = 0; k < grid.points.size(); ++k) {
    const Vec3 vk(v[3 * k], v[3 * k + 1], v[3 * k + 2]);
    out.cross_speed = std::max(out.cross_speed, std::abs(across.dot(vk)));
    out.normal_speed = std::max(out.normal_speed, std::abs(normal.dot(vk)));
    out.speed = std::max(out.speed, vk.norm());
  }
  out.friction_rows =
      static_cast<int>(step.lambda().size()) - step.num_element_rows() - step.num_contacts();
  return out;
}

// Digest 14 test 8 on a particle: it holds iff tan theta <= mu, and otherwise slides down at
// g (sin theta - mu cos theta), the same in 8 in-plane directions (the tangent basis is fixed per
// plane, so the slope's angle to it turns: no faceting of the cone); the friction force stays in
// the cone at every converged step.
TEST(ParticleNewtonTest, AParticleOnAnInclineHoldsIffTanThetaIsAtMostMuElseSlidesAtTheCoulombRate) {
  const double mu = 0.5;
  for (const NcpFunction ncp : {NcpFunction::kFischerBurmeister, NcpFunction::kMinimumMap}) {
    ParticleNewtonParameters p = Converged();
    p.ncp = ncp;
    for (const double tangent : {0.3, 0.45, 0.5, 0.55, 0.8}) {
      const double theta = std::atan(tangent);
      const double expected = std::max(0.0, kG * (std::sin(theta) - mu * std::cos(theta)));
      for (int direction = 0; direction < 8; ++direction) {
        const InclineResult r = SlideOnIncline(theta, direction * M_PI / 4, mu, false, p);
        const std::string where = std::to_string(static_cast<int>(ncp)) + " tan " +
                                  std::to_string(tangent) + " " + std::to_string(direction);
        EXPECT_EQ(r.unconverged_steps, 0) << where;
        EXPECT_EQ(r.friction_rows, 2) << where;
        if (tangent <= mu) {
          EXPECT_LT(r.speed, 1e-6) << where;
        } else {
          EXPECT_NEAR(r.acceleration, expected, 0.01 * expected) << where;
          EXPECT_LT(r.cross_speed, 1e-6 * r.speed) << where;
        }
        EXPECT_LT(r.normal_speed, 1e-6) << where;
        EXPECT_LE(r.cone_excess, 0) << where;
      }
    }
  }
}

// A plane with mu = 0 adds no friction rows, and gives the same bits as one whose friction was
// never set (and as the code before friction: 30 steps of three materials on two planes, checked
// when friction was added).
TEST(ParticleNewtonTest, ZeroFrictionIsBitIdenticalToAFrictionlessPlane) {
  const Grid grid = MakeKuhnGrid(2, 2, 2, 0.1, 0.1, 0.1);
  for (const DeformableMaterial material :
       {DeformableMaterial::kLinear, DeformableMaterial::kCorotated,
        DeformableMaterial::kNeoHookean}) {
    const System system = MakeSystem(grid, 1000, 1e6, 0.3, material);
    std::vector<std::vector<double>> results;
    for (const bool set : {false, true}) {
      ParticlePlane floor, tilted;
      tilted.normal = Vec3(0.3, 0.1, 1).normalized();
      if (set) floor.friction = tilted.friction = 0.0;
      ParticleNewtonStep step;
      step.SetSystem(system.mass, std::vector<char>(grid.points.size(), 0), system.tets,
                     {floor, tilted});
      std::vector<double> x = Positions(grid), v(x.size(), 0), f(x.size(), 0);
      for (double& xi : x) xi += 0.001;
      for (size_t k = 0; k < system.mass.size(); ++k) f[3 * k + 2] = -system.mass[k] * kG;
      for (int n = 0; n < 30; ++n) step.Step(0.01, {}, f.data(), 1e-2, x.data(), v.data());
      EXPECT_GT(step.num_contacts(), 0);
      EXPECT_EQ(static_cast<int>(step.lambda().size()),
                step.num_element_rows() + step.num_contacts());
      for (const int row : step.contact_friction_rows()) EXPECT_EQ(row, -1);
      x.insert(x.end(), v.begin(), v.end());
      x.insert(x.end(), step.lambda().begin(), step.lambda().end());
      results.push_back(x);
    }
    EXPECT_EQ(results[0], results[1]) << static_cast<int>(material);
  }
}

// The diagonal geometric stiffness (Sec 8.3) changes the Newton matrix, not the solution: the bar
// and the column still converge every step to the same closed form. (It does not make the
// Neo-Hookean rows converge: particle_newton.h.)
TEST(ParticleNewtonTest, TheGeometricStiffnessLeavesTheBarsSolutionsAlone) {
  const double expected = 1000 * kG * 1 * 1 / (2 * 1e8);
  for (const bool hanging : {true, false}) {
    for (const DeformableMaterial material :
         {DeformableMaterial::kLinear, DeformableMaterial::kCorotated}) {
      const BarResult bar = SettleBar(material, hanging, true);
      EXPECT_NEAR(-bar.displacement, expected, 0.01 * expected) << static_cast<int>(material);
      EXPECT_LT(bar.speed, 1e-6);
    }
  }
}

// A step of sizes seen before allocates nothing.
TEST(ParticleNewtonTest, ARepeatedStepAllocatesNothing) {
  const Grid grid = MakeKuhnGrid(2, 2, 2, 0.1, 0.1, 0.1);
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
