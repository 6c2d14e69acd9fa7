// The experiments of Irrotational Contact Fields (seed 000; digest seed-000-icf.md section 11) as
// CSV on stdout, for bench/plot_icf.py; one experiment per run (the argument), each with its own
// columns (the first row names them):
//   conveyor        XI-A: scenes/icf_conveyor.xml, the belt at 0.2 sin(2 pi t) m, dt 0.01 s,
//                   k 1e7 N/m, d 500 s/m (SAP: tau_d 1e-3 s), v_s 1e-4 m/s; 3 s. Per step: the
//                   box's x and vertical velocity, its slip on the belt, the normal force over
//                   m g, its height.
//   falling_sphere  XI-B: scenes/icf_falling_sphere.xml, U0 = 2 m/s, dt 2e-3 s, the same k, d,
//                   tau_d, v_s; 0.4 s. The same columns (slip: v_x - omega_y r).
//   rod             XI-C: scenes/icf_sliding_rod.xml (mu 2.3, 30 deg, U0 10 m/s, k 1e7 N/m),
//                   without dissipation and with d 0.2 s/m (SAP: tau_d 4e-6 s), for 0.064 s at
//                   the paper's reference step 1e-7 s (rod DT EVERY: another step, every EVERY-th
//                   step printed; default 50). Per step: x, z, pitch, the contact's normal and
//                   friction forces, the lower end's slip, normal velocity and height.
//   rod_summary     XI-C's events (icf_scenarios.h, RodEvents) per solver and step, from 2e-3 s to
//                   1e-7 s: impact time and peak force, stiction time (also below 10 v_s), jam,
//                   jump; omega^2 of the normal force's oscillation from 1 to 12 ms
//                   (ForceOmegaSquared), the mean slip there.
//   convergence     Figs. 4, 7, 13: e_q(dt) of every solver on the paper's steps against Lagged at
//                   a step 10 times below the smallest.
//   clutter         XII-A: scenes/icf_clutter.xml, dt 2e-3 s, 3 s, k 1e7 N/m, d 10 s/m, SAP tau_d
//                   1e-4 s, relative tolerance 1e-5; per step and solver: Newton iterations, the
//                   condition number of H (every 5th step), contacts and penetration.
//   clutter_stiffness  XII-A, Figs. 18-19: the clutter at dt 5e-3 s for k 1e5..1e13 N/m: mean
//                   penetration over the last 1.25 s, mean iterations and condition number, and
//                   the steps that failed or hit the iteration cap.
// No argument runs conveyor and falling_sphere (one CSV).
//
// Usage: build/bin/icf_experiments EXPERIMENT > FILE.csv;
//        /usr/bin/python3 bench/plot_icf.py FILE.csv [FILE.csv ...] DIR
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/icf_scenarios.h"
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

namespace ex = alsim::icf_experiments;
using ex::Variant;

constexpr Variant kCompared[] = {Variant::kLagged, Variant::kSimilar, Variant::kSap};

// The paper's Figs. 9-12 are at its reference step, 1e-7 s (the gliding of Similar and SAP,
// mu dt |v_t|, is 2.3 um there); every 50th step is printed.
bool Rod(double dt, int every) {
  std::printf(
      "experiment,solver,dissipation,t,x,z,pitch,normal_force,friction_force,slip,"
      "normal_velocity,tip_height\n");
  std::vector<ex::RodSample> samples;
  for (const bool dissipation : {false, true}) {
    for (const Variant v : kCompared) {
      if (!ex::RunRod(ALSIM_SCENES_DIR, v, dissipation, dt, ex::kRodDuration, &samples)) {
        std::fprintf(stderr, "rod %s failed\n", ex::VariantName(v));
        return false;
      }
      for (size_t i = 0; i < samples.size(); i += every) {
        const ex::RodSample& r = samples[i];
        std::printf("rod,%s,%d,%.7g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", ex::VariantName(v),
                    dissipation ? 1 : 0, r.t, r.q[0], r.q[1], r.q[2], r.normal_force,
                    r.friction_force, r.slip, r.normal_velocity, r.tip_height);
      }
    }
  }
  return true;
}

