#include "client/cli/run_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include <oneapi/tbb/info.h>

#include "client/cli/json_writer.h"
#include "client/cli/progress_bar.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/data.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "engine/solver/solver_options.h"

namespace alsim::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr long long kDefaultSteps = 1000;
// More threads than this is a typo, not a machine; TBB would still try to create them.
constexpr int kMaxThreads = 4096;

struct RunOptions {
  std::string scene;
  long long steps = kDefaultSteps;
  int threads = 0;  // 0 until parsed: all hardware threads
  SolverOptions solver;
  bool json = false;
  bool help = false;
};

// What the stepping loop observed.
struct RunStatistics {
  long long steps = 0;  // steps taken, a diverged one included
  double wall_seconds = 0;
  double sum_contacts = 0;
  double sum_warm_started_contacts = 0;
  double sum_islands = 0;
  double sum_iterations = 0;
  double sum_contact_residual = 0;
  double max_penetration = 0;  // m, >= 0
  StepStatus status = StepStatus::kOk;

  double Mean(double sum) const { return steps > 0 ? sum / static_cast<double>(steps) : 0.0; }
  double StepsPerSecond() const {
    return wall_seconds > 0 ? static_cast<double>(steps) / wall_seconds : 0.0;
  }
};

int UsageError(const std::string& message) {
  std::cerr << "alsim: run: " << message << "\nTry 'alsim --help'.\n";
  return 2;
}

bool ParseInteger(const std::string& text, long long* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtoll(text.c_str(), &end, 10);
  return *end == '\0' && errno != ERANGE;
}

// An integer option: `text` as an integer in [lower, upper] into *out, which is left alone
// when it is not one.
bool ParseIntegerIn(const std::string& text, long long lower, long long upper, int* out) {
  long long value = 0;
  if (!ParseInteger(text, &value) || value < lower || value > upper) return false;
  *out = static_cast<int>(value);
  return true;
}

// Upper bound of the iteration and step counts the solver options take (within int).
constexpr long long kMaxCount = 1000000000;

bool ParseNumber(const std::string& text, double* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  *value = std::strtod(text.c_str(), &end);
  return *end == '\0' && std::isfinite(*value);
}

