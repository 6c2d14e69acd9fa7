// The SubADMM/CANAL paper's pouring at fixed iterations (Sec. VII-C, Fig. 11; digest
// seed-004-subadmm-canal.md 8.3) on scenes/pouring_N.xml (scenes/generate_pouring.py): a bottle
// of N spheres tilted about its lip by a position servo pours them into a static jar. For each
// scene and each solver, the whole task is stepped with SolverOptions {max_iterations fixed,
// tolerance 0} (every island runs exactly that many iterations: the paper's 5 CANAL AL loops,
// 100 SubADMM iterations, 100 PGS sweeps), one thread, and it reports the means over the task's
// steps of the Sec. VII residual (SolverStatistics::contact_residual, over the steps with
// contacts) and of the solve time (SolverStatistics::solve_seconds). The residual's extra solve
// would count in solve_seconds, so the times come from a second, identical run with
// compute_residual off (the stepping is deterministic: both runs take the same steps), and with
// --repeats R from R such runs, each step's least time (a loaded machine's preemptions inflate
// single steps; the least of R is the solve's cost).
//
// The tilt (ctrl of the scene's first actuator, rad), ours [OURS] (the paper's robot "reaches,
// grasps, and pours"):
//   theta(t) = 0                                          for t < kHold,
//            = kTilt (1 - cos(pi (t - kHold) / kRamp)) / 2  while it ramps,
//            = kTilt                                      after kHold + kRamp, to --seconds.
// The spheres first settle in the upright bottle; the bottle passes 90 deg at 1 s and pours.
//
// Output: a CSV row per (scene, solver): scene, particles, dof, solver, iterations, steps,
// mean_contacts, max_contacts, mean_residual, mean_solve_ms, max_penetration_mm, landed (spheres
// inside the jar at the end: within its inner radius of its axis and below its rim), and the
// same as a Markdown table on stdout. bench/plot_pouring.py fits and plots it.
//
// Usage: pouring_bench [--scenes a.xml,b.xml,...] [--solvers name:N,...] [--seconds T]
//          [--repeats R] [--csv FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "bench/solver_list.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kHold = 0.25;  // s upright before the tilt
constexpr double kRamp = 1.5;   // s from upright to kTilt
constexpr double kTilt = 2.4;   // rad, 137.5 deg: the mouth 47.5 deg below horizontal

struct Config {
  std::string scenes;
  std::string solvers = "canal:5,subadmm:100,pgs:100";
  std::string csv = "pouring.csv";
  double seconds = 2.5;
  int repeats = 1;
};

double Tilt(double t) {
  if (t < kHold) return 0;
  if (t > kHold + kRamp) return kTilt;
  return kTilt * (1 - std::cos(kPi * (t - kHold) / kRamp)) / 2;
}

struct Result {
  int steps = 0;
  double sum_contacts = 0;
  int max_contacts = 0;
  double sum_residual = 0;
  int residual_steps = 0;
  double sum_seconds = 0;
  std::vector<double> step_seconds;  // per step
  double max_penetration = 0;
  int landed = 0;
  bool ok = true;
};

// One run of the task; with `residual` the Sec. VII residual per step, else only times.
Result RunTask(const Model& m, SolverType type, int iterations, double seconds, bool residual,
               int jar_geom) {
  Result result;
  Data d(m);
  StepOptions options;
  options.solver.type = type;
  options.solver.max_iterations = iterations;
  options.solver.tolerance = 0;
  options.solver.compute_residual = residual;
  const int steps = static_cast<int>(std::lround(seconds / m.timestep));
  for (int k = 0; k < steps; ++k) {
    if (m.nu > 0) d.ctrl[0] = Tilt(d.time);
    if (Step(m, d, options) != StepStatus::kOk) {
      result.ok = false;
      break;
    }
    ++result.steps;
    const SolverStatistics& stats = d.solver_statistics;
    result.sum_contacts += stats.contacts;
    result.max_contacts = std::max(result.max_contacts, stats.contacts);
    if (stats.contacts > 0) {
      result.sum_residual += stats.contact_residual;
      ++result.residual_steps;
    }
    result.sum_seconds += stats.solve_seconds;
    result.step_seconds.push_back(stats.solve_seconds);
    for (const Contact& contact : d.contact) {
      result.max_penetration = std::max(result.max_penetration, -contact.dist);
    }
  }
  // Spheres in the jar: the SDF's profile (a_r a_z b_r b_z padding) gives its inner radius
  // b_r - padding and its rim height b_z above the geom's origin (a static, upright world geom).
  if (jar_geom >= 0 && m.geom_sdf[jar_geom] >= 0) {
    const double* p = &m.sdf_param[m.sdf_param_adr[m.geom_sdf[jar_geom]]];
    const Vec3 origin = m.geom_pos[jar_geom];
    for (int b = 1; b < m.nbody; ++b) {
      if (m.body_name[b].rfind("particle_", 0) != 0) continue;
      const Vec3 offset = d.xpos[b] - origin;
      if (std::hypot(offset.x(), offset.y()) < p[2] - p[4] && offset.z() < p[3]) ++result.landed;
    }
  }
  return result;
}

