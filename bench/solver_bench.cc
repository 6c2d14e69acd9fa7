// Side-by-side solver benchmarks, printed as the Markdown tables of BENCHMARKS.md:
//   table3   Table III of the SubADMM paper: ms per solve for SubADMM, No Sub and No Body at a
//            fixed 100 iterations on the quadruped drops, and the ratios;
//   mujoco   alsim (SubADMM, default options) against MuJoCo 2.2.2's mj_step on MuJoCo's own
//            humanoid scenes, in one run: steps/s at 1 and 2 threads, contacts, penetration,
//            the host's cross-core latency before each 2-thread run (cross_core_latency.h),
//            which the 2-thread ratio of small-island scenes follows, and alsim's 2-thread
//            speed-up beside what two independent 1-thread runs at once get from the host (the
//            ceiling of any 2-thread speed-up at that moment);
//   robots   the mesh-heavy scenes (scenes/mesh_humanoid.xml, scenes/mesh_rocks.xml, or the
//            --model files) against MuJoCo 2.2.2 at 1 thread: steps/s, contacts, max penetration
//            and the final pose difference (body origins after the same number of steps),
//            then the same runs by phase (quarters of the steps): time per step, solve time,
//            iterations and contacts of each engine;
//   random   the load of an RL rollout: alsim (--solver NAME, default the engine's) and MuJoCo
//            2.2.2's mj_step, each stepping --instances instances (default 8) one after another
//            in each step on 1 thread, under the same random controls: before every step each
//            actuator's ctrl is drawn uniformly in its ctrlrange ([-1, 1] without one) by
//            client/cli/random_actions.h's Action(seed, instance, step, actuator), the draw of
//            `alsim run --actions random` and of cluster_bench. On the --model files (default
//            MuJoCo's humanoid/humanoid.xml) for --steps (default 1500), the engines alternating
//            --repeats times: instance-steps/s of each, the ratio, and the mean solver
//            iterations per step of each (alsim: SolverStatistics::mean_iterations, the mean over
//            a step's islands; MuJoCo: mjData::solver_iter), and each engine's deepest and mean
//            penetration over every penetrating contact of every step.
// Usage: solver_bench [table3|mujoco|robots|solvers|random|all] [--scenes DIR] [--repeats N]
//                     [--model FILE [--model FILE ...]] [--steps N] [--solvers A,B,...]
//                     [--solver NAME] [--instances N] [--seed S]
//   --scenes DIR   where Table III's quadruped_drop_8.xml and quadruped_drop_27.xml are
//   --model FILE   compare with MuJoCo on this MJCF file instead of the three humanoid scenes
//                  (repeatable; MuJoCo must load it too)
//   --steps N      steps per run for the --model files (default 1000; random: 1500)
//   --solver NAME  random: alsim's solver (default: the engine's default)
//   --instances N  random: instances per engine (default 8)
//   --seed S       random: the actions' seed (default 0)
// Timings are medians over N repeats (default 3) of the same trajectory, so noise from the
// shared machine shows as spread, not as bias in one direction; the ratios (Table III's and the
// MuJoCo ones) are medians of the per-repeat ratios, with their range.
#include <mujoco/mujoco.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/cross_core_latency.h"
#include "client/cli/random_actions.h"
#include "engine/core/parallel.h"
#include "engine/dynamics/kinematics.h"
#include "engine/model/model_import.h"
#include "engine/sim/state_snapshot.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"
#include "engine/solver/solver_options.h"

