// The SubADMM/CANAL paper's bolt-nut assembly under a solver time budget (Sec. VII-A; digest
// seed-004-subadmm-canal.md 8.1: "CANAL and SubADMM complete the task, PGS fails (significant
// penetrations, no convergence)" at 0.5 ms per step). The paper's nut is held by a robot's gripper
// under impedance control; here a torque about the bolt's axis (Data::xfrc_applied on the nut,
// world frame, set before every step) screws the free nut of scenes/bolt_nut.xml down its thread,
// from the keyframe pose0, for each solver in turn with the same start.
//
// Torque: a velocity servo with a saturation, tau = clamp(-kd (omega_z - omega_ref), -tau_max,
// tau_max), so that every solver is asked for the same motion (omega_ref = --speed rad/s, negative:
// clockwise seen from +z, down a right-handed thread) rather than the same torque, which would let
// a solver's friction error change the speed; tau_max is --torque, above the self-locking nut's
// breakaway torque about m g r2 tan(atan(mu / cos 30 deg) - lead angle) = 0.07 N m.
//
// Per solver: the turn theta (the heading of the nut's x axis, unwrapped) and the advance z over
// the run, their ratio against the thread's lead b = P / (2 pi) (a nut that follows the thread
// gives 1, within its 0.115 mm of axial play over the run), the deepest penetration among the
// contacts of any step, the largest distance of the nut from the helix z - z0 - b theta, the mean
// and largest Sec. VII residual (SolverStatistics::contact_residual), the mean iterations and
// solve time, and the collision's share of a step (the step's wall time less the solve's).
//
// A solver given as name:N in --solvers runs at most N iterations instead of --iterations: with
// --budget-us 0, a fixed iteration count per solver (e.g. what fits in a budget on a quiet
// machine) makes the run repeatable. The budget is the solve's: Step starts its clock after the
// collision and the dynamics (docs/cli.md, "each step's solve").
//
// Usage: bolt_nut_bench [--scene FILE] [--solvers a[:N],b,...] [--budget-us U] [--iterations N]
//          [--tolerance X] [--steps K] [--speed W] [--torque T] [--gain KD] [--threads T]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "bench/solver_list.h"
#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/reset.h"
#include "engine/sim/step.h"
#include "engine/solver/solver.h"

