// What the nsn deformable tests share (engine/solver/nsn/nsn_solver.h): the paper's fixed-count
// options, and what they read from a step: the solver, the summed normal force of the
// deformables' contacts with a geom, the deformables' mass.
#pragma once

#include <cstddef>

#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/sim/step.h"
#include "engine/solver/nsn/nsn_solver.h"

namespace alsim::testing {

// nsn at a Table 2 budget: N Newton iterations of M linear ones, no tolerances.
inline StepOptions NsnFixedCounts(int newton, int linear) {
  StepOptions options;
  options.solver.type = SolverType::kNsn;
  options.solver.nsn.newton_iterations = newton;
  options.solver.nsn.newton_tolerance = 0;
  options.solver.nsn.linear_iterations = linear;
  options.solver.nsn.linear_tolerance = 0;
  return options;
}

inline const NsnSolver& Solver(const Data& d) { return static_cast<const NsnSolver&>(*d.solver); }

// The summed normal force of the vertex and triangle contacts with geom g (-1: every geom), N.
inline double ContactForce(const Model& m, const Data& d, int g) {
  double sum = 0;
  for (std::size_t k = 0; k < d.vertex_contact.size(); ++k) {
    if (g < 0 || d.vertex_contact[k].geom == g) sum += Solver(d).vertex_contact_impulse()[k];
  }
  for (std::size_t k = 0; k < d.triangle_contact.size(); ++k) {
    if (g < 0 || d.triangle_contact[k].geom == g) sum += Solver(d).triangle_contact_impulse()[k];
  }
  return sum / m.timestep;
}

// The deformables' total lumped mass, kg.
inline double DeformableMass(const Model& m) {
  double mass = 0;
  for (int v = 0; v < m.nvert; ++v) mass += m.vert_mass[v];
  return mass;
}

}  // namespace alsim::testing