// Fills `options` from the arguments after "run"; returns an error message, empty on success.
std::string ParseRunArgs(const std::vector<std::string>& args, RunOptions* options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const bool takes_value = arg == "--steps" || arg == "--solver" || arg == "--threads" ||
                             arg == "--iterations" || arg == "--tolerance" ||
                             arg == "--budget-us" || arg == "--relaxation" ||
                             arg == "--penalty-scaling" || arg == "--anderson" ||
                             arg == "--delassus-refresh" || arg == "--response-after";
    if (takes_value && i + 1 >= args.size()) return arg + " needs a value";
    const std::string value = takes_value ? args[++i] : "";
    long long integer = 0;
    double number = 0;
    if (arg == "--help" || arg == "-h") {
      options->help = true;
    } else if (arg == "--json") {
      options->json = true;
    } else if (arg == "--steps") {
      if (!ParseInteger(value, &integer) || integer < 0) {
        return "--steps '" + value + "' is not a non-negative integer";
      }
      options->steps = integer;
    } else if (arg == "--threads") {
      if (!ParseIntegerIn(value, 1, kMaxThreads, &options->threads)) {
        return "--threads '" + value + "' is not an integer from 1 to " +
               std::to_string(kMaxThreads);
      }
    } else if (arg == "--iterations") {
      if (!ParseIntegerIn(value, 1, kMaxCount, &options->solver.max_iterations)) {
        return "--iterations '" + value + "' is not a positive integer";
      }
    } else if (arg == "--tolerance") {
      if (!ParseNumber(value, &number) || number < 0) {
        return "--tolerance '" + value + "' is not a non-negative number";
      }
      options->solver.tolerance = number;
    } else if (arg == "--budget-us") {
      if (!ParseNumber(value, &number) || number < 0) {
        return "--budget-us '" + value + "' is not a non-negative number of microseconds";
      }
      options->solver.time_budget_us = number;
    } else if (arg == "--relaxation") {
      if (!ParseNumber(value, &number) || number <= 0 || number >= 2) {
        return "--relaxation '" + value + "' is not a number in (0, 2)";
      }
      options->solver.relaxation = number;
    } else if (arg == "--anderson") {
      if (!ParseIntegerIn(value, 0, 8, &options->solver.anderson_memory)) {
        return "--anderson '" + value + "' is not an integer from 0 to 8";
      }
    } else if (arg == "--delassus-refresh") {
      if (!ParseIntegerIn(value, 1, kMaxCount, &options->solver.delassus_refresh_steps)) {
        return "--delassus-refresh '" + value + "' is not a positive integer";
      }
    } else if (arg == "--response-after") {
      if (!ParseIntegerIn(value, 0, kMaxCount, &options->solver.response_after_iterations)) {
        return "--response-after '" + value + "' is not a non-negative integer";
      }
    } else if (arg == "--penalty-scaling") {
      if (!ParsePenaltyScalingName(value.c_str(), &options->solver.penalty_scaling)) {
        return "--penalty-scaling '" + value + "' is not one of delassus, pseudo-density";
      }
    } else if (arg == "--solver") {
      if (!ParseSolverName(value.c_str(), &options->solver.type)) {
        return "--solver '" + value + "' is not one of subadmm, pgs, admm-nosub, admm-nobody";
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      return "unknown option '" + arg + "'";
    } else if (options->scene.empty()) {
      options->scene = arg;
    } else {
      return "unexpected argument '" + arg + "' (one scene file only)";
    }
  }
  if (options->help) return "";
  if (options->scene.empty()) return "no scene file given";
  if (options->threads == 0) options->threads = tbb::info::default_concurrency();
  return "";
}

// Steps with zero controls until options.steps are done, the state diverges or the engine refuses
// the options.
RunStatistics Simulate(const Model& m, Data& d, const RunOptions& options) {
  StepOptions step_options;
  step_options.solver = options.solver;
  ProgressBar progress(options.steps, !options.json && isatty(STDERR_FILENO) != 0, "steps");
  RunStatistics stats;
  const Clock::time_point start = Clock::now();
  for (long long k = 0; k < options.steps; ++k) {
    stats.status = Step(m, d, step_options);
    if (stats.status == StepStatus::kInvalidOptions) break;  // nothing changed: not a step
    ++stats.steps;
    stats.sum_contacts += static_cast<double>(d.contact.size());
    stats.sum_warm_started_contacts += d.constraints.num_warm_started_contacts;
    stats.sum_islands += d.islands.num;
    stats.sum_iterations += d.solver_statistics.mean_iterations;
    stats.sum_contact_residual += d.solver_statistics.contact_residual;
    for (const Contact& contact : d.contact) {
      stats.max_penetration = std::max(stats.max_penetration, -contact.dist);
    }
    if (stats.status == StepStatus::kDiverged) break;
    progress.Update(stats.steps);
  }
  stats.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  progress.Clear();
  return stats;
}

