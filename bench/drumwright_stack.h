// The Drumwright paper's stack of spheres (Sec. 6.5, Fig. 10; digest seed-003-drumwright.md 9.6)
// stepped by the dense first-order step (engine/solver/drumwright/first_order_step.h). Shared by
// tests/solver/drumwright_stack_test.cc and bench/drumwright_stack_bench.cc (Fig. 10).
//
// The paper gives E = 1e11 N/m^2, B = 1 N s/m, three rows per contacting pair (the ground
// included), 500 steps of h = 10 ms from mid-air, evenly spaced, aligned and at rest. The rest is
// unspecified; chosen here [OURS]:
// - steel spheres: radius 0.05 m, density 7800 kg/m^3 (m = 4.08 kg), g 9.8;
// - E* = 1e11 Pa for every contact (the paper's E taken as Hertz's effective modulus, as its
//   Sec. 6.4 does), r_eff = r against the ground and r / 2 between two spheres (1/r1 + 1/r2);
// - the Hertz row of bench/drumwright_hertz.h (K_n = (3/2) E* sqrt(r_eff d0) on
//   phi_n = -(2/3) d0), B_n = 1, mu = 0.5, tangents K_t = 0 and B_t = 1e6 / h, zeta = 1 / h (the
//   paper's, digest 8.4);
// - the bottom sphere's surface and each gap between neighbours 5 mm at the start.
// Each sphere has only its three translational dofs (M = m I3). In a vertical column every
// contact normal is vertical and every tangential row starts at zero slip, so the tangential
// forces are zero and no torque acts: the spins stay zero and add nothing to the rows (a
// tangential row's relative velocity would include r (w_i + w_j) x n). The contact normal is
// still taken from the centres, so a column that leans gets leaning normals.
// StackParameters::row selects the paper's Hertz row instead (bench/drumwright_hertz.h: how
// each pushes out the overlap a landing is first seen at), StackParameters::settled a start at
// rest at the static depths. Only neighbours in the column (and the bottom sphere with the
// ground) are tested for contact, and a contact is a row only while d > 0 (the paper has no
// speculative rows): a sphere driven through its neighbour is lost, and falls. Hertz's static
// depth under the weight W_k above contact k (k = 0 the ground) is
// d_k = (W_k / (E* sqrt(r_eff)))^(2/3).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "bench/drumwright_hertz.h"
#include "engine/solver/drumwright/first_order_step.h"

namespace alsim::bench {

struct StackParameters {
  int spheres = 5;
  double radius = 0.05;   // m
  double density = 7800;  // kg/m^3
  double gravity = 9.8;   // m/s^2
  double modulus = 1e11;  // E*, Pa
  double damping = 1;     // B_n, N s/m
  double friction = 0.5;  // mu
  double gap = 0.005;     // m, between the ground and the bottom sphere and between neighbours
  double h = 0.01;        // s
  double zeta_h = 1;      // zeta h (the paper's 1 / h at 1)
  HertzRow row = HertzRow::kLinearized;
  // Start at rest at Hertz's static depths instead of from mid-air: a stack that stands by
  // construction, every contact a row from the first step (Fig. 10's cost at N contacts).
  bool settled = false;

