// The SubADMM/CANAL paper's dish piling under a per-step solver budget (Sec. VII-B: "budget 1 ms:
// SubADMM and CANAL succeed, PGS fails with jittery motion"; digest seed-004-subadmm-canal.md
// 8.2), on scenes/dish_pile.xml without the paper's arm and hand: the pile is disturbed instead
// of built, in one of two ways [OURS]:
//   --drop H   the pot is lifted H meters off its settled pose (velocities zeroed) and released,
//              so it lands on the plate at sqrt(2 g H): a placement by release;
//   --force-scale S (> 0) and --torque-scale T: before every step a fresh random wrench on every
//              free body (bench/wrench_cases.h's distribution, the single-step cases' draw), the
//              same sequence for every solver (the generator is reseeded with --seed per solver).
//
// The state: the scene settled for --settle-steps steps with CANAL at tolerance 1e-10 (as
// single_step_bench does), then the disturbance, then --steps steps per solver, each with
// SolverOptions {time_budget_us = --budget-us, max_iterations = --iterations (a cap the budget
// should reach first), tolerance = --tolerance}, one thread. A budget makes the result depend on
// the machine and its load.
//
// Per solver it prints a Markdown row: the largest penetration over the run (max of -dist over
// every contact of every step), the mean Sec. VII residual (SolverStatistics::contact_residual,
// whose extra solve is outside the budget's iterations but inside solve_seconds), the mean and
// largest iterations of an island, the mean solve time, the pot's largest distance from where it
// started the run (after the lift for --drop) and its final horizontal and vertical offsets, and
// the mean speed of the pot and of the light dishes (m/s of their centers of mass frames' origins,
// from qvel's linear part): a pile that jitters keeps moving after the disturbance.
// --csv FILE writes one row per (solver, step): step, penetration, residual, iterations, solve
// seconds, pot x, y, z.
//
// Usage: dish_pile_bench [--scene FILE] [--solvers a,b,...] [--steps N] [--budget-us U]
//          [--iterations N] [--tolerance X] [--settle-steps K] [--drop H] [--force-scale S]
//          [--torque-scale T] [--seed S] [--csv FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/wrench_cases.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

struct Config {
  std::string scene = std::string(ALSIM_SCENES_DIR) + "/dish_pile.xml";
  std::string solvers = "canal,subadmm,pgs";
  std::string csv;
  int steps = 480;
  double budget_us = 1000;
  int iterations = 100000;
  double tolerance = 1e-10;
  int settle_steps = 240;
  double drop = 0;
  double force_scale = 0;
  double torque_scale = 0;
  unsigned long long seed = 1;
};

int FindBody(const Model& m, const std::string& name) {
  for (int b = 0; b < m.nbody; ++b) {
    if (m.body_name[b] == name) return b;
  }
  return -1;
}

// The linear velocity of free body b's frame from qvel (a free joint's first three dofs).
double FreeBodySpeed(const Model& m, const Data& d, int b) {
  const int dof = m.jnt_dof_adr[m.body_jnt_adr[b]];
  return std::sqrt(d.qvel[dof] * d.qvel[dof] + d.qvel[dof + 1] * d.qvel[dof + 1] +
                   d.qvel[dof + 2] * d.qvel[dof + 2]);
}