// The window of the force oscillation (ForceOmegaSquared, samples 1 us apart or the step): from
// 1 ms (after the first swing) to 12 ms, before the jam of every run that has one.
bool RodSummary() {
  std::printf(
      "experiment,solver,dissipation,dt,impact_time,peak_force,stiction_time,slow_time,jammed,"
      "jumped,takeoff_speed,omega_squared,mean_slip\n");
  std::vector<ex::RodSample> samples;
  for (const bool dissipation : {false, true}) {
    for (const Variant v : kCompared) {
      for (const double dt : {2e-3, 1.6e-3, 1.28e-3, 1e-3, 8e-4, 6.4e-4, 3.2e-4, 1.6e-4, 8e-5, 4e-5,
                              2e-5, 1e-5, 1e-6, 1e-7}) {
        if (!ex::RunRod(ALSIM_SCENES_DIR, v, dissipation, dt, ex::kRodDuration, &samples)) {
          std::fprintf(stderr, "rod %s dt %g failed\n", ex::VariantName(v), dt);
          return false;
        }
        const ex::RodEvents e = ex::RodEventsOf(samples);
        const size_t stride = std::max<long>(1, std::lround(1e-6 / dt));
        std::printf("rod_summary,%s,%d,%g,%.7g,%.7g,%.5g,%.5g,%d,%d,%.5g,%.6g,%.6g\n",
                    ex::VariantName(v), dissipation ? 1 : 0, dt, e.impact_time, e.peak_force,
                    e.stiction_time, e.slow_time, e.jammed ? 1 : 0, e.jumped ? 1 : 0,
                    e.takeoff_speed, ex::ForceOmegaSquared(samples, 1e-3, 12e-3, stride),
                    ex::MeanSlip(samples, 1e-3, 12e-3));
      }
    }
  }
  return true;
}

bool Convergence() {
  std::printf("experiment,case,solver,dt,error\n");
  for (const ex::ConvergenceCase c :
       {ex::ConvergenceCase::kConveyor, ex::ConvergenceCase::kFallingSphere,
        ex::ConvergenceCase::kRod, ex::ConvergenceCase::kRodDissipative}) {
    const std::vector<double> steps = ex::CaseSteps(c);
    const double dt_ref = *std::min_element(steps.begin(), steps.end()) / 10;
    std::vector<std::vector<double>> reference, run;
    if (!ex::RunCase(ALSIM_SCENES_DIR, c, Variant::kLagged, dt_ref, &reference)) return false;
    for (const Variant v : kCompared) {
      for (const double dt : steps) {
        if (!ex::RunCase(ALSIM_SCENES_DIR, c, v, dt, &run)) {
          std::fprintf(stderr, "%s %s dt %g failed\n", ex::CaseName(c), ex::VariantName(v), dt);
          return false;
        }
        std::printf("convergence,%s,%s,%g,%.9g\n", ex::CaseName(c), ex::VariantName(v), dt,
                    ex::TrajectoryError(run, dt, reference, dt_ref));
      }
    }
  }
  return true;
}

bool Clutter() {
  std::printf(
      "experiment,solver,t,iterations,condition,relative_residual,contacts,penetrating,"
      "mean_penetration,max_penetration\n");
  const auto m = ex::Scene(ALSIM_SCENES_DIR, "icf_clutter.xml", 2e-3);
  if (!m) return false;
  std::vector<double> v0;
  for (const Variant v :
       {Variant::kLagged, Variant::kRegularizedLagged, Variant::kSimilar, Variant::kSap}) {
    const alsim::StepOptions options = ex::VariantOptions(v, ex::ClutterPhysics(1e7));
    alsim::Data d(*m);
    for (int step = 0; step < 1500; ++step) {
      const ex::ClutterSample s = ex::ClutterStep(*m, d, options, step % 5 == 4, &v0);
      if (!s.ok) {
        std::fprintf(stderr, "clutter %s: step %d failed\n", ex::VariantName(v), step);
        return false;
      }
      std::printf("clutter,%s,%.4f,%d,%.6g,%.3g,%d,%d,%.6g,%.6g\n", ex::VariantName(v), s.t,
                  s.iterations, s.condition, s.relative_residual, s.contacts, s.penetrating,
                  s.mean_penetration, s.max_penetration);
    }
  }
  return true;
}