namespace alsim {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::shared_ptr<const Model> Load(const std::string& path) {
  const ModelImport imported = ImportModelFromFile(path);
  if (!imported) {
    std::fprintf(stderr, "solver_bench: %s\n", imported.error.c_str());
    std::exit(1);
  }
  return imported.model;
}

// ---- Table III -----------------------------------------------------------------------------

struct SolveSample {
  bool ok = false;
  double solve_ms = 0;  // mean solver time per step over the measured window
  double residual = 0;  // mean Sec. VII residual over the window
  double contacts = 0;  // mean contacts
};

// Lands the robots (1 s with default SubADMM), then measures `window` steps with `type` at a
// fixed 100 iterations (tolerance 0, so every island runs all of them, as in the paper). No
// Anderson acceleration: only SubADMM has it, and Table III compares the splittings. The timed
// steps skip the Sec. VII residual (computed inside the solve's island tasks); with
// `with_residual` the window runs a second time from the same state for it (the same trajectory:
// the residual is only a diagnostic).
SolveSample MeasureSolverInArena(const Model& model, SolverType type, int window,
                                 bool with_residual) {
  Data d(model);
  while (d.time < 1.0) Step(model, d);
  StepOptions options;
  options.solver.type = type;
  options.solver.max_iterations = 100;
  options.solver.tolerance = 0;
  options.solver.subadmm.anderson_memory = 0;
  options.solver.compute_residual = false;
  SolveSample sample;
  if (Step(model, d, options) != StepStatus::kOk) return sample;  // warm-up: creates the solver
  const std::string landed = SaveStateSnapshot(model, d);
  for (int n = 0; n < window; ++n) {
    if (Step(model, d, options) != StepStatus::kOk) return sample;
    sample.solve_ms += 1e3 * d.solver_statistics.solve_seconds;
    sample.contacts += d.solver_statistics.contacts;
  }
  if (with_residual) {
    options.solver.compute_residual = true;
    std::string error;
    if (!RestoreStateSnapshot(model, landed, d, &error)) return sample;
    for (int n = 0; n < window; ++n) {
      if (Step(model, d, options) != StepStatus::kOk) return sample;
      sample.residual += d.solver_statistics.contact_residual;
    }
  }
  sample.ok = true;
  sample.solve_ms /= window;
  sample.residual /= window;
  sample.contacts /= window;
  return sample;
}

SolveSample MeasureSolver(const Model& model, SolverType type, int threads, int window,
                          bool with_residual) {
  SolveSample sample;
  RunWithThreads(threads,
                 [&] { sample = MeasureSolverInArena(model, type, window, with_residual); });
  return sample;
}

// "median (min-max)" of `values` in `format` (three doubles), "-" when there are none.
std::string Spread(const std::vector<double>& values, const char* format) {
  if (values.empty()) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), format, Median(values),
                *std::min_element(values.begin(), values.end()),
                *std::max_element(values.begin(), values.end()));
  return text;
}

// "1.28x (1.10-1.45)": the median of per-repeat ratios and their range.
std::string RatioSpread(const std::vector<double>& ratios) {
  return Spread(ratios, "%.2fx (%.2f-%.2f)");
}

// "26 (21-29)": the cross-core latencies in ns, "-" where they could not be measured.
std::string LatencySpread(const std::vector<double>& ns) { return Spread(ns, "%.0f (%.0f-%.0f)"); }

// Each repeat measures the three solvers one after another, and the ratios are the medians of
// the per-repeat ratios: the machine's drift over a run lands on all three alike (measured in
// blocks of repeats per solver, No Sub / SubADMM with 27 robots moved between 3.1x and 4.3x
// from run to run).
void TableThree(const std::string& scenes, int repeats, int threads) {
  std::printf("\n### Table III: ms per solve at 100 iterations, %d thread(s)\n\n", threads);
  std::printf(
      "| scene | dof | contacts | SubADMM ms | No Sub ms | No Body ms | "
      "No Sub / SubADMM | No Body / SubADMM | residual SubADMM / No Sub / No Body |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  const SolverType types[] = {SolverType::kSubAdmm, SolverType::kAdmmNoSub,
                              SolverType::kAdmmNoBody};
  for (const char* scene : {"quadruped_drop_8.xml", "quadruped_drop_27.xml"}) {
    const auto model = Load(scenes + "/" + scene);
    double ms[3] = {0, 0, 0}, residual[3] = {0, 0, 0}, contacts = 0;
    bool ok[3] = {true, true, true};
    std::vector<double> times[3], over_subadmm[3];
    for (int r = 0; r < repeats; ++r) {
      double repeat_ms[3] = {0, 0, 0};
      for (int t = 0; t < 3; ++t) {
        const SolveSample sample = MeasureSolver(*model, types[t], threads, 240, r == 0);
        ok[t] = ok[t] && sample.ok;
        times[t].push_back(sample.solve_ms);
        repeat_ms[t] = sample.solve_ms;
        if (r == 0) residual[t] = sample.residual;
        contacts = sample.contacts;
      }
      for (int t = 1; t < 3; ++t) over_subadmm[t].push_back(repeat_ms[t] / repeat_ms[0]);
    }
    for (int t = 0; t < 3; ++t) ms[t] = Median(times[t]);
    auto cell = [&](int t) { return ok[t] ? ms[t] : NAN; };
    auto ratio = [&](int t) { return ok[0] && ok[t] ? RatioSpread(over_subadmm[t]) : "-"; };
    std::printf("| %s | %d | %.0f | %.3f | %.3f | %.3f | %s | %s | %.1f / %.1f / %.1f |\n", scene,
                model->nv, contacts, cell(0), cell(1), cell(2), ratio(1).c_str(), ratio(2).c_str(),
                -std::log10(residual[0]), -std::log10(residual[1]), -std::log10(residual[2]));
    std::fflush(stdout);
  }
}

// ---- against MuJoCo ------------------------------------------------------------------------

struct RunSample {
  double steps_per_second = 0;
  double mean_contacts = 0;
  double max_penetration = 0;
  double mean_residual = 0;
};

