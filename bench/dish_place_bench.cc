// The SubADMM/CANAL paper's dish placing under a per-step solver budget (Sec. VII-B: "budget 1 ms:
// SubADMM and CANAL succeed, PGS fails with jittery motion"; digest seed-004-subadmm-canal.md
// 8.2), on scenes/dish_place.xml: a simple gripper in place of the paper's arm lowers the 5 kg pot
// onto the plate of a bowl-bowl-plate pile, opens and rises (bench/dish_place_script.h's script),
// for each solver in turn from the scene's initial state, one thread unless --threads.
//
// Each step runs with SolverOptions {time_budget_us = --budget-us (the solve's clock, started after
// the collision), max_iterations = --iterations, tolerance = --tolerance, compute_residual}. A
// solver given as name:N in --solvers runs at most N iterations instead of --iterations: with
// --budget-us 0 a fixed iteration count makes the run repeatable; a budget makes the result
// depend on the machine and its load. The budget is one deadline for the whole solve: while the
// pot is held, the gripper with the pot and the pile are two islands, which one thread solves in
// turn, so the later one gets what the earlier left (each island runs at least one iteration;
// the CSV's mean_iterations against max_iterations shows the split). --threads 2 solves them side
// by side.
//
// Per solver it prints a Markdown row: success (the pot within 2 mm of its analytic rest position
// and within 1 degree of upright, each light dish within 1 mm of its rest position, at the end),
// the pot's final horizontal and vertical offsets and tilt, the light dishes' largest final
// offset, the deepest penetration over the run (max of -dist over every contact of every step),
// the mean Sec. VII residual (SolverStatistics::contact_residual, whose extra solve is inside
// solve_seconds), the light dishes' mean speed over the last 0.5 s (m/s of their frames' origins:
// a pile that jitters keeps moving after the gripper has left), the mean iterations of an island
// and the mean solve time. --csv FILE writes one row per (solver, step): step, time, deepest
// penetration, residual, the most iterations of an island and their mean over the islands, solve
// seconds, pot x, y, z, the lift's reading.
//
// Usage: dish_place_bench [--scene FILE] [--solvers a[:N],b,...] [--budget-us U] [--iterations N]
//          [--tolerance X] [--threads T] [--csv FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "bench/dish_place_script.h"
#include "bench/solver_list.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

struct Config {
  std::string scene = std::string(ALSIM_SCENES_DIR) + "/dish_place.xml";
  std::string solvers = "canal,subadmm,pgs";
  std::string csv;
  double budget_us = 1000;
  int iterations = 100000;
  double tolerance = 1e-10;
  int threads = 1;
};

// x with `digits` decimals, or in exponent form once it is too large for a table (a diverged run).
std::string Number(double x, int digits) {
  char text[32];
  if (std::abs(x) < 1e4) {
    std::snprintf(text, sizeof(text), "%.*f", digits, x);
  } else {
    std::snprintf(text, sizeof(text), "%.2e", x);
  }
  return text;
}