void PrintJson(const RunOptions& options, const Model& m, const Data& d,
               const RunStatistics& stats) {
  JsonObjectWriter json;
  json.String("scene", options.scene);
  json.String("solver", SolverName(options.solver.type));
  json.Int("threads", options.threads);
  json.Int("steps", stats.steps);
  json.Int("dof", m.nv);
  json.Int("nq", m.nq);
  json.Int("subsystems", m.nsubsystem);
  json.Double("timestep", m.timestep);
  json.Int("max_iterations", options.solver.max_iterations);
  json.Double("tolerance", options.solver.tolerance);
  json.Double("time_budget_us", options.solver.time_budget_us);
  json.Double("relaxation", options.solver.relaxation);
  json.String("penalty_scaling", PenaltyScalingName(options.solver.penalty_scaling));
  json.Int("anderson_memory", options.solver.anderson_memory);
  json.Int("delassus_refresh_steps", options.solver.delassus_refresh_steps);
  json.Int("response_after_iterations", options.solver.response_after_iterations);
  json.Double("mean_contacts", stats.Mean(stats.sum_contacts));
  json.Double("mean_warm_started_contacts", stats.Mean(stats.sum_warm_started_contacts));
  json.Double("mean_islands", stats.Mean(stats.sum_islands));
  json.Double("mean_iterations", stats.Mean(stats.sum_iterations));
  json.Double("mean_contact_residual", stats.Mean(stats.sum_contact_residual));
  json.Double("max_penetration_m", stats.max_penetration);
  json.Double("wall_seconds", stats.wall_seconds);
  json.Double("steps_per_second", stats.StepsPerSecond());
  json.Double("time", d.time);
  const bool diverged = stats.status == StepStatus::kDiverged;
  json.Bool("diverged", diverged);
  if (diverged) {
    json.Int("diverged_step", stats.steps);
    json.Double("diverged_time", d.time);
  }
  json.String("state_hash", FormatStateHash(StateHash(m, d)));
  json.DoubleArray("qpos", d.qpos);
  std::cout << json.Finish() << "\n";
}

void PrintSummary(const RunOptions& options, const Model& m, const Data& d,
                  const RunStatistics& stats) {
  const double simulated = static_cast<double>(stats.steps) * m.timestep;
  std::printf("scene     %s: nq %d, nv %d, %d subsystem%s, timestep %g s\n", options.scene.c_str(),
              m.nq, m.nv, m.nsubsystem, m.nsubsystem == 1 ? "" : "s", m.timestep);
  std::printf("solver    %s: at most %d iterations, tolerance %g, ",
              SolverName(options.solver.type), options.solver.max_iterations,
              options.solver.tolerance);
  if (options.solver.time_budget_us > 0) {
    std::printf("budget %g us per step; %d threads\n", options.solver.time_budget_us,
                options.threads);
  } else {
    std::printf("no time budget; %d threads\n", options.threads);
  }
  if (options.solver.type != SolverType::kPgs) {
    std::printf("admm      relaxation %g, %s penalties, Anderson memory %d%s\n",
                options.solver.relaxation, PenaltyScalingName(options.solver.penalty_scaling),
                options.solver.anderson_memory,
                options.solver.type == SolverType::kSubAdmm ? "" : " (SubADMM only)");
  }
  std::printf("stepped   %lld steps (%g s simulated) in %.3f s: %.0f steps/s, %.2fx real time\n",
              stats.steps, simulated, stats.wall_seconds, stats.StepsPerSecond(),
              stats.wall_seconds > 0 ? simulated / stats.wall_seconds : 0.0);
  std::printf(
      "contacts  %.2f per step (%.2f warm-started) in %.2f islands on average; max penetration "
      "%.3f mm\n",
      stats.Mean(stats.sum_contacts), stats.Mean(stats.sum_warm_started_contacts),
      stats.Mean(stats.sum_islands), stats.max_penetration * 1e3);
  std::printf("solve     %.2f iterations per island, contact residual %.3g, on average\n",
              stats.Mean(stats.sum_iterations), stats.Mean(stats.sum_contact_residual));
  std::printf("final     t = %g s, state hash %s\n", d.time,
              FormatStateHash(StateHash(m, d)).c_str());
}

}  // namespace

