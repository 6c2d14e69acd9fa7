// The 2-D experiments of Irrotational Contact Fields (seed 000, Sec. XI; digest seed-000-icf.md
// section 11) as time series, one CSV row per step and solver, for bench/plot_icf.py:
//   conveyor        XI-A: scenes/icf_conveyor.xml, the belt at 0.2 sin(2 pi t) m, dt 0.01 s,
//                   k 1e7 N/m, d 500 s/m (SAP: tau_d 1e-3 s), v_s 1e-4 m/s; 3 s.
//   falling_sphere  XI-B: scenes/icf_falling_sphere.xml, U0 = 2 m/s, dt 2e-3 s, the same k, d,
//                   tau_d, v_s; 0.4 s.
// Columns: experiment, solver, t (s), x velocity of the body (m/s), its vertical velocity (m/s),
// slip speed at the contact (m/s: box against belt; sphere: v_x - omega_y r), normal force over
// m g (sum over the body's contacts), height of the body's center (m).
//
// Usage: build/bin/icf_experiments > icf.csv; /usr/bin/python3 bench/plot_icf.py icf.csv DIR
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace {

using alsim::SolverType;

constexpr double kGravity = 9.81;

alsim::StepOptions Options(SolverType type) {
  alsim::StepOptions options;
  options.solver.type = type;
  options.solver.icf.stiffness = 1e7;
  options.solver.icf.dissipation = 500;
  options.solver.icf.stiction_speed = 1e-4;
  options.solver.icf.relative_tolerance = 1e-12;
  options.solver.sap.stiffness = 1e7;
  options.solver.sap.dissipation_time = 1e-3;
  options.solver.sap.relative_tolerance = 1e-12;
  return options;
}

// The normal force on the body over m g: the contacts' normal impulses over dt.
double NormalForce(const alsim::Model& m, const alsim::Data& d, double mass) {
  double impulse = 0;
  for (const alsim::Constraint& c : d.constraints.constraints) {
    if (c.type == alsim::ConstraintType::kContact) impulse += d.constraints.lambda[c.row_adr];
  }
  return impulse / m.timestep / (mass * kGravity);
}

bool Run(const std::string& experiment, SolverType type) {
  const bool conveyor = experiment == "conveyor";
  const std::string path = std::string(ALSIM_SCENES_DIR) + "/icf_" + experiment + ".xml";
  const alsim::ModelImport imported = alsim::ImportModelFromFile(path);
  if (!imported) {
    std::fprintf(stderr, "%s\n", imported.error.c_str());
    return false;
  }
  const alsim::Model& m = *imported.model;
  alsim::Data d(m);
  const alsim::StepOptions options = Options(type);
  const int free = conveyor ? 1 : 0;  // the free body's first dof (after the belt's)
  const double h = m.timestep, omega = 2 * M_PI, mass = conveyor ? 1.0 : 0.5;
  if (!conveyor) d.qvel[0] = 2.0;
  const int steps = static_cast<int>(std::lround((conveyor ? 3.0 : 0.4) / h));
  for (int step = 0; step < steps; ++step) {
    if (conveyor) {  // the belt's state at the step's end, its position one step back
      const double t = (step + 1) * h;
      d.qvel[0] = 0.2 * omega * std::cos(omega * t);
      d.qpos[0] = 0.2 * std::sin(omega * t) - h * d.qvel[0];
    }
    if (alsim::Step(m, d, options) != alsim::StepStatus::kOk) {
      std::fprintf(stderr, "%s %s: step %d failed\n", experiment.c_str(), SolverName(type), step);
      return false;
    }
    const double vx = d.qvel[free], vz = d.qvel[free + 2];
    const double slip = conveyor ? vx - d.qvel[0] : vx - d.qvel[free + 4] * 0.025;
    std::printf("%s,%s,%.6g,%.9g,%.9g,%.9g,%.9g,%.9g\n", experiment.c_str(), SolverName(type),
                (step + 1) * h, vx, vz, slip, NormalForce(m, d, mass), d.qpos[conveyor ? 3 : 2]);
  }
  return true;
}

}  // namespace

int main() {
  std::printf("experiment,solver,t,vx,vz,slip,normal_over_mg,height\n");
  for (const char* experiment : {"conveyor", "falling_sphere"}) {
    for (const SolverType type :
         {SolverType::kIcfLagged, SolverType::kIcfSimilar, SolverType::kSap}) {
      if (!Run(experiment, type)) return 1;
    }
  }
  return 0;
}
