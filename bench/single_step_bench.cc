// The single-step harness of the SubADMM/CANAL paper's Figs. 7 and 9 (Sec. VII-A, VII-B; digest
// seed-004-subadmm-canal.md 8.1, 8.2, 11 items 19-20): from one recorded state, N cases of random
// external wrenches on the free bodies (bench/wrench_cases.h gives the distribution, ours), and
// for each case every solver from that same state, stopped after k iterations for k on a schedule;
// it records the Sec. VII residual and the solve's wall time after k iterations, to a CSV that
// bench/plot_single_step.py turns into residual-vs-iteration and residual-vs-time plots.
//
// The recorded state: the scene settled from its initial state for --settle-steps steps with
// --settle-solver (default canal) at tolerance 1e-10 (cap --settle-iterations), saved as a state
// snapshot (engine/sim/state_snapshot.h: qpos, qvel and the warm-start impulses); or --state FILE,
// a snapshot saved before (--save-state FILE writes the settled one). Every run restores it, so
// every solver starts from the same state and the same warm start. With --keyframes, K recorded
// states instead: the scene's K keyframes (MJCF <key>, e.g. the bolt-nut scene's ten nut poses),
// each settled as above from ResetDataKeyframe; case c starts from keyframe c mod K (100 cases on
// 10 keyframes: 10 wrenches per pose, Fig. 7's cases).
//
// --first-case F runs the cases F .. F + N - 1 of the seeded sequence (the draws of the cases
// before F are made and dropped), so a long run split into parts gives the same rows: their CSVs
// concatenate (one header) into the whole run's.
//
// One run = one Step with SolverOptions {type, max_iterations = k, tolerance = 0}: every island
// runs exactly k iterations (tolerance 0 also disables the ADMM stall stop, whose test needs
// theta_d below the tolerance), unless a solver stops itself earlier (iterations_done in the CSV
// says so). "Iterations" are each solver's own: outer AL loops for CANAL, ADMM iterations for
// SubADMM, sweeps for PGS, as the paper's Figs. 7 and 9 count them. The schedule is k = 1..10,
// then 10 * 10^(i/8) rounded (13, 18, 24, 32, 42, 56, 75, 100, 133, 178, ...) below the
// solver's cap, then the cap: --max-iterations, or N for a solver given as name:N in --solvers
// (a cheap first-order solver needs more iterations than CANAL to span the same wall time). Each k
// is a fresh run from the state, not a snapshot of a longer run: the solvers' stop tests and
// CANAL's beta schedule see exactly what a caller with max_iterations = k would.
//
// What is recorded per (case, solver, k): residual = SolverStatistics::contact_residual (the Sec.
// VII metric) and the solver's figures, from a run with compute_residual on; seconds = the least
// SolverStatistics::solve_seconds of --repeats further runs with compute_residual off (the
// residual's extra solves are the harness's, not the solver's), one thread unless --threads.
//
// CSV columns: case, solver, iterations (k), iterations_done (the most iterations an island took),
// residual, seconds, contacts, status (0 ok, 1 the step diverged), then one column per figure name
// any solver reported (empty where a solver has no such figure), in first-seen order.
//
// Usage: single_step_bench [--scene FILE | --state FILE --scene FILE] [--save-state FILE]
//          [--settle-steps K] [--settle-solver NAME] [--settle-iterations N] [--cases N]
//          [--seed S] [--solvers name[:N],...] [--max-iterations N] [--repeats R] [--threads T]
//          [--force-scale X] [--torque-scale X] [--csv FILE] [--keyframes] [--first-case F]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/solver_list.h"
#include "bench/wrench_cases.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/reset.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

struct Config {
  std::string scene = std::string(ALSIM_SCENES_DIR) + "/heavy_on_light.xml";
  std::string state_file;
  std::string save_state_file;
  std::string csv = "single_step.csv";
  std::string solvers = "canal,subadmm,pgs";
  std::string settle_solver = "canal";
  int settle_steps = 240;
  int settle_iterations = 50;
  int cases = 100;
  int first_case = 0;
  bool keyframes = false;
  unsigned long long seed = 1;
  int max_iterations = 200;
  int repeats = 3;
  int threads = 1;
  double force_scale = 0.5;
  double torque_scale = 0.5;
};