std::string RunUsage() {
  const SolverOptions defaults;
  char text[4096];  // the text below is about 2.3 KB
  std::snprintf(
      text, sizeof(text),
      "  run SCENE [OPTIONS]    load an MJCF or URDF scene and step it in this process (no\n"
      "                         server) with zero controls; prints a summary, or one JSON object\n"
      "                         with --json. Exits 0 when done, 1 if the simulation diverged,\n"
      "                         2 for bad arguments, scenes or options\n"
      "    --steps N            steps to take [default %lld]\n"
      "    --solver NAME        contact solver: subadmm, pgs, admm-nosub or admm-nobody\n"
      "                         [default %s]\n"
      "    --threads T          worker threads [default: all hardware threads, %d here]\n"
      "    --iterations N       most solver iterations per island and step [default %d]\n"
      "    --tolerance X        an island stops once its residual is below X [default %g]\n"
      "    --budget-us U        wall-time budget of each step's solve in microseconds, 0 for\n"
      "                         none (results then depend on the machine) [default %g]\n"
      "    --relaxation A       ADMM over-relaxation in (0, 2); 1 is the paper's Algorithm 2\n"
      "                         [default %g]\n"
      "    --anderson M         SubADMM's Anderson acceleration with M history columns, 0 for\n"
      "                         none [default %d]\n"
      "    --penalty-scaling S  per-constraint ADMM penalties: delassus (each constraint's\n"
      "                         effective mass) or pseudo-density (the paper's single beta)\n"
      "                         [default %s]\n"
      "    --delassus-refresh N SubADMM: a constraint that persists keeps its delassus penalty's\n"
      "                         effective mass for N steps before it is computed again; 1\n"
      "                         computes it every step [default %d]\n"
      "    --response-after N   SubADMM: an island still iterating after N iterations moves its\n"
      "                         small trees to their constraint-space response (same iterates\n"
      "                         up to rounding); 0 for never [default %d]\n"
      "    --json               print one JSON object on stdout (keys in README.md); no\n"
      "                         progress bar (it is shown on stderr only when that is a\n"
      "                         terminal)\n",
      kDefaultSteps, SolverName(defaults.type), tbb::info::default_concurrency(),
      defaults.max_iterations, defaults.tolerance, defaults.time_budget_us, defaults.relaxation,
      defaults.anderson_memory, PenaltyScalingName(defaults.penalty_scaling),
      defaults.delassus_refresh_steps, defaults.response_after_iterations);
  return text;
}

int RunCommand(const std::vector<std::string>& args) {
  RunOptions options;
  if (const std::string error = ParseRunArgs(args, &options); !error.empty()) {
    return UsageError(error);
  }
  if (options.help) {
    std::cout << "Usage: alsim run SCENE [OPTIONS]\n\n" << RunUsage();
    return 0;
  }

  const ModelImport imported = ImportModelFromFile(options.scene);
  if (!imported) {
    std::cerr << "alsim: run: " << imported.error << "\n";
    return 2;
  }
  const Model& model = *imported.model;
  for (const std::string& warning : model.warnings) {
    std::cerr << "alsim: run: warning: " << options.scene << ": " << warning << "\n";
  }
  Data data(model);
  // Creating the solver here, as Step() would on its first call, keeps its setup out of the
  // timed loop. Every SolverType has a solver; a null one would mean a type the engine lacks.
  data.solver = MakeConstraintSolver(options.solver.type, model);
  if (data.solver == nullptr) {
    std::cerr << "alsim: run: the engine cannot create solver '" << SolverName(options.solver.type)
              << "'\n";
    return 2;
  }

  RunStatistics stats;
  RunWithThreads(options.threads, [&] { stats = Simulate(model, data, options); });

  if (stats.status == StepStatus::kInvalidOptions) {
    std::cerr << "alsim: run: the engine refused the step options (solver "
              << SolverName(options.solver.type) << ", " << options.solver.max_iterations
              << " iterations, tolerance " << options.solver.tolerance << ", budget "
              << options.solver.time_budget_us << " us)\n";
    return 2;
  }
  if (options.json) {
    PrintJson(options, model, data, stats);
  } else {
    PrintSummary(options, model, data, stats);
  }
  if (stats.status == StepStatus::kDiverged) {
    std::cerr << "alsim: run: the simulation diverged at step " << stats.steps
              << " (t = " << data.time << " s): the state is no longer finite\n";
    return 1;
  }
  return 0;
}

}  // namespace alsim::cli