namespace alsim {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct Config {
  std::string scene = std::string(ALSIM_SCENES_DIR) + "/bolt_nut.xml";
  std::string solvers = "canal,subadmm,pgs";
  double budget_us = 500;
  int iterations = 1000;
  double tolerance = 1e-8;
  int steps = 240;
  double speed = -2;     // rad/s
  double torque = 0.5;   // N m, the servo's limit
  double gain = 0.2;     // N m s/rad
  double pitch = 0.005;  // m, the scene's thread
  int threads = 1;
};

struct Summary {
  int steps = 0;
  bool diverged = false;
  double turned = 0, advanced = 0;
  double deepest = 0, off_helix = 0;
  double residual_sum = 0, residual_max = 0;
  double iterations_sum = 0, solve_sum = 0, step_sum = 0, contacts_sum = 0;
};

double Heading(const Data& d) {
  const double w = d.qpos[3], x = d.qpos[4], y = d.qpos[5], z = d.qpos[6];
  return std::atan2(2 * (x * y + w * z), 1 - 2 * (y * y + z * z));
}

Summary Screw(const Model& m, const Config& config, SolverType type, int nut) {
  Summary s;
  Data d(m);
  ResetDataKeyframe(m, &d, 0);
  StepOptions options;
  options.solver.type = type;
  options.solver.max_iterations = config.iterations;
  options.solver.tolerance = config.tolerance;
  options.solver.time_budget_us = config.budget_us;
  const double lead = config.pitch / (2 * kPi);
  double theta = 0, heading = Heading(d);
  const double z0 = d.qpos[2];
  for (int k = 0; k < config.steps; ++k) {
    const double omega = d.qvel[5];  // the free joint's angular velocity: body frame, nut's z
    d.xfrc_applied[nut].setZero();
    d.xfrc_applied[nut][5] =
        std::clamp(-config.gain * (omega - config.speed), -config.torque, config.torque);
    const auto start = std::chrono::steady_clock::now();
    const StepStatus status = Step(m, d, options);
    s.step_sum += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (status != StepStatus::kOk) {
      s.diverged = true;
      break;
    }
    ++s.steps;
    const SolverStatistics& stats = d.solver_statistics;
    for (const Contact& c : d.contact) s.deepest = std::min(s.deepest, c.dist);
    s.residual_sum += stats.contact_residual;
    s.residual_max = std::max(s.residual_max, stats.contact_residual);
    s.iterations_sum += stats.max_iterations;
    s.solve_sum += stats.solve_seconds;
    s.contacts_sum += stats.contacts;
    const double next = Heading(d);
    theta += std::remainder(next - heading, 2 * kPi);
    heading = next;
    s.off_helix = std::max(s.off_helix, std::abs(d.qpos[2] - z0 - lead * theta));
  }
  s.turned = theta;
  s.advanced = d.qpos[2] - z0;
  return s;
}

int Run(const Config& config) {
  const ModelImport imported = ImportModelFromFile(config.scene);
  if (!imported) {
    std::fprintf(stderr, "bolt_nut_bench: %s\n", imported.error.c_str());
    return 1;
  }
  const Model& m = *imported.model;
  int nut = -1;
  for (int b = 1; b < m.nbody; ++b) {
    if (m.body_name[b] == "nut") nut = b;
  }
  if (nut < 0 || m.nkey < 1 || m.nv != 6) {
    std::fprintf(stderr, "bolt_nut_bench: needs a free body 'nut' (nv 6) and a keyframe\n");
    return 2;
  }
  const double lead = config.pitch / (2 * kPi);
  std::printf(
      "# bolt_nut_bench: %s, %d steps of %.6g s, budget %g us, at most %d iterations, "
      "tolerance %g, servo %g rad/s (gain %g N m s/rad, limit %g N m), %d thread(s)\n",
      config.scene.c_str(), config.steps, m.timestep, config.budget_us, config.iterations,
      config.tolerance, config.speed, config.gain, config.torque, config.threads);
  std::printf(
      "| solver | steps | turned rad | advanced mm | advance / rad / b | off helix max um | "
      "deepest penetration um | residual mean | residual max | iterations mean | solve ms "
      "mean | step ms mean | contacts mean |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<bench::SolverRun> runs;
  std::string bad;
  if (!bench::ParseSolverRuns(config.solvers, config.iterations, &runs, &bad)) {
    std::fprintf(stderr, "bolt_nut_bench: bad solver '%s' (name[:iterations])\n", bad.c_str());
    return 2;
  }
  for (const bench::SolverRun& run : runs) {
    Config solver_config = config;
    solver_config.iterations = run.iterations;
    Summary s;
    RunWithThreads(config.threads, [&] { s = Screw(m, solver_config, run.type, nut); });
    const double n = std::max(s.steps, 1);
    std::printf(
        "| %s%s | %d | %.4f | %.4f | %.4f | %.1f | %.1f | %.2e | %.2e | %.1f | %.3f | %.1f | %.1f "
        "|\n",
        run.item.c_str(), s.diverged ? " (diverged)" : "", s.steps, s.turned, 1e3 * s.advanced,
        s.turned != 0 ? s.advanced / s.turned / lead : std::numeric_limits<double>::quiet_NaN(),
        1e6 * s.off_helix, -1e6 * s.deepest, s.residual_sum / n, s.residual_max,
        s.iterations_sum / n, 1e3 * s.solve_sum / n, 1e3 * s.step_sum / n, s.contacts_sum / n);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  const char* usage =
      "usage: bolt_nut_bench [--scene FILE] [--solvers a[:N],b,...] [--budget-us U] "
      "[--iterations N]\n"
      "         [--tolerance X] [--steps K] [--speed W] [--torque T] [--gain KD] [--threads T]\n";
  alsim::Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--scene" && has_value) {
      config.scene = argv[++i];
    } else if (arg == "--solvers" && has_value) {
      config.solvers = argv[++i];
    } else if (arg == "--budget-us" && has_value) {
      config.budget_us = std::atof(argv[++i]);
    } else if (arg == "--iterations" && has_value) {
      config.iterations = std::atoi(argv[++i]);
    } else if (arg == "--tolerance" && has_value) {
      config.tolerance = std::atof(argv[++i]);
    } else if (arg == "--steps" && has_value) {
      config.steps = std::atoi(argv[++i]);
    } else if (arg == "--speed" && has_value) {
      config.speed = std::atof(argv[++i]);
    } else if (arg == "--torque" && has_value) {
      config.torque = std::atof(argv[++i]);
    } else if (arg == "--gain" && has_value) {
      config.gain = std::atof(argv[++i]);
    } else if (arg == "--threads" && has_value) {
      config.threads = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "bolt_nut_bench: unknown argument '%s'\n%s", arg.c_str(), usage);
      return 2;
    }
  }
  if (config.iterations < 1 || config.steps < 1 || config.threads < 1 || !(config.budget_us >= 0) ||
      !(config.tolerance >= 0) || !(config.torque > 0) || !(config.gain > 0)) {
    std::fprintf(stderr, "bolt_nut_bench: bad option values\n%s", usage);
    return 2;
  }
  return alsim::Run(config);
}