RunSample RunAlsimInArena(const Model& model, int steps, const StepOptions& options,
                          std::vector<Vec3>* final_xpos = nullptr) {
  Data d(model);
  RunSample sample;
  const auto start = Clock::now();
  for (int n = 0; n < steps; ++n) {
    Step(model, d, options);
    sample.mean_contacts += d.solver_statistics.contacts;
    sample.mean_residual += d.solver_statistics.contact_residual;
    for (const Contact& c : d.contact)
      sample.max_penetration = std::max(sample.max_penetration, -c.dist);
  }
  sample.steps_per_second = steps / Seconds(start);
  sample.mean_contacts /= steps;
  sample.mean_residual /= steps;
  if (final_xpos != nullptr) {
    Kinematics(model, d);  // Step leaves the body poses of the step's start
    *final_xpos = d.xpos;
  }
  return sample;
}

RunSample RunAlsim(const Model& model, int threads, int steps,
                   const StepOptions& options = StepOptions{}) {
  RunSample sample;
  RunWithThreads(threads, [&] { sample = RunAlsimInArena(model, steps, options); });
  return sample;
}

// Combined steps/s of two 1-thread runs of the scene at once, each with its own Data on its own
// thread. Over a lone 1-thread run's steps/s, this is what the host's two vCPUs give work that
// shares nothing at that moment: the ceiling of any 2-thread speed-up. It is about 2 when the two
// vCPUs sit on two idle cores, and near 1 when they share one core or the host is busy
// (BENCHMARKS.md, "A third placement, and the ceiling the host sets for 2 threads").
double IndependentPairStepsPerSecond(const Model& model, int steps) {
  const auto start = Clock::now();
  std::thread other([&] { RunAlsim(model, 1, steps); });
  RunAlsim(model, 1, steps);
  other.join();
  return 2.0 * steps / Seconds(start);
}

// Algorithm 2 as the paper has it: no over-relaxation, one beta for all contacts, no Anderson
// acceleration, and the tolerance alsim used before (BENCHMARKS.md compares it with the
// defaults).
StepOptions PaperSettings() {
  StepOptions options;
  options.solver.admm.relaxation = 1.0;
  options.solver.admm.penalty_scaling = PenaltyScaling::kPseudoDensity;
  options.solver.tolerance = 1e-8;
  options.solver.subadmm.anderson_memory = 0;
  return options;
}

// MuJoCo's model of `path`, or exit with MuJoCo's error.
mjModel* LoadMujoco(const std::string& path) {
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof(error));
  if (m == nullptr) {
    std::fprintf(stderr, "solver_bench: MuJoCo: %s\n", error);
    std::exit(1);
  }
  return m;
}

