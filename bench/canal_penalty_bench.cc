// CANAL's per-constraint penalty (CanalPenalty, engine/solver/canal/canal_parameters.h) on scenes
// where many contacts of very different effective masses share an island: CANAL with the
// effective-mass penalty, CANAL with the paper's single beta, and SubADMM, each stepping the same
// trajectory segment from the same recorded state, printed as a Markdown table.
//
// Per scene (--scene FILE:SETTLE:STEPS, repeatable; default the four below): the scene steps
// SETTLE times with SubADMM at tolerance 1e-10 (2000 iterations) from its initial state, which is
// recorded (with its warm-start impulses); then every solver runs STEPS steps from that record, one
// thread, zero controls, tolerance --tolerance (default 1e-8), --canal-iterations outer iterations
// (default 100) for CANAL and --admm-iterations (default 2000) for SubADMM. Columns, over the steps
// with a contact: the Sec. VII residual (SolverStatistics::contact_residual) mean and largest, the
// share of steps at or below 1e-8, CANAL's outer iterations and Newton steps per step (summed over
// islands), its inner failures and the islands SubADMM finished after a stalled cascade
// (CanalParameters::subadmm_fallback_iterations) over the run, and the mean wall time of a step.
//
// Usage: canal_penalty_bench [--scene FILE:SETTLE:STEPS ...] [--tolerance X]
//                            [--canal-iterations N] [--admm-iterations N] [--relative-beta0 B]
//                            [--newton-steps N] [--anderson M] [--trace]
//   --newton-steps N  CANAL's inner cap (CanalParameters::max_newton_steps)
//   --anderson M      CANAL's outer-loop Anderson memory (CanalParameters::anderson_memory)
//   --trace           prints to stderr every step whose residual is above 1e-8, with its figures
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

struct SceneCase {
  std::string file;
  int settle = 0;
  int steps = 0;
};

struct Config {
  const char* name;
  SolverType type;
  CanalPenalty penalty;
};

double Figure(const SolverStatistics& stats, const char* name) {
  for (int f = 0; f < stats.num_figures; ++f) {
    if (std::strcmp(stats.figures[f].name, name) == 0) return stats.figures[f].value;
  }
  return 0;
}

struct Row {
  int contact_steps = 0;
  double residual_sum = 0, residual_max = 0;
  int worst_step = -1;
  int at_1e8 = 0;
  double outer = 0, newton = 0, failures = 0, fallbacks = 0, seconds = 0;
  int steps = 0;
  bool failed = false;
};