  double Mass() const {
    return density * 4.0 / 3.0 * 3.14159265358979323846 * radius * radius * radius;
  }
  // Effective radius of contact k: the ground (k = 0) or spheres k-1 and k.
  double EffectiveRadius(int k) const { return k == 0 ? radius : radius / 2; }
  // Hertz's static depth of contact k under the weight of the spheres k..N-1 above it.
  double StaticDepth(int k) const {
    return HertzDepth((spheres - k) * Mass() * gravity, modulus, EffectiveRadius(k));
  }
};

struct StackRun {
  bool ok = true;
  int failed_step = -1;
  int steps = 0;
  std::vector<double> depth;   // of contact k at the end (k = 0 the ground), m
  double max_drift = 0;        // m, the largest horizontal distance of a centre from its start
  double max_depth_error = 0;  // max_k |depth_k / StaticDepth(k) - 1| at the end
  int max_iterations = 0;      // the most interior-point iterations of a step's program
  double max_speed = 0;        // m/s, the largest sphere speed at the end
  double contact_steps = 0;    // the contacts summed over the steps (their mean: / steps)
  double max_height = 0;       // m, the highest a centre rose above its start (a launched top)
};

// An orthonormal pair (t1, t2) perpendicular to the unit vector n.
inline void Tangents(const Eigen::Vector3d& n, Eigen::Vector3d* t1, Eigen::Vector3d* t2) {
  const Eigen::Vector3d axis =
      std::abs(n.x()) < 0.9 ? Eigen::Vector3d::UnitX() : Eigen::Vector3d::UnitY();
  *t1 = (axis - axis.dot(n) * n).normalized();
  *t2 = n.cross(*t1);
}

// Steps the stack `steps` times from mid-air, or from its static depths (`settled`).
inline StackRun DropStack(const StackParameters& s, int steps) {
  const int n = s.spheres, nv = 3 * n;
  const double mass = s.Mass();
  std::vector<Eigen::Vector3d> position(n), start(n);
  for (int i = 0; i < n; ++i) {
    position[i] = Eigen::Vector3d(0, 0, s.radius + s.gap + i * (2 * s.radius + s.gap));
    if (s.settled) {
      position[i].z() = i == 0 ? s.radius - s.StaticDepth(0)
                               : position[i - 1].z() + 2 * s.radius - s.StaticDepth(i);
    }
    start[i] = position[i];
  }
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(nv);
  Eigen::VectorXd force = Eigen::VectorXd::Zero(nv);
  for (int i = 0; i < n; ++i) force[3 * i + 2] = -mass * s.gravity;
  StackRun run;
  std::vector<int> lower, upper;  // the contact's spheres (lower -1: the ground)
  std::vector<Eigen::Vector3d> normal;
  std::vector<double> depth;
  for (int step = 0; step < steps; ++step) {
    // Contacts: the ground and each pair of neighbours, while they overlap.
    lower.clear();
    upper.clear();
    normal.clear();
    depth.clear();
    for (int k = 0; k < n; ++k) {
      Eigen::Vector3d nk = Eigen::Vector3d::UnitZ();
      double d = s.radius - position[0].z();
      if (k > 0) {
        const Eigen::Vector3d between = position[k] - position[k - 1];
        nk = between.normalized();
        d = 2 * s.radius - between.norm();
      }
      if (!(d > 0)) continue;
      lower.push_back(k - 1);
      upper.push_back(k);
      normal.push_back(nk);
      depth.push_back(d);
    }
    const int contacts = static_cast<int>(depth.size());
    run.contact_steps += contacts;
    FirstOrderProblem p;
    p.mass = mass * Eigen::MatrixXd::Identity(nv, nv);
    p.velocity = velocity;
    p.force = force;
    p.h = s.h;
    p.zeta = s.zeta_h / s.h;
    p.jacobian = Eigen::MatrixXd::Zero(3 * contacts, nv);
    for (int c = 0; c < contacts; ++c) {
      const int k = upper[c];
      p.rows.push_back(
          HertzNormalRow(depth[c], s.modulus, s.EffectiveRadius(k), s.damping, s.friction, s.row));
      p.rows.push_back(FrictionRow(s.h));
      p.rows.push_back(FrictionRow(s.h));
      Eigen::Vector3d t1, t2;
      Tangents(normal[c], &t1, &t2);
      const Eigen::Vector3d directions[3] = {normal[c], t1, t2};
      for (int r = 0; r < 3; ++r) {
        // The upper sphere's velocity relative to the lower's (or the ground's) along the row.
        p.jacobian.block<1, 3>(3 * c + r, 3 * k) = directions[r].transpose();
        if (lower[c] >= 0)
          p.jacobian.block<1, 3>(3 * c + r, 3 * lower[c]) = -directions[r].transpose();
      }
    }
    const FirstOrderResult r = SolveFirstOrderStep(p);
    if (!r.ok) {
      run.ok = false;
      run.failed_step = step;
      return run;
    }
    if (r.solved_program) run.max_iterations = std::max(run.max_iterations, r.program.iterations);
    velocity = r.velocity;
    for (int i = 0; i < n; ++i) {
      position[i] += s.h * velocity.segment<3>(3 * i);
      run.max_height = std::max(run.max_height, position[i].z() - start[i].z());
    }
    run.steps = step + 1;
  }
  run.depth.assign(n, 0);
  for (int k = 0; k < n; ++k) {
    run.depth[k] =
        k == 0 ? s.radius - position[0].z() : 2 * s.radius - (position[k] - position[k - 1]).norm();
    run.max_depth_error =
        std::max(run.max_depth_error, std::abs(run.depth[k] / s.StaticDepth(k) - 1));
  }
  for (int i = 0; i < n; ++i) {
    run.max_drift = std::max(run.max_drift, (position[i] - start[i]).head<2>().norm());
    run.max_speed = std::max(run.max_speed, velocity.segment<3>(3 * i).norm());
  }
  return run;
}

}  // namespace alsim::bench