int Run(const Config& config) {
  const ModelImport imported = ImportModelFromFile(config.scene);
  if (!imported) {
    std::fprintf(stderr, "dish_place_bench: %s\n", imported.error.c_str());
    return 1;
  }
  const Model& m = *imported.model;
  bench::DishPlaceScene scene;
  std::string error;
  if (!bench::FindDishPlace(m, &scene, &error)) {
    std::fprintf(stderr, "dish_place_bench: %s\n", error.c_str());
    return 1;
  }
  const bench::DishPlacePlan plan;
  std::FILE* csv = nullptr;
  if (!config.csv.empty()) {
    csv = std::fopen(config.csv.c_str(), "w");
    if (csv == nullptr) {
      std::fprintf(stderr, "dish_place_bench: cannot write %s\n", config.csv.c_str());
      return 1;
    }
    std::fprintf(
        csv,
        "solver,step,time,penetration,residual,max_iterations,mean_iterations,seconds,pot_x,pot_y,"
        "pot_z,"
        "lift\n");
  }
  std::printf(
      "# dish_place_bench: %s, %.3g s simulated, budget %g us, cap %d iterations, tolerance %g,"
      " %d thread(s)\n",
      config.scene.c_str(), bench::DishPlacePhases(scene, plan)[5], config.budget_us,
      config.iterations, config.tolerance, config.threads);
  std::printf(
      "| solver | success | pot final dxy, dz mm | pot tilt deg | light max offset mm | max"
      " penetration mm | mean residual | light speed last 0.5 s m/s | mean iterations | mean"
      " solve ms |\n|---|---|---|---|---|---|---|---|---|---|\n");
  const int pot_qpos = m.jnt_qpos_adr[m.body_jnt_adr[scene.pot]];
  const int lift_qpos = m.jnt_qpos_adr[m.actuator_jnt[scene.lift]];
  std::vector<bench::SolverRun> runs;
  std::string bad;
  if (!bench::ParseSolverRuns(config.solvers, config.iterations, &runs, &bad)) {
    std::fprintf(stderr, "dish_place_bench: bad solver '%s' (name[:iterations])\n", bad.c_str());
    return 2;
  }
  int rc = 0;
  for (const bench::SolverRun& run : runs) {
    const std::string& item = run.item;
    StepOptions options;
    options.solver.type = run.type;
    options.solver.max_iterations = run.iterations;
    options.solver.tolerance = config.tolerance;
    options.solver.time_budget_us = config.budget_us;
    options.solver.compute_residual = true;
    bench::DishPlaceResult r;
    RunWithThreads(config.threads, [&] {
      r = bench::RunDishPlace(m, scene, plan, options, [&](int k, const Data& d) {
        if (csv == nullptr) return;
        double penetration = 0;
        for (const Contact& c : d.contact) penetration = std::max(penetration, -c.dist);
        const SolverStatistics& stats = d.solver_statistics;
        std::fprintf(csv, "%s,%d,%.6f,%.6e,%.6e,%d,%.2f,%.6e,%.9f,%.9f,%.9f,%.9f\n", item.c_str(),
                     k, d.time, penetration, stats.contact_residual, stats.max_iterations,
                     stats.mean_iterations, stats.solve_seconds, d.qpos[pot_qpos],
                     d.qpos[pot_qpos + 1], d.qpos[pot_qpos + 2], d.qpos[lift_qpos]);
      });
    });
    const double n = std::max(1, r.steps);
    std::string outcome = r.success ? "yes" : "no";
    if (r.status != StepStatus::kOk) {
      outcome += (r.status == StepStatus::kDiverged ? " (diverged at step " : " (failed at step ") +
                 std::to_string(r.steps) + ")";
    }
    char jitter[32] = "-";
    if (r.jitter_steps > 0)
      std::snprintf(jitter, sizeof(jitter), "%.2e", r.jitter_sum / r.jitter_steps);
    std::printf("| %s | %s | %s, %s | %s | %s | %s | %.1e | %s | %.1f | %.3f |\n", item.c_str(),
                outcome.c_str(), Number(1e3 * r.pot_dxy, 3).c_str(),
                Number(1e3 * r.pot_dz, 3).c_str(),
                Number(r.pot_tilt * 180 / 3.14159265358979323846, 3).c_str(),
                Number(1e3 * r.light_error, 3).c_str(), Number(1e3 * r.deepest, 3).c_str(),
                r.residual_sum / n, jitter, r.iterations_sum / n, 1e3 * r.solve_seconds_sum / n);
    std::fflush(stdout);
  }
  if (csv != nullptr && std::fclose(csv) != 0) rc = 1;
  return rc;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: dish_place_bench [--scene FILE] [--solvers a[:N],b,...] [--budget-us U]\n"
      "         [--iterations N] [--tolerance X] [--threads T] [--csv FILE]\n";
  alsim::Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--scene" && has_value) {
      config.scene = argv[++i];
    } else if (arg == "--solvers" && has_value) {
      config.solvers = argv[++i];
    } else if (arg == "--csv" && has_value) {
      config.csv = argv[++i];
    } else if (arg == "--budget-us" && has_value) {
      config.budget_us = std::atof(argv[++i]);
    } else if (arg == "--iterations" && has_value) {
      config.iterations = std::atoi(argv[++i]);
    } else if (arg == "--tolerance" && has_value) {
      config.tolerance = std::atof(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      config.threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "dish_place_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (config.iterations < 1 || config.threads < 1 || !(config.budget_us >= 0) ||
      !(config.tolerance >= 0)) {
    std::fprintf(stderr, "dish_place_bench: bad argument values\n%s", usage);
    return 2;
  }
  return alsim::Run(config);
}