// Fig. 18's penetration over the last 1.25 s of 3 s at dt 5e-3 s (the step the paper quotes with
// it), Fig. 19's mean iterations and condition number; a failed step ends the run (reported).
bool ClutterStiffness() {
  std::printf(
      "experiment,solver,stiffness,steps,failed_step,capped_steps,mean_iterations,"
      "max_iterations,mean_condition,mean_penetration,max_penetration,mean_contacts\n");
  const double dt = 5e-3;
  const auto m = ex::Scene(ALSIM_SCENES_DIR, "icf_clutter.xml", dt);
  if (!m) return false;
  std::vector<double> v0;
  for (const Variant v : kCompared) {
    for (int e = 5; e <= 13; ++e) {
      const double k = std::pow(10.0, e);
      const alsim::StepOptions options = ex::VariantOptions(v, ex::ClutterPhysics(k));
      alsim::Data d(*m);
      const int steps = 600, settled = steps - static_cast<int>(std::lround(1.25 / dt));
      int failed = -1, capped = 0, max_iterations = 0, conditions = 0;
      double iterations = 0, condition = 0, penetration = 0, deepest = 0, contacts = 0;
      for (int step = 0; step < steps; ++step) {
        const ex::ClutterSample s = ex::ClutterStep(*m, d, options, step % 10 == 9, &v0);
        if (!s.ok) {
          failed = step;
          break;
        }
        iterations += s.iterations;
        max_iterations = std::max(max_iterations, s.iterations);
        if (s.iterations >= options.solver.max_iterations) ++capped;
        if (s.condition > 0) {
          condition += s.condition;
          ++conditions;
        }
        if (step >= settled) {
          penetration += s.mean_penetration;
          deepest = std::max(deepest, s.max_penetration);
          contacts += s.contacts;
        }
      }
      const int done = failed >= 0 ? failed : steps;
      const int late = std::max(1, steps - settled);
      std::printf("clutter_stiffness,%s,%g,%d,%d,%d,%.4g,%d,%.6g,%.6g,%.6g,%.4g\n",
                  ex::VariantName(v), k, done, failed, capped, done > 0 ? iterations / done : 0.0,
                  max_iterations, conditions > 0 ? condition / conditions : 0.0,
                  failed >= 0 ? 0.0 : penetration / late, deepest, contacts / late);
      std::fflush(stdout);
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string experiment = argc > 1 ? argv[1] : "";
  if (experiment.empty() || experiment == "conveyor" || experiment == "falling_sphere") {
    std::printf("experiment,solver,t,vx,vz,slip,normal_over_mg,height\n");
    for (const char* name : {"conveyor", "falling_sphere"}) {
      if (!experiment.empty() && experiment != name) continue;
      for (const SolverType type :
           {SolverType::kIcfLagged, SolverType::kIcfSimilar, SolverType::kSap}) {
        if (!Run(name, type)) return 1;
      }
    }
    return 0;
  }
  bool ok = false;
  if (experiment == "rod") {
    ok = Rod(argc > 2 ? std::atof(argv[2]) : 1e-7, argc > 3 ? std::atoi(argv[3]) : 50);
  } else if (experiment == "rod_summary") {
    ok = RodSummary();
  } else if (experiment == "convergence") {
    ok = Convergence();
  } else if (experiment == "clutter") {
    ok = Clutter();
  } else if (experiment == "clutter_stiffness") {
    ok = ClutterStiffness();
  } else {
    std::fprintf(stderr,
                 "usage: icf_experiments [conveyor|falling_sphere|rod|rod_summary|convergence|"
                 "clutter|clutter_stiffness]\n");
    return 2;
  }
  return ok ? 0 : 1;
}
