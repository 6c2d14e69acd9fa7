// Single-step cases for the solver benches (table2_bench, single_step_bench): a recorded resting
// state, and random external wrenches on its free bodies, as the SubADMM/CANAL paper's single-step
// tests do (Sec. VII-A, VII-B; digest seed-004-subadmm-canal.md 8.1, 8.2, 8.4).
//
// The distribution of the wrenches is ours [OURS]: the paper says "random external wrenches" and
// gives no distribution. Per free body b (a body with a free joint), independently per axis of the
// world frame, from a std::normal_distribution fed by the caller's std::mt19937_64:
//   force   f_k ~ N(0, (s_f m_b g)^2),      applied at the body's center of mass,
//   torque  t_k ~ N(0, (s_t m_b g r_b)^2),  r_b = sqrt((I1 + I2 + I3) / (2 m_b)),
// with g = 9.81 m/s^2 (standard gravity, whatever the scene's) and r_b the body's radius of
// gyration about its center of mass, sqrt((a^2 + b^2 + c^2) / 3) for a box of half sizes a, b,
// c: the torque of a force of the same size at the body's typical lever arm. With s_f = 0.5 and
// friction 0.5, a horizontal force component exceeds the body's own weight times friction,
// mu m g = sigma, in P(|N(0, 1)| > 1) = 32% of draws, and an upward one exceeds m g in
// P(N(0, 1) > 2) = 2.3%: a case mixes sticking, sliding and lifting contacts. The draws go into
// Data::xfrc_applied (force, torque; MuJoCo's order), body by body in increasing body id, force x,
// y, z then torque x, y, z; other bodies' entries are set to zero.
#pragma once

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver_options.h"

namespace alsim::bench {

inline constexpr double kStandardGravity = 9.81;  // m/s^2

// Bodies with a free joint, in increasing id.
inline std::vector<int> FreeBodies(const Model& m) {
  std::vector<int> bodies;
  for (int b = 1; b < m.nbody; ++b) {
    for (int j = m.body_jnt_adr[b]; j >= 0 && j < m.body_jnt_adr[b] + m.body_jnt_num[b]; ++j) {
      if (m.jnt_type[j] == JointType::kFree) {
        bodies.push_back(b);
        break;
      }
    }
  }
  return bodies;
}

// Draws one case's wrenches (the file comment's distribution) into xfrc (nbody entries).
inline void DrawWrenches(const Model& m, const std::vector<int>& free_bodies, double force_scale,
                         double torque_scale, std::mt19937_64& rng, std::vector<Vec6>& xfrc) {
  std::normal_distribution<double> normal(0, 1);
  xfrc.assign(m.nbody, Vec6::Zero());
  for (const int b : free_bodies) {
    const double mass = m.body_mass[b];
    const Vec3& inertia = m.body_inertia[b];
    const double radius = std::sqrt((inertia.x() + inertia.y() + inertia.z()) / (2 * mass));
    const double force_sigma = force_scale * mass * kStandardGravity;
    const double torque_sigma = torque_scale * mass * kStandardGravity * radius;
    for (int k = 0; k < 3; ++k) xfrc[b][k] = force_sigma * normal(rng);
    for (int k = 3; k < 6; ++k) xfrc[b][k] = torque_sigma * normal(rng);
  }
}

// Steps d from its current state `steps` times with one solver at a tight tolerance (the recorded
// state's warm start then holds that solver's converged impulses). False if a step fails.
inline bool Settle(const Model& m, Data& d, SolverType solver, int max_iterations, double tolerance,
                   int steps) {
  StepOptions options;
  options.solver.type = solver;
  options.solver.max_iterations = max_iterations;
  options.solver.tolerance = tolerance;
  for (int k = 0; k < steps; ++k) {
    if (Step(m, d, options) != StepStatus::kOk) {
      std::fprintf(stderr, "the scene failed to step while settling (step %d)\n", k);
      return false;
    }
  }
  return true;
}

}  // namespace alsim::bench