int Run(const std::vector<SceneCase>& scenes, double tolerance, int canal_iterations,
        int admm_iterations, double relative_beta0, int newton_steps, int anderson, bool trace) {
  const Config configs[] = {
      {"CANAL, effective-mass penalty", SolverType::kCanal, CanalPenalty::kEffectiveMass},
      {"CANAL, one beta (paper)", SolverType::kCanal, CanalPenalty::kUniform},
      {"SubADMM", SolverType::kSubAdmm, CanalPenalty::kEffectiveMass},
  };
  std::printf(
      "| scene | solver | mean residual | largest | steps <= 1e-8 | outer iterations per step | "
      "Newton steps per step | inner failures | SubADMM fallbacks | ms per step |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const SceneCase& scene : scenes) {
    const ModelImport imported = ImportModelFromFile(scene.file);
    if (!imported) {
      std::fprintf(stderr, "canal_penalty_bench: %s\n", imported.error.c_str());
      return 1;
    }
    const Model& m = *imported.model;
    Data start(m);
    StepOptions settle;
    settle.solver.type = SolverType::kSubAdmm;
    settle.solver.max_iterations = 2000;
    settle.solver.tolerance = 1e-10;
    bool ok = true;
    RunWithThreads(1, [&] {
      for (int k = 0; k < scene.settle && ok; ++k) ok = Step(m, start, settle) == StepStatus::kOk;
    });
    if (!ok) {
      std::fprintf(stderr, "canal_penalty_bench: %s failed to step while settling\n",
                   scene.file.c_str());
      return 1;
    }
    const std::string snapshot = SaveStateSnapshot(m, start);
    const std::string name = scene.file.substr(scene.file.find_last_of('/') + 1);
    bool first = true;
    for (const Config& config : configs) {
      Data d(m);
      std::string error;
      if (!RestoreStateSnapshot(m, snapshot, d, &error)) {
        std::fprintf(stderr, "canal_penalty_bench: %s\n", error.c_str());
        return 1;
      }
      StepOptions options;
      options.solver.type = config.type;
      options.solver.tolerance = tolerance;
      options.solver.compute_residual = true;
      const bool canal = config.type == SolverType::kCanal;
      options.solver.max_iterations = canal ? canal_iterations : admm_iterations;
      options.solver.canal.penalty = config.penalty;
      options.solver.canal.relative_beta0 = relative_beta0;
      options.solver.canal.max_newton_steps = newton_steps;
      options.solver.canal.anderson_memory = anderson;
      Row row;
      RunWithThreads(1, [&] {
        for (int k = 0; k < scene.steps; ++k) {
          const auto begin = std::chrono::steady_clock::now();
          if (Step(m, d, options) != StepStatus::kOk) {
            row.failed = true;
            return;
          }
          row.seconds +=
              std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
          ++row.steps;
          const SolverStatistics& stats = d.solver_statistics;
          if (stats.contacts == 0) continue;
          ++row.contact_steps;
          row.residual_sum += stats.contact_residual;
          if (stats.contact_residual > row.residual_max) {
            row.residual_max = stats.contact_residual;
            row.worst_step = k;
          }
          if (std::getenv("CANAL_BENCH_TRACE") != nullptr && stats.contact_residual > 1e-8) {
            std::fprintf(stderr, "step %d residual %.2e outer %.0f newton %.0f failures %.0f\n", k,
                         stats.contact_residual, Figure(stats, "outer_iterations"),
                         Figure(stats, "newton_steps"), Figure(stats, "inner_failures"));
          }
          if (stats.contact_residual <= 1e-8) ++row.at_1e8;
          if (trace && stats.contact_residual > 1e-8) {
            std::fprintf(stderr, "%s, %s, step %d: residual %.2e, %d contacts", name.c_str(),
                         config.name, k, stats.contact_residual, stats.contacts);
            for (int f = 0; f < stats.num_figures; ++f) {
              std::fprintf(stderr, ", %s %g", stats.figures[f].name, stats.figures[f].value);
            }
            std::fprintf(stderr, "\n");
          }
          if (canal) {
            row.outer += Figure(stats, "outer_iterations");
            row.newton += Figure(stats, "newton_steps");
            row.failures += Figure(stats, "inner_failures");
            row.fallbacks += Figure(stats, "subadmm_fallbacks");
          }
        }
      });
      const double n = std::max(1, row.contact_steps);
      std::printf("| %s | %s | %.1e | %.1e (step %d) | %.0f%% | ", first ? name.c_str() : "",
                  config.name, row.residual_sum / n, row.residual_max, row.worst_step,
                  100.0 * row.at_1e8 / n);
      if (canal) {
        std::printf("%.1f | %.1f | %.0f | %.0f | ", row.outer / n, row.newton / n, row.failures,
                    row.fallbacks);
      } else {
        std::printf("| | | | ");
      }
      std::printf("%.2f%s |\n", 1e3 * row.seconds / std::max(1, row.steps),
                  row.failed ? " (a step failed)" : "");
      std::fflush(stdout);
      first = false;
    }
  }
  std::printf(
      "\ntolerance %g, CANAL %d outer iterations, SubADMM %d iterations, relative beta0 %g; "
      "each row from the same state after the settling steps, one thread\n",
      tolerance, canal_iterations, admm_iterations, relative_beta0);
  return 0;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: canal_penalty_bench [--scene FILE:SETTLE:STEPS ...] [--tolerance X]\n"
      "                           [--canal-iterations N] [--admm-iterations N] "
      "[--relative-beta0 B]\n"
      "                           [--newton-steps N] [--anderson M] [--trace]\n";
  const std::string dir = ALSIM_SCENES_DIR;
  std::vector<alsim::SceneCase> scenes;
  double tolerance = 1e-8, relative_beta0 = alsim::CanalParameters().relative_beta0;
  int canal_iterations = 100, admm_iterations = 2000;
  int newton_steps = alsim::CanalParameters().max_newton_steps;
  bool trace = false;
  int anderson = alsim::CanalParameters().anderson_memory;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--scene" && i + 1 < argc) {
      const std::string spec = argv[++i];
      const size_t b = spec.rfind(':'), a = b == std::string::npos ? b : spec.rfind(':', b - 1);
      if (a == std::string::npos || a == 0) {
        std::fprintf(stderr, "canal_penalty_bench: --scene takes FILE:SETTLE:STEPS\n%s", usage);
        return 2;
      }
      alsim::SceneCase scene{spec.substr(0, a), std::atoi(spec.substr(a + 1, b - a - 1).c_str()),
                             std::atoi(spec.substr(b + 1).c_str())};
      if (scene.settle < 0 || scene.steps < 1) {
        std::fprintf(stderr, "canal_penalty_bench: SETTLE >= 0 and STEPS >= 1\n%s", usage);
        return 2;
      }
      scenes.push_back(scene);
    } else if (arg == "--tolerance" && i + 1 < argc) {
      tolerance = std::atof(argv[++i]);
    } else if (arg == "--canal-iterations" && i + 1 < argc) {
      canal_iterations = std::atoi(argv[++i]);
    } else if (arg == "--admm-iterations" && i + 1 < argc) {
      admm_iterations = std::atoi(argv[++i]);
    } else if (arg == "--relative-beta0" && i + 1 < argc) {
      relative_beta0 = std::atof(argv[++i]);
    } else if (arg == "--newton-steps" && i + 1 < argc) {
      newton_steps = std::atoi(argv[++i]);
    } else if (arg == "--anderson" && i + 1 < argc) {
      anderson = std::atoi(argv[++i]);
    } else if (arg == "--trace") {
      trace = true;
    } else {
      std::fprintf(stderr, "canal_penalty_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (!(tolerance >= 0) || canal_iterations < 1 || admm_iterations < 1 || !(relative_beta0 > 0) ||
      newton_steps < 1 || anderson < 0 || anderson > 8) {
    std::fprintf(stderr,
                 "canal_penalty_bench: --tolerance >= 0, iterations and --newton-steps >= 1, "
                 "--relative-beta0 > 0, --anderson 0 to 8\n%s",
                 usage);
    return 2;
  }
  if (scenes.empty()) {
    scenes = {{dir + "/box_stack.xml", 120, 60},
              {dir + "/heavy_on_three_light.xml", 120, 60},
              {dir + "/ball_pile.xml", 240, 30},
              {dir + "/quadruped_drop_8.xml", 60, 60}};
  }
  return alsim::Run(scenes, tolerance, canal_iterations, admm_iterations, relative_beta0,
                    newton_steps, anderson, trace);
}