RunSample RunMujoco(const std::string& path, int steps, std::vector<Vec3>* final_xpos = nullptr) {
  mjModel* m = LoadMujoco(path);
  mjData* d = mj_makeData(m);
  RunSample sample;
  const auto start = Clock::now();
  for (int n = 0; n < steps; ++n) {
    mj_step(m, d);
    sample.mean_contacts += d->ncon;
    for (int i = 0; i < d->ncon; ++i) {
      sample.max_penetration = std::max(sample.max_penetration, -d->contact[i].dist);
    }
  }
  sample.steps_per_second = steps / Seconds(start);
  sample.mean_contacts /= steps;
  if (final_xpos != nullptr) {
    mj_kinematics(m, d);  // mj_step leaves the body poses of the step's start
    final_xpos->resize(m->nbody);
    for (int b = 0; b < m->nbody; ++b) {
      (*final_xpos)[b] = Vec3(d->xpos[3 * b], d->xpos[3 * b + 1], d->xpos[3 * b + 2]);
    }
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return sample;
}

struct MujocoCase {
  std::string file;  // as printed; under /usr/share/mujoco/model/ unless absolute or ./-relative
  int steps;
};

// MuJoCo's sample humanoids, with the steps BENCHMARKS.md uses.
std::vector<MujocoCase> HumanoidCases() {
  return {{"humanoid/humanoid.xml", 2000},
          {"humanoid/22_humanoids.xml", 1000},
          {"humanoid100/humanoid100.xml", 500}};
}

std::string MujocoCasePath(const std::string& file) {
  if (!file.empty() && (file[0] == '/' || file[0] == '.')) return file;
  return "/usr/share/mujoco/model/" + file;
}

void AgainstMujoco(const std::vector<MujocoCase>& cases, int repeats) {
  // Every scene is loaded by both sides before the table starts, so a bad file fails at once.
  std::vector<std::shared_ptr<const Model>> models;
  for (const MujocoCase& c : cases) {
    const std::string path = MujocoCasePath(c.file);
    models.push_back(Load(path));
    mj_deleteModel(LoadMujoco(path));
  }
  std::printf("\n### alsim (SubADMM) vs MuJoCo 2.2.2 mj_step, same scenes, same initial state\n\n");
  std::printf(
      "| scene | steps | MuJoCo steps/s | alsim 1 thread | alsim 2 threads | "
      "alsim/MuJoCo 1t | alsim/MuJoCo 2t | contacts MuJoCo / alsim | "
      "max penetration mm MuJoCo / alsim | alsim residual | paper settings 1t | "
      "paper/MuJoCo 1t | paper residual | cross-core ns | alsim 2t/1t | "
      "independent 2 runs/1 run |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < cases.size(); ++k) {
    const MujocoCase& c = cases[k];
    const std::string path = MujocoCasePath(c.file);
    const Model* model = models[k].get();
    std::vector<double> mj, one, two, paper, one_ratio, two_ratio, paper_ratio, cross_core, speedup,
        host_speedup;
    RunSample mj_sample, one_sample, two_sample, paper_sample;
    for (int r = 0; r < repeats; ++r) {  // interleaved, so drifts in machine load hit all three
      mj_sample = RunMujoco(path, c.steps);
      one_sample = RunAlsim(*model, 1, c.steps);
      // The host's placement of the two vCPUs, just before the 2-thread run (cross_core_latency.h).
      const CrossCoreLatency latency = MeasureCrossCoreLatency();
      if (latency.measured) cross_core.push_back(latency.other_core_ns);
      two_sample = RunAlsim(*model, 2, c.steps);
      const double pair_steps_per_second = IndependentPairStepsPerSecond(*model, c.steps);
      paper_sample = RunAlsim(*model, 1, c.steps, PaperSettings());
      paper.push_back(paper_sample.steps_per_second);
      mj.push_back(mj_sample.steps_per_second);
      one.push_back(one_sample.steps_per_second);
      two.push_back(two_sample.steps_per_second);
      // Ratios within one repeat: its runs follow each other, so a slow phase of the shared
      // machine tends to hit both sides of the ratio.
      one_ratio.push_back(one.back() / mj.back());
      two_ratio.push_back(two.back() / mj.back());
      paper_ratio.push_back(paper.back() / mj.back());
      speedup.push_back(two.back() / one.back());
      host_speedup.push_back(pair_steps_per_second / one.back());
    }
    std::printf(
        "| %s | %d | %.0f | %.0f | %.0f | %s | %s | %.1f / %.1f | %.2f / %.3f | "
        "%.1e | %.0f | %s | %.1e | %s | %s | %s |\n",
        c.file.c_str(), c.steps, Median(mj), Median(one), Median(two),
        RatioSpread(one_ratio).c_str(), RatioSpread(two_ratio).c_str(), mj_sample.mean_contacts,
        one_sample.mean_contacts, 1e3 * mj_sample.max_penetration, 1e3 * one_sample.max_penetration,
        one_sample.mean_residual, Median(paper), RatioSpread(paper_ratio).c_str(),
        paper_sample.mean_residual, LatencySpread(cross_core).c_str(), RatioSpread(speedup).c_str(),
        RatioSpread(host_speedup).c_str());
    std::fflush(stdout);
  }
}

// The mesh-heavy scenes of issue 32: a robot whose links are meshes, and mesh rocks.
std::vector<MujocoCase> RobotCases(const std::string& scenes) {
  return {{scenes + "/mesh_humanoid.xml", 1200}, {scenes + "/mesh_rocks.xml", 1200}};
}

// alsim (SubADMM, default options, 1 thread) against mj_step, interleaved per repeat. The final
// pose difference is the largest distance between the same body's origin in the two engines
// after the same steps: both start from the same state, but contact models differ (MuJoCo's soft
// contacts sink and slide more), so for scenes that collapse it shows how alike the outcome is,
// not an error.
void RobotsAgainstMujoco(const std::vector<MujocoCase>& cases, int repeats) {
  std::vector<std::shared_ptr<const Model>> models;
  for (const MujocoCase& c : cases) {
    const std::string path = MujocoCasePath(c.file);
    models.push_back(Load(path));
    mj_deleteModel(LoadMujoco(path));
  }
  std::printf("\n### Mesh-heavy scenes: alsim (SubADMM, 1 thread) vs MuJoCo 2.2.2 mj_step\n\n");
  std::printf(
      "| scene | mesh vertices | steps | MuJoCo steps/s | alsim steps/s | alsim/MuJoCo | "
      "contacts MuJoCo / alsim | max penetration mm MuJoCo / alsim | final pose difference mm "
      "(largest body) | root height m MuJoCo / alsim |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < cases.size(); ++k) {
    const MujocoCase& c = cases[k];
    const std::string path = MujocoCasePath(c.file);
    const Model& model = *models[k];
    std::vector<double> mj, one, ratio;
    RunSample mj_sample, one_sample;
    std::vector<Vec3> mj_xpos, alsim_xpos;
    for (int r = 0; r < repeats; ++r) {
      mj_sample = RunMujoco(path, c.steps, &mj_xpos);
      RunWithThreads(
          1, [&] { one_sample = RunAlsimInArena(model, c.steps, StepOptions{}, &alsim_xpos); });
      mj.push_back(mj_sample.steps_per_second);
      one.push_back(one_sample.steps_per_second);
      ratio.push_back(one.back() / mj.back());
    }
    double pose_difference = 0;
    for (int b = 1; b < model.nbody; ++b) {
      pose_difference = std::max(pose_difference, (mj_xpos[b] - alsim_xpos[b]).norm());
    }
    const int root = model.nbody > 1 ? 1 : 0;
    const std::string name = c.file.substr(c.file.find_last_of('/') + 1);  // npos + 1 == 0
    std::printf(
        "| %s | %d | %d | %.0f | %.0f | %s | %.1f / %.1f | %.2f / %.3f | %.1f | %.3f / %.3f |\n",
        name.c_str(), static_cast<int>(model.mesh_vert.size()), c.steps, Median(mj), Median(one),
        RatioSpread(ratio).c_str(), mj_sample.mean_contacts, one_sample.mean_contacts,
        1e3 * mj_sample.max_penetration, 1e3 * one_sample.max_penetration, 1e3 * pose_difference,
        mj_xpos[root].z(), alsim_xpos[root].z());
    std::fflush(stdout);
  }
}

// The same runs cut into kPhases windows of steps: each engine's time per step, solver
// iterations and contacts per window, so that the table shows where in the scene's course
// (falling, standing, collapsing, resting) the time goes. The two engines step in turn, each on
// its own state, so a slow phase of the shared machine hits both; the best of `repeats`.
void RobotPhases(const std::vector<MujocoCase>& cases, int repeats) {
  constexpr int kPhases = 4;
  std::printf("\n### By phase: microseconds per step, best of %d (alsim: SubADMM, 1 thread)\n\n",
              repeats);
  std::printf(
      "| scene | steps | alsim us | alsim solve us | alsim iterations | alsim contacts | MuJoCo us "
      "| MuJoCo iterations | MuJoCo contacts | alsim/MuJoCo time |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const MujocoCase& c : cases) {
    const std::string path = MujocoCasePath(c.file);
    const std::shared_ptr<const Model> model = Load(path);
    mjModel* mj_model = LoadMujoco(path);
    const int window = c.steps / kPhases;
    struct Phase {
      double alsim = 1e30, solve = 0, iterations = 0, contacts = 0;
      double mujoco = 1e30, mj_iterations = 0, mj_contacts = 0;
    };
    std::vector<Phase> phases(kPhases);
    RunWithThreads(1, [&] {
      for (int r = 0; r < repeats; ++r) {
        Data d(*model);
        mjData* md = mj_makeData(mj_model);
        for (Phase& phase : phases) {
          double alsim = 0, mujoco = 0, solve = 0, iterations = 0, contacts = 0;
          double mj_iterations = 0, mj_contacts = 0;
          for (int n = 0; n < window; ++n) {
            const auto start = Clock::now();
            Step(*model, d);
            alsim += Seconds(start);
            solve += d.solver_statistics.solve_seconds;
            iterations += d.solver_statistics.mean_iterations;
            contacts += d.solver_statistics.contacts;
            const auto mj_start = Clock::now();
            mj_step(mj_model, md);
            mujoco += Seconds(mj_start);
            mj_iterations += md->solver_iter;
            mj_contacts += md->ncon;
          }
          if (alsim < phase.alsim) {
            phase.alsim = alsim;
            phase.solve = solve;
          }
          phase.mujoco = std::min(phase.mujoco, mujoco);
          phase.iterations = iterations;
          phase.contacts = contacts;
          phase.mj_iterations = mj_iterations;
          phase.mj_contacts = mj_contacts;
        }
        mj_deleteData(md);
      }
    });
    mj_deleteModel(mj_model);
    const std::string name = c.file.substr(c.file.find_last_of('/') + 1);
    for (int k = 0; k < kPhases; ++k) {
      const Phase& p = phases[k];
      std::printf("| %s | %d-%d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n",
                  k == 0 ? name.c_str() : "", k * window, (k + 1) * window, 1e6 * p.alsim / window,
                  1e6 * p.solve / window, p.iterations / window, p.contacts / window,
                  1e6 * p.mujoco / window, p.mj_iterations / window, p.mj_contacts / window,
                  p.alsim / p.mujoco);
    }
    std::fflush(stdout);
  }
}

// The scenes of the solvers comparison: two of MuJoCo's humanoid scenes and Table III's 27
// quadrupeds, whose time goes to islands that land and slide.
std::vector<MujocoCase> SolverCases(const std::string& scenes) {
  return {{"humanoid100/humanoid100.xml", 500},
          {"humanoid/22_humanoids.xml", 1000},
          {scenes + "/quadruped_drop_27.xml", 300}};
}

void SolversAgainstMujoco(const std::vector<MujocoCase>& cases,
                          const std::vector<SolverType>& solvers, int repeats) {
  std::vector<std::shared_ptr<const Model>> models;
  for (const MujocoCase& c : cases) {
    const std::string path = MujocoCasePath(c.file);
    models.push_back(Load(path));
    mj_deleteModel(LoadMujoco(path));
  }
  std::printf("\n### alsim's solvers vs MuJoCo 2.2.2 mj_step, one thread, same scenes\n\n");
  std::printf(
      "| scene | steps | solver | steps/s | /MuJoCo | mean residual | max penetration mm |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < cases.size(); ++k) {
    const MujocoCase& c = cases[k];
    const std::string path = MujocoCasePath(c.file);
    std::vector<double> mj;
    std::vector<std::vector<double>> speed(solvers.size()), ratio(solvers.size());
    std::vector<RunSample> samples(solvers.size());
    RunSample mj_sample;
    for (int r = 0; r < repeats; ++r) {  // interleaved, so drifts in machine load hit every solver
      mj_sample = RunMujoco(path, c.steps);
      mj.push_back(mj_sample.steps_per_second);
      for (size_t s = 0; s < solvers.size(); ++s) {
        if (!SolverRefusesModel(*models[k], solvers[s]).empty()) continue;  // Step would refuse
        StepOptions options;
        options.solver.type = solvers[s];
        samples[s] = RunAlsim(*models[k], 1, c.steps, options);
        speed[s].push_back(samples[s].steps_per_second);
        ratio[s].push_back(samples[s].steps_per_second / mj.back());
      }
    }
    std::printf("| %s | %d | MuJoCo | %.0f | 1 | | %.3f |\n", c.file.c_str(), c.steps, Median(mj),
                1e3 * mj_sample.max_penetration);
    for (size_t s = 0; s < solvers.size(); ++s) {
      if (!SolverRefusesModel(*models[k], solvers[s]).empty()) {
        std::printf("| | | %s | refused: condim 4/6 contacts | | | |\n", SolverName(solvers[s]));
        continue;
      }
      std::printf("| | | %s | %.0f | %s | %.1e | %.3f |\n", SolverName(solvers[s]),
                  Median(speed[s]), RatioSpread(ratio[s]).c_str(), samples[s].mean_residual,
                  1e3 * samples[s].max_penetration);
    }
    std::fflush(stdout);
  }
}

// ---- random controls ------------------------------------------------------------------------

struct RandomSample {
  double steps_per_second = 0;  // instance-steps per second
  double mean_iterations = 0;   // solver iterations per instance-step
  double deepest = 0;           // the deepest penetration of any contact in any step, m
  double depth_sum = 0;         // sum and count of the penetrating contacts' depths, m
  long depth_count = 0;
  // Penetration of one contact at signed distance `dist` (negative: overlapping).
  void AddContact(double dist) {
    if (!(dist < 0)) return;
    deepest = std::max(deepest, -dist);
    depth_sum -= dist;
    ++depth_count;
  }
  double MeanDepth() const { return depth_count > 0 ? depth_sum / depth_count : 0; }
  bool ok = true;  // every step finished (alsim: kOk; MuJoCo: no bad qacc reset)
};

// Each actuator's range of random controls, from its ctrlrange.
std::vector<cli::ActionRange> ActionRanges(const Model& model) {
  std::vector<cli::ActionRange> ranges;
  for (int a = 0; a < model.nu; ++a) {
    const auto i = static_cast<size_t>(a);
    ranges.push_back(cli::ActuatorActionRange(model.actuator_ctrl_limited[i],
                                              model.actuator_ctrl_lower[i],
                                              model.actuator_ctrl_upper[i]));
  }
  return ranges;
}

std::vector<cli::ActionRange> ActionRanges(const mjModel* m) {
  std::vector<cli::ActionRange> ranges;
  for (int a = 0; a < m->nu; ++a) {
    ranges.push_back(cli::ActuatorActionRange(m->actuator_ctrllimited[a] != 0,
                                              m->actuator_ctrlrange[2 * a],
                                              m->actuator_ctrlrange[2 * a + 1]));
  }
  return ranges;
}

// `instances` alsim instances stepped one after another in each of `steps` steps, on the
// calling thread's arena, each step's controls drawn before it; the solvers are created before
// the clock starts.
RandomSample RunAlsimRandom(const Model& model, SolverType type, int instances, int steps,
                            std::uint64_t seed) {
  const std::vector<cli::ActionRange> ranges = ActionRanges(model);
  std::vector<Data> data;
  data.reserve(static_cast<size_t>(instances));
  for (int k = 0; k < instances; ++k) {
    data.emplace_back(model);
    EnsureSolver(model, data.back(), type);
  }
  StepOptions options;
  options.solver.type = type;
  RandomSample sample;
  const auto start = Clock::now();
  for (int n = 0; n < steps; ++n) {
    for (int k = 0; k < instances; ++k) {
      Data& d = data[static_cast<size_t>(k)];
      for (int a = 0; a < model.nu; ++a) {
        const cli::ActionRange& range = ranges[static_cast<size_t>(a)];
        d.ctrl[static_cast<size_t>(a)] =
            cli::Action(seed, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(n), a,
                        range.lower, range.upper);
      }
      if (Step(model, d, options) != StepStatus::kOk) sample.ok = false;
      sample.mean_iterations += d.solver_statistics.mean_iterations;
      for (const Contact& contact : d.contact) sample.AddContact(contact.dist);
    }
  }
  const double instance_steps = static_cast<double>(instances) * steps;
  sample.steps_per_second = instance_steps / Seconds(start);
  sample.mean_iterations /= instance_steps;
  return sample;
}

// The same for MuJoCo: mj_step on `instances` mjData, the same draws in m's ctrlrange.
RandomSample RunMujocoRandom(const mjModel* m, int instances, int steps, std::uint64_t seed) {
  const std::vector<cli::ActionRange> ranges = ActionRanges(m);
  std::vector<mjData*> data;
  for (int k = 0; k < instances; ++k) data.push_back(mj_makeData(m));
  RandomSample sample;
  const auto start = Clock::now();
  for (int n = 0; n < steps; ++n) {
    for (int k = 0; k < instances; ++k) {
      mjData* d = data[static_cast<size_t>(k)];
      for (int a = 0; a < m->nu; ++a) {
        const cli::ActionRange& range = ranges[static_cast<size_t>(a)];
        d->ctrl[a] = cli::Action(seed, static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(n),
                                 a, range.lower, range.upper);
      }
      mj_step(m, d);
      sample.mean_iterations += d->solver_iter;
      for (int i = 0; i < d->ncon; ++i) sample.AddContact(d->contact[i].dist);
    }
  }
  const double instance_steps = static_cast<double>(instances) * steps;
  sample.steps_per_second = instance_steps / Seconds(start);
  sample.mean_iterations /= instance_steps;
  for (mjData* d : data) {
    if (d->warning[mjWARN_BADQACC].number > 0) sample.ok = false;
    mj_deleteData(d);
  }
  return sample;
}

// Both engines under the same random controls, 1 thread, interleaved per repeat (the first
// engine alternates, so neither always runs on a machine the other has warmed or loaded).
void RandomAgainstMujoco(const std::vector<MujocoCase>& cases, SolverType type, int instances,
                         std::uint64_t seed, int repeats) {
  std::vector<std::shared_ptr<const Model>> models;
  for (const MujocoCase& c : cases) {
    const std::string path = MujocoCasePath(c.file);
    models.push_back(Load(path));
    if (const std::string refused = SolverRefusesModel(*models.back(), type); !refused.empty()) {
      std::fprintf(stderr, "solver_bench: %s: %s\n", c.file.c_str(), refused.c_str());
      std::exit(1);
    }
    mj_deleteModel(LoadMujoco(path));
  }
  std::printf(
      "\n### Random controls: alsim (%s, 1 thread) vs MuJoCo 2.2.2 mj_step, %d instances each, "
      "seed %llu\n\n",
      SolverName(type), instances, static_cast<unsigned long long>(seed));
  std::printf(
      "| scene | actuators | steps | alsim steps/s | MuJoCo steps/s | alsim/MuJoCo | "
      "alsim iterations/step | MuJoCo iterations/step | deepest penetration alsim / MuJoCo, mm | "
      "mean penetration alsim / MuJoCo, mm |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < cases.size(); ++k) {
    const MujocoCase& c = cases[k];
    const Model& model = *models[k];
    mjModel* mj_model = LoadMujoco(MujocoCasePath(c.file));
    std::vector<double> alsim, mujoco, ratio;
    RandomSample alsim_sample, mj_sample;
    bool ok = true;
    RunWithThreads(1, [&] {
      for (int r = 0; r < repeats; ++r) {
        if (r % 2 == 0) mj_sample = RunMujocoRandom(mj_model, instances, c.steps, seed);
        alsim_sample = RunAlsimRandom(model, type, instances, c.steps, seed);
        if (r % 2 == 1) mj_sample = RunMujocoRandom(mj_model, instances, c.steps, seed);
        ok = ok && alsim_sample.ok && mj_sample.ok;
        alsim.push_back(alsim_sample.steps_per_second);
        mujoco.push_back(mj_sample.steps_per_second);
        ratio.push_back(alsim.back() / mujoco.back());
      }
    });
    mj_deleteModel(mj_model);
    const std::string name = c.file.substr(c.file.find_last_of('/') + 1);  // npos + 1 == 0
    std::printf("| %s%s | %d | %d | %.0f | %.0f | %s | %.2f | %.2f | %.2f / %.2f | %.3f / %.3f |\n",
                name.c_str(), ok ? "" : " (a step failed)", model.nu, c.steps, Median(alsim),
                Median(mujoco), RatioSpread(ratio).c_str(), alsim_sample.mean_iterations,
                mj_sample.mean_iterations, 1e3 * alsim_sample.deepest, 1e3 * mj_sample.deepest,
                1e3 * alsim_sample.MeanDepth(), 1e3 * mj_sample.MeanDepth());
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: solver_bench [table3|mujoco|robots|solvers|random|all] [--scenes DIR] [--repeats N]\n"
      "                    [--model FILE [--model FILE ...]] [--steps N] [--solvers A,B,...]\n"
      "                    [--solver NAME] [--instances N] [--seed S]\n";
  std::string what = "all", scenes = ALSIM_SCENES_DIR;
  int repeats = 3, model_steps = 0;  // 0: the mode's default
  int instances = 8;
  unsigned long long seed = 0;
  alsim::SolverType solver = alsim::SolverOptions{}.type;
  std::vector<std::string> models;
  std::vector<alsim::SolverType> solvers = {alsim::SolverType::kSubAdmm, alsim::SolverType::kCanal,
                                            alsim::SolverType::kAuto};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--scenes" && i + 1 < argc) {
      scenes = argv[++i];
    } else if (arg == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--model" && i + 1 < argc) {
      models.push_back(argv[++i]);
    } else if (arg == "--steps" && i + 1 < argc) {
      model_steps = std::atoi(argv[++i]);
      if (model_steps < 1) {
        std::fprintf(stderr, "solver_bench: --steps must be at least 1\n%s", usage);
        return 2;
      }
    } else if (arg == "--solver" && i + 1 < argc) {
      if (!alsim::ParseSolverName(argv[++i], &solver)) {
        std::fprintf(stderr, "solver_bench: unknown solver '%s'\n%s", argv[i], usage);
        return 2;
      }
    } else if (arg == "--instances" && i + 1 < argc) {
      instances = std::atoi(argv[++i]);
      if (instances < 1) {
        std::fprintf(stderr, "solver_bench: --instances must be at least 1\n%s", usage);
        return 2;
      }
    } else if (arg == "--seed" && i + 1 < argc) {
      char* end = nullptr;
      errno = 0;
      seed = std::strtoull(argv[++i], &end, 10);
      if (*argv[i] < '0' || *argv[i] > '9' || *end != '\0' || errno == ERANGE) {
        std::fprintf(stderr, "solver_bench: --seed must be a non-negative integer\n%s", usage);
        return 2;
      }
    } else if (arg == "--solvers" && i + 1 < argc) {
      solvers.clear();
      std::string list = argv[++i];
      for (size_t start = 0; start <= list.size();) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        alsim::SolverType type;
        if (!alsim::ParseSolverName(list.substr(start, comma - start).c_str(), &type)) {
          std::fprintf(stderr, "solver_bench: unknown solver in '%s'\n%s", list.c_str(), usage);
          return 2;
        }
        solvers.push_back(type);
        start = comma + 1;
      }
    } else if (arg == "table3" || arg == "mujoco" || arg == "robots" || arg == "solvers" ||
               arg == "random" || arg == "all") {
      what = arg;
    } else {
      std::fprintf(stderr, "solver_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (model_steps == 0) model_steps = what == "random" ? 1500 : 1000;
  if (what == "random") {
    std::vector<alsim::MujocoCase> cases;
    if (models.empty()) models.push_back("humanoid/humanoid.xml");
    for (const std::string& file : models) cases.push_back({file, model_steps});
    alsim::RandomAgainstMujoco(cases, solver, instances, seed, repeats);
    return 0;
  }
  std::vector<alsim::MujocoCase> cases = what == "solvers"  ? alsim::SolverCases(scenes)
                                         : what == "robots" ? alsim::RobotCases(scenes)
                                                            : alsim::HumanoidCases();
  if (!models.empty()) {
    if (what == "table3") {
      std::fprintf(stderr, "solver_bench: --model applies to the MuJoCo comparison, not table3\n%s",
                   usage);
      return 2;
    }
    cases.clear();
    for (const std::string& file : models) cases.push_back({file, model_steps});
    if (what == "all") what = "mujoco";  // --model is about the MuJoCo comparison only
  }
  if (what == "solvers") {
    alsim::SolversAgainstMujoco(cases, solvers, repeats);
    return 0;
  }
  if (what == "robots") {
    alsim::RobotsAgainstMujoco(cases, repeats);
    alsim::RobotPhases(cases, repeats);
    return 0;
  }
  if (what != "mujoco") {
    alsim::TableThree(scenes, repeats, 1);
    alsim::TableThree(scenes, repeats, 2);
  }
  if (what != "table3") alsim::AgainstMujoco(cases, repeats);
  return 0;
}