// One (case, solver, k) result.
struct Row {
  int case_index = 0;
  int solver = 0;
  int iterations = 0;
  int iterations_done = 0;
  double residual = 0;
  double seconds = 0;
  int contacts = 0;
  int status = 0;
  int num_figures = 0;
  SolverFigure figures[SolverStatistics::kMaxFigures];
};

std::vector<int> Schedule(int max_iterations) {
  std::vector<int> ks;
  for (int k = 1; k <= std::min(10, max_iterations); ++k) ks.push_back(k);
  for (int i = 1;; ++i) {
    const int k = static_cast<int>(std::lround(10 * std::pow(10.0, i / 8.0)));
    if (k >= max_iterations) break;
    if (k > ks.back()) ks.push_back(k);
  }
  if (ks.back() < max_iterations) ks.push_back(max_iterations);
  return ks;
}

double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

bool WriteCsv(const std::string& path, const std::vector<Row>& rows,
              const std::vector<std::string>& solver_names) {
  std::vector<std::string> figure_names;
  for (const Row& row : rows) {
    for (int f = 0; f < row.num_figures; ++f) {
      const std::string name = row.figures[f].name;
      if (std::find(figure_names.begin(), figure_names.end(), name) == figure_names.end()) {
        figure_names.push_back(name);
      }
    }
  }
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return false;
  std::fprintf(out, "case,solver,iterations,iterations_done,residual,seconds,contacts,status");
  for (const std::string& name : figure_names) std::fprintf(out, ",%s", name.c_str());
  std::fprintf(out, "\n");
  for (const Row& row : rows) {
    std::fprintf(out, "%d,%s,%d,%d,%.6e,%.6e,%d,%d", row.case_index,
                 solver_names[row.solver].c_str(), row.iterations, row.iterations_done,
                 row.residual, row.seconds, row.contacts, row.status);
    for (const std::string& name : figure_names) {
      std::fprintf(out, ",");
      for (int f = 0; f < row.num_figures; ++f) {
        if (name == row.figures[f].name) std::fprintf(out, "%.10g", row.figures[f].value);
      }
    }
    std::fprintf(out, "\n");
  }
  return std::fclose(out) == 0;
}

