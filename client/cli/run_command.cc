#include "client/cli/run_command.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <string>

#include <oneapi/tbb/info.h>

#include "client/cli/json_writer.h"
#include "client/cli/progress_bar.h"
#include "client/cli/random_actions.h"
#include "engine/core/parallel.h"
#include "engine/data/data.h"
#include "engine/model/model_import.h"
#include "engine/sim/reset.h"
#include "engine/sim/state_hash.h"
#include "engine/sim/step.h"
#include "engine/sim/step_gradients.h"
#include "engine/solver/solver.h"
#include "engine/solver/solver_option_table.h"
#include "engine/solver/solver_options.h"

namespace alsim::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr long long kDefaultSteps = 1000;
// More threads than this is a typo, not a machine; TBB would still try to create them.
constexpr int kMaxThreads = 4096;

// The controls applied before each step.
enum class Actions {
  kZero,    // every ctrl stays as the reset left it: 0, or the keyframe's with --keyframe
  kRandom,  // every ctrl drawn uniformly in its ctrlrange ([-1, 1] if it has none), every step
};

const char* ActionsName(Actions actions) { return actions == Actions::kZero ? "zero" : "random"; }

struct RunOptions {
  std::string scene;
  long long steps = kDefaultSteps;
  int threads = 0;  // 0 until parsed: all hardware threads
  Actions actions = Actions::kZero;
  std::uint64_t seed = 0;  // of the random actions
  std::string keyframe;    // --keyframe: a keyframe's name or index; empty for the initial state
  SolverOptions solver;
  // --gradients: every step through StepGradients (engine/sim/step_gradients.h); the last step's
  // Jacobians are printed with --json.
  bool gradients = false;
  GradientRequest gradient_request;
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
  int split_steps = 0;
  double sum_iterations = 0;
  double sum_contact_residual = 0;
  double max_penetration = 0;  // m, >= 0
  // Sums of the solver's own figures (SolverStatistics::figures), by name in the solver's order.
  std::vector<std::pair<std::string, double>> sum_figures;
  StepStatus status = StepStatus::kOk;
  // With --gradients: the last step's Jacobians, the largest residual of any step's solve at its
  // v_hat, and the columns whose perturbed inputs changed the constraints, summed over steps.
  StepJacobians jacobians;
  double max_gradient_residual = 0;
  long long gradient_constraint_changes = 0;

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

// A seed: a decimal integer from 0 to 2^64 - 1 (no sign, no spaces).
bool ParseSeed(const std::string& text, std::uint64_t* value) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long parsed = std::strtoull(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *value = parsed;
  return true;
}

// Fills `options` from the arguments after "run"; returns an error message, empty on success.
// The solver's flags are the option table's (engine/solver/solver_option_table.h).
std::string ParseRunArgs(const std::vector<std::string>& args, RunOptions* options) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const SolverOptionSpec* solver_option =
        arg.size() > 2 && arg[0] == '-' ? FindSolverOption(arg) : nullptr;
    if (solver_option != nullptr && solver_option->flag != arg) solver_option = nullptr;
    const bool takes_value = arg == "--steps" || arg == "--threads" || arg == "--actions" ||
                             arg == "--seed" || arg == "--keyframe" || arg == "--gradients" ||
                             solver_option != nullptr;
    if (takes_value && i + 1 >= args.size()) return arg + " needs a value";
    const std::string value = takes_value ? args[++i] : "";
    long long integer = 0;
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
    } else if (arg == "--actions") {
      if (value == "zero") {
        options->actions = Actions::kZero;
      } else if (value == "random") {
        options->actions = Actions::kRandom;
      } else {
        return "--actions '" + value + "' is not one of zero or random";
      }
    } else if (arg == "--seed") {
      if (!ParseSeed(value, &options->seed)) {
        return "--seed '" + value + "' is not an integer from 0 to " +
               std::to_string(std::numeric_limits<std::uint64_t>::max());
      }
    } else if (arg == "--gradients") {
      // A comma-separated list: state, controls, and parameter names (checked against the scene
      // once it is loaded: StepGradients::Validate).
      GradientRequest& request = options->gradient_request;
      request = GradientRequest{};
      request.state = request.positions = request.controls = false;
      size_t start = 0;
      while (start <= value.size()) {
        size_t end = value.find(',', start);
        if (end == std::string::npos) end = value.size();
        const std::string item = value.substr(start, end - start);
        if (item == "state" || item == "velocities") {
          request.state = true;
          request.positions = request.positions || item == "state";
        } else if (item == "controls") {
          request.controls = true;
        } else if (!item.empty()) {
          request.parameters.push_back(item);
        } else {
          return "--gradients '" + value + "' has an empty item; give state, controls or " +
                 "parameters, separated by commas";
        }
        start = end + 1;
      }
      options->gradients = true;
    } else if (arg == "--keyframe") {
      // Checked against the scene's keyframes once it is loaded (FindKeyframe).
      if (value.empty()) return "--keyframe needs a keyframe's name or index";
      options->keyframe = value;
    } else if (solver_option != nullptr) {
      if (std::string error = SetSolverOption(*solver_option, value, &options->solver);
          !error.empty()) {
        return arg + ": " + error;
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

// With --actions random, sets every control of step `step` (instance 0 of the shared draw,
// client/cli/random_actions.h): a pure function of the seed, the step and the actuator, so the
// same for any thread count.
void SetRandomControls(const Model& m, std::uint64_t seed, long long step, Data& d) {
  for (int a = 0; a < m.nu; ++a) {
    const auto i = static_cast<std::size_t>(a);
    const ActionRange range = ActuatorActionRange(
        m.actuator_ctrl_limited[i], m.actuator_ctrl_lower[i], m.actuator_ctrl_upper[i]);
    d.ctrl[i] = Action(seed, 0, static_cast<std::uint64_t>(step), a, range.lower, range.upper);
  }
}

// Steps with the chosen controls (zero, or random before every step) until options.steps are done,
// the state diverges or the engine refuses the options.
RunStatistics Simulate(const Model& m, Data& d, const RunOptions& options,
                       StepGradients* gradients) {
  StepOptions step_options;
  step_options.solver = options.solver;
  ProgressBar progress(options.steps, !options.json && isatty(STDERR_FILENO) != 0, "steps");
  RunStatistics stats;
  const Clock::time_point start = Clock::now();
  for (long long k = 0; k < options.steps; ++k) {
    if (options.actions == Actions::kRandom) SetRandomControls(m, options.seed, k, d);
    stats.status =
        gradients != nullptr
            ? gradients->Step(m, d, step_options, options.gradient_request, &stats.jacobians)
            : Step(m, d, step_options);
    if (stats.status == StepStatus::kInvalidOptions) break;  // nothing changed: not a step
    ++stats.steps;
    if (gradients != nullptr) {
      stats.max_gradient_residual = std::max(stats.max_gradient_residual, stats.jacobians.residual);
      stats.gradient_constraint_changes += stats.jacobians.constraint_changes;
    }
    stats.sum_contacts += static_cast<double>(d.contact.size());
    stats.sum_warm_started_contacts += d.constraints.num_warm_started_contacts;
    stats.sum_islands += d.islands.num;
    stats.split_steps += d.solver_statistics.split;
    stats.sum_iterations += d.solver_statistics.mean_iterations;
    stats.sum_contact_residual += d.solver_statistics.contact_residual;
    for (int f = 0; f < d.solver_statistics.num_figures; ++f) {
      const SolverFigure& figure = d.solver_statistics.figures[f];
      auto sum = std::find_if(stats.sum_figures.begin(), stats.sum_figures.end(),
                              [&](const auto& entry) { return entry.first == figure.name; });
      if (sum == stats.sum_figures.end()) {
        stats.sum_figures.emplace_back(figure.name, 0.0);
        sum = stats.sum_figures.end() - 1;
      }
      sum->second += figure.value;
    }
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

// A row-major Jacobian as an array of its rows.
std::string MatrixJson(const std::vector<double>& values, int rows) {
  std::vector<std::string> lines;
  const size_t columns = rows > 0 ? values.size() / static_cast<size_t>(rows) : 0;
  for (int i = 0; i < rows; ++i) {
    JsonObjectWriter row;
    row.DoubleArray("r",
                    std::vector<double>(values.begin() + static_cast<long>(i * columns),
                                        values.begin() + static_cast<long>((i + 1) * columns)));
    const std::string text = row.Finish();  // {"r":[...]}
    lines.push_back(text.substr(5, text.size() - 6));
  }
  JsonObjectWriter wrapper;
  wrapper.RawArray("m", lines);
  const std::string text = wrapper.Finish();
  return text.substr(5, text.size() - 6);
}

// --gradients' object: the request, the last step's Jacobians by name, and the figures of all
// steps (docs/cli.md).
std::string GradientsJson(const RunOptions& options, const RunStatistics& stats) {
  const StepJacobians& j = stats.jacobians;
  JsonObjectWriter json;
  json.Bool("velocities", options.gradient_request.state);
  json.Bool("positions", options.gradient_request.state && options.gradient_request.positions);
  json.Bool("controls", options.gradient_request.controls);
  json.StringArray("parameters", options.gradient_request.parameters);
  json.Double("max_residual", stats.max_gradient_residual);
  json.Int("constraint_changes", stats.gradient_constraint_changes);
  json.Double("last_residual", j.residual);
  const std::pair<const char*, const std::vector<double>*> matrices[] = {
      {"dv_dv", &j.dv_dv}, {"dv_dq", &j.dv_dq}, {"dq_dv", &j.dq_dv}, {"dq_dq", &j.dq_dq},
      {"dv_du", &j.dv_du}, {"dq_du", &j.dq_du}, {"dv_dp", &j.dv_dp}, {"dq_dp", &j.dq_dp}};
  for (const auto& [name, values] : matrices) {
    if (!values->empty()) json.Raw(name, MatrixJson(*values, j.nv));
  }
  return json.Finish();
}

void PrintJson(const RunOptions& options, const Model& m, const Data& d,
               const RunStatistics& stats) {
  JsonObjectWriter json;
  json.String("scene", options.scene);
  json.String("solver", SolverName(options.solver.type));
  json.Int("threads", options.threads);
  json.String("actions", ActionsName(options.actions));
  json.UInt("seed", options.seed);
  json.Int("steps", stats.steps);
  json.Int("dof", m.nv);
  json.Int("nq", m.nq);
  json.Int("subsystems", m.nsubsystem);
  json.Double("timestep", m.timestep);
  for (const SolverOptionSpec& spec : SolverOptionTable()) {
    if (std::string_view(spec.name) == "solver") continue;  // written above
    const std::string value = SolverOptionValue(spec, options.solver);
    switch (spec.kind) {
      case SolverOptionKind::kInteger:
        json.Int(spec.name, std::strtoll(value.c_str(), nullptr, 10));
        break;
      case SolverOptionKind::kNumber:
        json.Double(spec.name, std::strtod(value.c_str(), nullptr));
        break;
      case SolverOptionKind::kBoolean:
        json.Bool(spec.name, value == "on");
        break;
      case SolverOptionKind::kChoice:
        json.String(spec.name, value);
        break;
    }
  }
  json.Double("mean_contacts", stats.Mean(stats.sum_contacts));
  json.Double("mean_warm_started_contacts", stats.Mean(stats.sum_warm_started_contacts));
  json.Double("mean_islands", stats.Mean(stats.sum_islands));
  json.Double("mean_iterations", stats.Mean(stats.sum_iterations));
  json.Double("mean_contact_residual", stats.Mean(stats.sum_contact_residual));
  json.Double("max_penetration_m", stats.max_penetration);
  json.Int("split_steps", stats.split_steps);
  {
    JsonObjectWriter figures;
    for (const auto& [name, sum] : stats.sum_figures) figures.Double(name, stats.Mean(sum));
    json.Raw("mean_solver_figures", figures.Finish());
  }
  json.Double("wall_seconds", stats.wall_seconds);
  json.Double("steps_per_second", stats.StepsPerSecond());
  json.Double("time", d.time);
  const bool diverged = stats.status == StepStatus::kDiverged;
  json.Bool("diverged", diverged);
  if (diverged) {
    json.Int("diverged_step", stats.steps);
    json.Double("diverged_time", d.time);
  }
  if (options.gradients) json.Raw("gradients", GradientsJson(options, stats));
  json.String("state_hash", FormatStateHash(StateHash(m, d)));
  json.DoubleArray("qpos", d.qpos);
  json.DoubleArray("ctrl", d.ctrl);  // the controls of the last step
  std::cout << json.Finish() << "\n";
}

void PrintSummary(const RunOptions& options, const Model& m, const Data& d,
                  const RunStatistics& stats) {
  const double simulated = static_cast<double>(stats.steps) * m.timestep;
  std::printf("scene     %s: nq %d, nv %d, %d subsystem%s, timestep %g s\n", options.scene.c_str(),
              m.nq, m.nv, m.nsubsystem, m.nsubsystem == 1 ? "" : "s", m.timestep);
  int key = -1;
  if (!options.keyframe.empty() && FindKeyframe(m, options.keyframe, &key).empty()) {
    const std::string& name = m.key_name[static_cast<std::size_t>(key)];
    std::printf("start     keyframe %d%s\n", key,
                name.empty() ? " (unnamed)" : (" '" + name + "'").c_str());
  }
  std::printf("solver    %s: at most %d iterations, tolerance %g, ",
              SolverName(options.solver.type), options.solver.max_iterations,
              options.solver.tolerance);
  if (options.solver.time_budget_us > 0) {
    std::printf("budget %g us per step; %d threads\n", options.solver.time_budget_us,
                options.threads);
  } else {
    std::printf("no time budget; %d threads\n", options.threads);
  }
  // The solver's own options (the table's rows that name it).
  std::string own;
  const std::string name = SolverName(options.solver.type);
  for (const SolverOptionSpec& spec : SolverOptionTable()) {
    const std::string readers = std::string(", ") + spec.solvers + ",";
    if (readers.find(", " + name + ",") == std::string::npos) continue;
    own += (own.empty() ? "" : ", ") + std::string(spec.name) + " " +
           SolverOptionValue(spec, options.solver);
  }
  if (!own.empty()) std::printf("%-9s %s\n", name.c_str(), own.c_str());
  if (options.actions == Actions::kRandom) {
    std::printf("controls  random in each actuator's ctrlrange, redrawn every step; seed %llu\n",
                static_cast<unsigned long long>(options.seed));
  } else if (!options.keyframe.empty()) {
    std::printf("controls  the keyframe's, held\n");
  } else {
    std::printf("controls  zero\n");
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
  if (!stats.sum_figures.empty()) {
    std::printf("figures  ");
    for (size_t f = 0; f < stats.sum_figures.size(); ++f) {
      std::printf("%s %s %.4g", f == 0 ? "" : ",", stats.sum_figures[f].first.c_str(),
                  stats.Mean(stats.sum_figures[f].second));
    }
    std::printf(" per step, on average\n");
  }
  if (options.gradients) {
    const GradientRequest& request = options.gradient_request;
    std::printf(
        "gradients %s%s%zu parameter%s every step; largest residual at v_hat %.3g; %lld "
        "columns crossed a change of the constraints\n",
        request.state ? "dv/dv, dv/dq, " : "", request.controls ? "dv/du, " : "",
        request.parameters.size(), request.parameters.size() == 1 ? "" : "s",
        stats.max_gradient_residual, stats.gradient_constraint_changes);
  }
  std::printf("final     t = %g s, state hash %s\n", d.time,
              FormatStateHash(StateHash(m, d)).c_str());
}

// "    --flag VALUE" padded to the help's description column, then `text` wrapped to the width.
void AppendHelpEntry(const std::string& head, const std::string& text, std::string* out) {
  constexpr size_t kColumn = 25, kWidth = 94;
  std::string line = head;
  if (line.size() + 1 > kColumn) {
    *out += line + "\n";
    line.clear();
  }
  line.resize(kColumn, ' ');
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (line.size() > kColumn && line.size() + 1 + word.size() > kWidth) {
      *out += line + "\n";
      line.assign(kColumn, ' ');
    }
    if (line.size() > kColumn) line += ' ';
    line += word;
    start = end + 1;
  }
  *out += line + "\n";
}

}  // namespace

std::string RunUsage() {
  std::string text =
      "  run SCENE [OPTIONS]    load an MJCF or URDF scene and step it in this process (no\n"
      "                         server) with zero or random controls; prints a summary, or one\n"
      "                         JSON object with --json. Exits 0 when done, 1 if the simulation\n"
      "                         diverged, 2 for bad arguments, scenes or options\n";
  AppendHelpEntry("    --steps N", "steps to take [default " + std::to_string(kDefaultSteps) + "]",
                  &text);
  AppendHelpEntry("    --threads T",
                  "worker threads [default: all hardware threads, " +
                      std::to_string(tbb::info::default_concurrency()) + " here]",
                  &text);
  AppendHelpEntry("    --actions A",
                  "the controls: zero, or random: before every step each actuator's ctrl drawn "
                  "uniformly in its ctrlrange ([-1, 1] without one), a pure function of (seed, "
                  "step, actuator), so the same for any --threads; one of zero or random "
                  "[default zero; with --keyframe, zero holds the keyframe's ctrl]",
                  &text);
  AppendHelpEntry("    --seed S", "seed of --actions random; 0 to 2^64 - 1 [default 0]", &text);
  AppendHelpEntry("    --keyframe K",
                  "start from the scene's keyframe K (MJCF <key>), named or numbered from 0 (a "
                  "name wins over an index): its time, qpos, qvel and ctrl, as MuJoCo's "
                  "mj_resetDataKeyframe sets them [default: the model's initial state]",
                  &text);
  // The solver options, from the table: doc, range, who reads it, default, JSON key (README.md's
  // rows are made from this text by scripts/solver-flags-table.py).
  for (const SolverOptionSpec& spec : SolverOptionTable()) {
    // "range (0, 2)", "range 0 to 8", "at least 1", "one of a, b or c", "on or off"
    const std::string range = SolverOptionRange(spec);
    const bool bounded =
        range[0] == '(' || range[0] == '[' || range.find(" to ") != std::string::npos;
    std::string doc = std::string(spec.doc) + "; " +
                      (spec.kind == SolverOptionKind::kChoice ? "one of "
                       : bounded                              ? "range "
                                                              : "") +
                      range;
    if (std::string_view(spec.solvers) != "all") doc += "; read by " + std::string(spec.solvers);
    doc += " [default " + SolverOptionDefault(spec) + "] (" + spec.name + ")";
    AppendHelpEntry("    " + std::string(spec.flag) + " " + spec.metavar, doc, &text);
  }
  AppendHelpEntry("    --gradients LIST",
                  "step through StepGradients (the Jacobians of each step by the implicit "
                  "function theorem, docs/engine.md): a comma-separated list of velocities "
                  "(d/dv), state (d/dv and d/dq), controls (d/du) and model parameters (" +
                      std::string(ParameterNames()) +
                      "); --json prints the last step's under gradients; solvers icf-lagged, "
                      "icf-similar, sap [default off]",
                  &text);
  AppendHelpEntry("    --json",
                  "print one JSON object on stdout (keys in README.md); no progress bar (it is "
                  "shown on stderr only when that is a terminal)",
                  &text);
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
  if (!options.keyframe.empty()) {
    int key = -1;
    if (const std::string error = FindKeyframe(model, options.keyframe, &key); !error.empty()) {
      std::cerr << "alsim: run: --keyframe: " << options.scene << ": " << error << "\n";
      return 2;
    }
    ResetDataKeyframe(model, &data, key);  // a key FindKeyframe gave is in range
  }
  // Creating the solver here, as Step() would on its first call, keeps its setup out of the
  // timed loop. Every SolverType has a solver; a null one would mean a type the engine lacks.
  if (!EnsureSolver(model, data, options.solver.type)) {
    std::cerr << "alsim: run: the engine cannot create solver '" << SolverName(options.solver.type)
              << "'\n";
    return 2;
  }
  if (const std::string refused = SolverRefusesModel(model, options.solver.type);
      !refused.empty()) {
    std::cerr << "alsim: run: " << refused << "\n";
    return 2;
  }

  std::unique_ptr<StepGradients> gradients;
  if (options.gradients) {
    StepOptions step_options;
    step_options.solver = options.solver;
    if (const std::string error =
            StepGradients::Validate(model, step_options, options.gradient_request);
        !error.empty()) {
      std::cerr << "alsim: run: --gradients: " << error << "\n";
      return 2;
    }
    gradients = std::make_unique<StepGradients>(model, options.solver.type);
  }

  RunStatistics stats;
  RunWithThreads(options.threads, [&] { stats = Simulate(model, data, options, gradients.get()); });

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