int Run(const Config& config) {
  const ModelImport imported = ImportModelFromFile(config.scene);
  if (!imported) {
    std::fprintf(stderr, "dish_pile_bench: %s\n", imported.error.c_str());
    return 1;
  }
  const Model& m = *imported.model;
  const int pot = FindBody(m, "pot");
  if (pot < 0) {
    std::fprintf(stderr, "dish_pile_bench: the scene has no body named pot\n");
    return 1;
  }
  const std::vector<int> free_bodies = bench::FreeBodies(m);

  std::vector<SolverType> types;
  std::vector<std::string> names;
  {
    std::stringstream in(config.solvers);
    std::string name;
    while (std::getline(in, name, ',')) {
      SolverType type;
      if (!ParseSolverName(name.c_str(), &type)) {
        std::fprintf(stderr, "dish_pile_bench: unknown solver '%s'\n", name.c_str());
        return 2;
      }
      types.push_back(type);
      names.push_back(name);
    }
  }

  std::FILE* csv = nullptr;
  if (!config.csv.empty()) {
    csv = std::fopen(config.csv.c_str(), "w");
    if (csv == nullptr) {
      std::fprintf(stderr, "dish_pile_bench: cannot write %s\n", config.csv.c_str());
      return 1;
    }
    std::fprintf(csv, "solver,step,penetration,residual,iterations,seconds,pot_x,pot_y,pot_z\n");
  }

  int rc = 0;
  RunWithThreads(1, [&] {
    Data rest(m);
    if (!bench::Settle(m, rest, SolverType::kCanal, 50, 1e-10, config.settle_steps)) {
      rc = 1;
      return;
    }
    // The disturbance's start: the pot lifted by --drop from its settled pose, everything still.
    const int pot_qpos = m.jnt_qpos_adr[m.body_jnt_adr[pot]];
    rest.qpos[pot_qpos + 2] += config.drop;
    if (config.drop != 0) std::fill(rest.qvel.begin(), rest.qvel.end(), 0.0);
    const std::string snapshot = SaveStateSnapshot(m, rest);

    std::printf(
        "# dish_pile_bench: %s, %d steps, budget %g us, cap %d iterations, tolerance %g,"
        " drop %g m, wrenches %g/%g, seed %llu\n",
        config.scene.c_str(), config.steps, config.budget_us, config.iterations, config.tolerance,
        config.drop, config.force_scale, config.torque_scale, config.seed);
    std::printf(
        "| solver | max penetration mm | mean residual | mean (max) iterations | mean solve"
        " ms | pot max drift mm | pot final dxy, dz mm | mean speed pot, light m/s |"
        " status |\n|---|---|---|---|---|---|---|---|---|\n");
    for (size_t s = 0; s < types.size(); ++s) {
      Data d(m);
      std::string error;
      if (!RestoreStateSnapshot(m, snapshot, d, &error)) {
        std::fprintf(stderr, "dish_pile_bench: %s\n", error.c_str());
        rc = 1;
        return;
      }
      StepOptions options;
      options.solver.type = types[s];
      options.solver.max_iterations = config.iterations;
      options.solver.tolerance = config.tolerance;
      options.solver.time_budget_us = config.budget_us;
      std::mt19937_64 rng(config.seed);
      std::vector<Vec6> wrenches(m.nbody, Vec6::Zero());
      const Vec3 start(rest.qpos[pot_qpos], rest.qpos[pot_qpos + 1], rest.qpos[pot_qpos + 2]);
      double max_penetration = 0, sum_residual = 0, sum_iterations = 0, sum_seconds = 0;
      double max_drift = 0, sum_pot_speed = 0, sum_light_speed = 0;
      int max_iterations = 0, steps = 0;
      const char* status = "ok";
      for (int k = 0; k < config.steps; ++k) {
        if (config.force_scale > 0 || config.torque_scale > 0) {
          bench::DrawWrenches(m, free_bodies, config.force_scale, config.torque_scale, rng,
                              wrenches);
        }
        d.xfrc_applied = wrenches;
        const StepStatus step_status = Step(m, d, options);
        if (step_status != StepStatus::kOk) {
          status = step_status == StepStatus::kDiverged ? "diverged" : "failed";
          break;
        }
        ++steps;
        double penetration = 0;
        for (const Contact& contact : d.contact) penetration = std::max(penetration, -contact.dist);
        const SolverStatistics& stats = d.solver_statistics;
        const Vec3 position(d.qpos[pot_qpos], d.qpos[pot_qpos + 1], d.qpos[pot_qpos + 2]);
        max_penetration = std::max(max_penetration, penetration);
        sum_residual += stats.contact_residual;
        sum_iterations += stats.mean_iterations;
        max_iterations = std::max(max_iterations, stats.max_iterations);
        sum_seconds += stats.solve_seconds;
        max_drift = std::max(max_drift, (position - start).norm());
        double light_speed = 0;
        for (const int b : free_bodies) {
          if (b != pot) light_speed += FreeBodySpeed(m, d, b);
        }
        sum_pot_speed += FreeBodySpeed(m, d, pot);
        sum_light_speed += light_speed / std::max<size_t>(1, free_bodies.size() - 1);
        if (csv != nullptr) {
          std::fprintf(csv, "%s,%d,%.6e,%.6e,%d,%.6e,%.9f,%.9f,%.9f\n", names[s].c_str(), k,
                       penetration, stats.contact_residual, stats.max_iterations,
                       stats.solve_seconds, position.x(), position.y(), position.z());
        }
      }
      const double n = std::max(1, steps);
      const Vec3 end(d.qpos[pot_qpos], d.qpos[pot_qpos + 1], d.qpos[pot_qpos + 2]);
      const Vec3 offset = end - start;
      std::printf("| %s | %.3f | %.1e | %.0f (%d) | %.3f | %.3f | %.3f, %.3f | %.4f, %.4f | %s |\n",
                  names[s].c_str(), 1e3 * max_penetration, sum_residual / n, sum_iterations / n,
                  max_iterations, 1e3 * sum_seconds / n, 1e3 * max_drift,
                  1e3 * std::hypot(offset.x(), offset.y()), 1e3 * offset.z(), sum_pot_speed / n,
                  sum_light_speed / n, status);
      std::fflush(stdout);
    }
  });
  if (csv != nullptr && std::fclose(csv) != 0) rc = 1;
  return rc;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: dish_pile_bench [--scene FILE] [--solvers a,b,...] [--steps N] [--budget-us U]\n"
      "         [--iterations N] [--tolerance X] [--settle-steps K] [--drop H]\n"
      "         [--force-scale S] [--torque-scale T] [--seed S] [--csv FILE]\n";
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
    } else if (arg == "--steps" && has_value) {
      config.steps = std::atoi(argv[++i]);
    } else if (arg == "--budget-us" && has_value) {
      config.budget_us = std::atof(argv[++i]);
    } else if (arg == "--iterations" && has_value) {
      config.iterations = std::atoi(argv[++i]);
    } else if (arg == "--tolerance" && has_value) {
      config.tolerance = std::atof(argv[++i]);
    } else if (arg == "--settle-steps" && has_value) {
      config.settle_steps = std::atoi(argv[++i]);
    } else if (arg == "--drop" && has_value) {
      config.drop = std::atof(argv[++i]);
    } else if (arg == "--force-scale" && has_value) {
      config.force_scale = std::atof(argv[++i]);
    } else if (arg == "--torque-scale" && has_value) {
      config.torque_scale = std::atof(argv[++i]);
    } else if (arg == "--seed" && has_value) {
      config.seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "dish_pile_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (config.steps < 1 || config.iterations < 1 || config.settle_steps < 0 ||
      !(config.budget_us >= 0) || !(config.tolerance >= 0) || !(config.drop >= 0) ||
      !(config.force_scale >= 0) || !(config.torque_scale >= 0)) {
    std::fprintf(stderr, "dish_pile_bench: bad argument values\n%s", usage);
    return 2;
  }
  return alsim::Run(config);
}