int Run(const Config& config) {
  const ModelImport imported = ImportModelFromFile(config.scene);
  if (!imported) {
    std::fprintf(stderr, "single_step_bench: %s\n", imported.error.c_str());
    return 1;
  }
  const Model& m = *imported.model;

  // --solvers name[:max_iterations],...
  std::vector<bench::SolverRun> runs;
  std::string bad;
  if (!bench::ParseSolverRuns(config.solvers, config.max_iterations, &runs, &bad)) {
    std::fprintf(stderr, "single_step_bench: bad solver '%s' (name[:max_iterations])\n",
                 bad.c_str());
    return 2;
  }
  std::vector<std::string> solver_names;
  std::vector<SolverType> solver_types;
  std::vector<std::vector<int>> schedules;
  for (const bench::SolverRun& run : runs) {
    solver_names.push_back(run.name);
    solver_types.push_back(run.type);
    schedules.push_back(Schedule(run.iterations));
  }
  SolverType settle_type;
  if (!ParseSolverName(config.settle_solver.c_str(), &settle_type)) {
    std::fprintf(stderr, "single_step_bench: unknown solver '%s'\n", config.settle_solver.c_str());
    return 2;
  }

  // The recorded states: one, or one per keyframe.
  std::vector<std::string> snapshots;
  std::string error;
  if (config.keyframes) {
    if (m.nkey < 1 || !config.state_file.empty() || !config.save_state_file.empty()) {
      std::fprintf(stderr,
                   "single_step_bench: --keyframes needs a scene with keyframes, and neither "
                   "--state nor --save-state\n");
      return 2;
    }
    for (int key = 0; key < m.nkey; ++key) {
      Data rest(m);
      bool settled = ResetDataKeyframe(m, &rest, key);
      RunWithThreads(config.threads, [&] {
        settled = settled && bench::Settle(m, rest, settle_type, config.settle_iterations, 1e-10,
                                           config.settle_steps);
      });
      if (!settled) return 1;
      snapshots.push_back(SaveStateSnapshot(m, rest));
    }
  } else if (!config.state_file.empty()) {
    std::string snapshot;
    std::ifstream in(config.state_file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    snapshot = bytes.str();
    Data check(m);
    if (!in || !RestoreStateSnapshot(m, snapshot, check, &error)) {
      std::fprintf(stderr, "single_step_bench: %s: %s\n", config.state_file.c_str(),
                   in ? error.c_str() : "cannot read");
      return 1;
    }
    snapshots.push_back(snapshot);
  } else {
    Data rest(m);
    bool settled = true;
    RunWithThreads(config.threads, [&] {
      settled =
          bench::Settle(m, rest, settle_type, config.settle_iterations, 1e-10, config.settle_steps);
    });
    if (!settled) return 1;
    snapshots.push_back(SaveStateSnapshot(m, rest));
  }
  if (!config.save_state_file.empty()) {
    std::ofstream out(config.save_state_file, std::ios::binary);
    out << snapshots[0];
    if (!out) {
      std::fprintf(stderr, "single_step_bench: cannot write %s\n", config.save_state_file.c_str());
      return 1;
    }
  }

  const std::vector<int> free_bodies = bench::FreeBodies(m);
  const int num_solvers = static_cast<int>(solver_types.size());
  std::vector<int> all_ks;  // every solver's schedule, merged
  for (const std::vector<int>& schedule : schedules) {
    all_ks.insert(all_ks.end(), schedule.begin(), schedule.end());
  }
  std::sort(all_ks.begin(), all_ks.end());
  all_ks.erase(std::unique(all_ks.begin(), all_ks.end()), all_ks.end());
  std::vector<Row> rows;
  rows.reserve(static_cast<size_t>(config.cases) * num_solvers * all_ks.size());
  std::vector<Data> data;  // one per solver, reused by every run
  data.reserve(num_solvers);
  for (int s = 0; s < num_solvers; ++s) data.emplace_back(m);
  std::vector<Vec6> wrenches;
  std::mt19937_64 rng(config.seed);

  for (int c = 0; c < config.first_case; ++c) {  // the draws of the cases before --first-case
    bench::DrawWrenches(m, free_bodies, config.force_scale, config.torque_scale, rng, wrenches);
  }

  bool failed = false;
  RunWithThreads(config.threads, [&] {
    for (int c = config.first_case; c < config.first_case + config.cases && !failed; ++c) {
      bench::DrawWrenches(m, free_bodies, config.force_scale, config.torque_scale, rng, wrenches);
      const std::string& snapshot = snapshots[c % snapshots.size()];
      for (int s = 0; s < num_solvers && !failed; ++s) {
        Data& d = data[s];
        // Restores the state, applies this case's wrenches and steps with k iterations.
        StepOptions options;
        options.solver.type = solver_types[s];
        options.solver.tolerance = 0;
        auto step = [&](int k, bool residual) {
          if (!RestoreStateSnapshot(m, snapshot, d, &error)) {
            failed = true;
            return StepStatus::kInvalidOptions;
          }
          d.xfrc_applied = wrenches;
          options.solver.max_iterations = k;
          options.solver.compute_residual = residual;
          return Step(m, d, options);
        };
        for (const int k : schedules[s]) {
          Row row;
          row.case_index = c;
          row.solver = s;
          row.iterations = k;
          const StepStatus status = step(k, true);
          if (failed) return;
          if (status == StepStatus::kInvalidOptions) {
            error = ValidateStepOptions(options);
            failed = true;
            return;
          }
          const SolverStatistics& stats = d.solver_statistics;
          row.status = status == StepStatus::kOk ? 0 : 1;
          row.iterations_done = stats.max_iterations;
          row.residual = status == StepStatus::kOk ? stats.contact_residual
                                                   : std::numeric_limits<double>::quiet_NaN();
          row.contacts = stats.contacts;
          row.num_figures = stats.num_figures;
          std::copy(stats.figures, stats.figures + stats.num_figures, row.figures);
          row.seconds = std::numeric_limits<double>::infinity();
          for (int r = 0; r < config.repeats; ++r) {
            step(k, false);
            if (failed) return;
            row.seconds = std::min(row.seconds, d.solver_statistics.solve_seconds);
          }
          rows.push_back(row);
        }
      }
      const int done = c + 1 - config.first_case;
      if (done % 10 == 0 || done == config.cases) {
        std::fprintf(stderr, "single_step_bench: %d/%d cases\n", done, config.cases);
      }
    }
  });
  if (failed) {
    std::fprintf(stderr, "single_step_bench: %s\n", error.c_str());
    return 1;
  }
  if (!WriteCsv(config.csv, rows, solver_names)) {
    std::fprintf(stderr, "single_step_bench: cannot write %s\n", config.csv.c_str());
    return 1;
  }

  // A summary: median residual and median seconds over cases at each k.
  int diverged = 0;
  for (const Row& row : rows) diverged += row.status;
  const std::string states = config.keyframes
                                 ? std::to_string(snapshots.size()) + " settled keyframes"
                             : config.state_file.empty() ? "settled state"
                                                         : config.state_file;
  std::printf("# single_step_bench: %s (nv %d, %zu free bodies), cases %d..%d, seed %llu, %s\n",
              config.scene.c_str(), m.nv, free_bodies.size(), config.first_case,
              config.first_case + config.cases - 1, config.seed, states.c_str());
  std::printf(
      "# wrenches: force N(0, (%g m g)^2), torque N(0, (%g m g r)^2) per axis; %d diverged"
      " runs; CSV %s\n",
      config.force_scale, config.torque_scale, diverged, config.csv.c_str());
  std::printf("| k |");
  for (const std::string& name : solver_names)
    std::printf(" %s residual | %s ms |", name.c_str(), name.c_str());
  std::printf("\n|---|");
  for (int s = 0; s < num_solvers; ++s) std::printf("---|---|");
  std::printf("\n");
  for (const int k : all_ks) {
    std::printf("| %d |", k);
    for (int s = 0; s < num_solvers; ++s) {
      std::vector<double> residuals, seconds;
      for (const Row& row : rows) {
        if (row.solver == s && row.iterations == k) {
          residuals.push_back(row.residual);
          seconds.push_back(row.seconds);
        }
      }
      if (residuals.empty()) {
        std::printf(" | |");
      } else {
        std::printf(" %.2e | %.4f |", Median(residuals), 1e3 * Median(seconds));
      }
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: single_step_bench [--scene FILE] [--state FILE] [--save-state FILE]\n"
      "         [--settle-steps K] [--settle-solver NAME] [--settle-iterations N] [--cases N]\n"
      "         [--seed S] [--solvers name[:N],...] [--max-iterations N] [--repeats R] [--threads "
      "T]\n"
      "         [--force-scale X] [--torque-scale X] [--csv FILE] [--keyframes] [--first-case F]\n";
  alsim::Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--scene" && has_value) {
      config.scene = argv[++i];
    } else if (arg == "--state" && has_value) {
      config.state_file = argv[++i];
    } else if (arg == "--save-state" && has_value) {
      config.save_state_file = argv[++i];
    } else if (arg == "--csv" && has_value) {
      config.csv = argv[++i];
    } else if (arg == "--solvers" && has_value) {
      config.solvers = argv[++i];
    } else if (arg == "--settle-solver" && has_value) {
      config.settle_solver = argv[++i];
    } else if (arg == "--settle-steps" && has_value) {
      config.settle_steps = std::atoi(argv[++i]);
    } else if (arg == "--settle-iterations" && has_value) {
      config.settle_iterations = std::atoi(argv[++i]);
    } else if (arg == "--keyframes") {
      config.keyframes = true;
    } else if (arg == "--first-case" && has_value) {
      config.first_case = std::atoi(argv[++i]);
    } else if (arg == "--cases" && has_value) {
      config.cases = std::atoi(argv[++i]);
    } else if (arg == "--seed" && has_value) {
      config.seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--max-iterations" && has_value) {
      config.max_iterations = std::atoi(argv[++i]);
    } else if (arg == "--repeats" && has_value) {
      config.repeats = std::atoi(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      config.threads = std::atoi(argv[++i]);
    } else if (arg == "--force-scale" && has_value) {
      config.force_scale = std::atof(argv[++i]);
    } else if (arg == "--torque-scale" && has_value) {
      config.torque_scale = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "single_step_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (config.cases < 1 || config.first_case < 0 || config.settle_steps < 0 ||
      config.settle_iterations < 1 || config.max_iterations < 1 || config.repeats < 1 ||
      config.threads < 1 || !(config.force_scale >= 0) || !(config.torque_scale >= 0)) {
    std::fprintf(stderr,
                 "single_step_bench: --cases, --settle-iterations, --max-iterations, --repeats "
                 "and --threads must be at least 1, --first-case, --settle-steps and the scales "
                 "at least 0\n%s",
                 usage);
    return 2;
  }
  return alsim::Run(config);
}