int Run(const Config& config) {
  std::vector<std::string> scenes = bench::SplitCommas(config.scenes);
  if (scenes.empty()) {
    for (const int n : {9, 18, 27, 36, 45}) {
      scenes.push_back(std::string(ALSIM_SCENES_DIR) + "/pouring_" + std::to_string(n) + ".xml");
    }
  }
  std::vector<bench::SolverRun> runs;
  std::string bad;
  if (!bench::ParseSolverRuns(config.solvers, 100, &runs, &bad)) {
    std::fprintf(stderr, "pouring_bench: bad solver '%s' (name[:iterations])\n", bad.c_str());
    return 2;
  }
  std::vector<std::string> names;
  std::vector<SolverType> types;
  std::vector<int> caps;
  for (const bench::SolverRun& run : runs) {
    names.push_back(run.name);
    types.push_back(run.type);
    caps.push_back(run.iterations);
  }
  std::FILE* csv = std::fopen(config.csv.c_str(), "w");
  if (csv == nullptr) {
    std::fprintf(stderr, "pouring_bench: cannot write %s\n", config.csv.c_str());
    return 1;
  }
  std::fprintf(csv,
               "scene,particles,dof,solver,iterations,steps,mean_contacts,max_contacts,"
               "mean_residual,mean_solve_ms,max_penetration_mm,landed\n");
  std::printf(
      "| scene | particles | DOF | solver | iterations | mean contacts (max) | mean residual"
      " | mean solve ms | max penetration mm | landed |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n");
  int rc = 0;
  for (const std::string& path : scenes) {
    const ModelImport imported = ImportModelFromFile(path);
    if (!imported) {
      std::fprintf(stderr, "pouring_bench: %s\n", imported.error.c_str());
      rc = 1;
      continue;
    }
    const Model& m = *imported.model;
    int jar = -1, particles = 0;
    for (int g = 0; g < m.ngeom; ++g) {
      if (m.geom_name[g] == "jar") jar = g;
    }
    for (int b = 1; b < m.nbody; ++b) particles += m.body_name[b].rfind("particle_", 0) == 0;
    const std::string scene = path.substr(path.find_last_of('/') + 1);
    for (size_t s = 0; s < types.size(); ++s) {
      Result measured, timed;
      RunWithThreads(1, [&] {
        measured = RunTask(m, types[s], caps[s], config.seconds, true, jar);
        timed = RunTask(m, types[s], caps[s], config.seconds, false, jar);
        for (int r = 1; r < config.repeats; ++r) {
          const Result again = RunTask(m, types[s], caps[s], config.seconds, false, jar);
          const size_t common = std::min(again.step_seconds.size(), timed.step_seconds.size());
          for (size_t k = 0; k < common; ++k) {
            timed.step_seconds[k] = std::min(timed.step_seconds[k], again.step_seconds[k]);
          }
        }
        timed.sum_seconds = 0;
        for (const double t : timed.step_seconds) timed.sum_seconds += t;
      });
      const double n = std::max(1, timed.steps);
      const double mean_residual = measured.sum_residual / std::max(1, measured.residual_steps);
      const char* status = measured.ok && timed.ok ? "" : " (failed)";
      std::fprintf(csv, "%s,%d,%d,%s,%d,%d,%.3f,%d,%.6e,%.6e,%.6f,%d\n", scene.c_str(), particles,
                   m.nv, names[s].c_str(), caps[s], timed.steps, timed.sum_contacts / n,
                   timed.max_contacts, mean_residual, 1e3 * timed.sum_seconds / n,
                   1e3 * measured.max_penetration, measured.landed);
      std::printf("| %s | %d | %d | %s | %d | %.1f (%d) | %.2e | %.3f | %.3f | %d%s |\n",
                  scene.c_str(), particles, m.nv, names[s].c_str(), caps[s], timed.sum_contacts / n,
                  timed.max_contacts, mean_residual, 1e3 * timed.sum_seconds / n,
                  1e3 * measured.max_penetration, measured.landed, status);
      std::fflush(stdout);
      if (!measured.ok || !timed.ok) rc = 1;
    }
  }
  if (std::fclose(csv) != 0) rc = 1;
  return rc;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: pouring_bench [--scenes a.xml,b.xml,...] [--solvers name:N,...] [--seconds T]\n"
      "         [--repeats R] [--csv FILE]\n";
  alsim::Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--scenes" && has_value) {
      config.scenes = argv[++i];
    } else if (arg == "--solvers" && has_value) {
      config.solvers = argv[++i];
    } else if (arg == "--seconds" && has_value) {
      config.seconds = std::atof(argv[++i]);
    } else if (arg == "--repeats" && has_value) {
      config.repeats = std::atoi(argv[++i]);
    } else if (arg == "--csv" && has_value) {
      config.csv = argv[++i];
    } else {
      std::fprintf(stderr, "pouring_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (!(config.seconds > 0) || config.repeats < 1) {
    std::fprintf(stderr, "pouring_bench: --seconds must be positive, --repeats at least 1\n%s",
                 usage);
    return 2;
  }
  return alsim::Run(config);
}
