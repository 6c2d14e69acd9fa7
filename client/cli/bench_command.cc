// `alsim bench SCENE`: Create, N rounds of Step with random controls, Destroy; throughput and
// latency as the client sees them.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "client/cli/json_writer.h"
#include "client/cli/progress_bar.h"
#include "client/cli/remote_commands.h"
#include "client/cli/remote_common.h"
#include "client/cli/scene_source.h"

namespace alsim::cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kExitInterrupted = 130;  // the shell's convention for SIGINT

struct BenchOptions {
  std::string scene;
  std::uint32_t instances = 8;
  std::uint64_t steps = 100;
  std::uint32_t substeps = 1;
  bool batch = true;
  std::uint64_t seed = 0;
  bool json = false;
};

// The range random controls are drawn from, per actuator: its ctrlrange, or [-1, 1] where a
// side is unbounded (a one-sided range becomes 2 wide).
void ControlRange(const alsim::v1::TensorSpec& action, int nu, std::vector<double>* lower,
                  std::vector<double>* upper) {
  lower->assign(static_cast<std::size_t>(nu), -1.0);
  upper->assign(static_cast<std::size_t>(nu), 1.0);
  for (int a = 0; a < nu; ++a) {
    const bool has_lower = a < action.lower_size() && std::isfinite(action.lower(a));
    const bool has_upper = a < action.upper_size() && std::isfinite(action.upper(a));
    const auto i = static_cast<std::size_t>(a);
    if (has_lower && has_upper) {
      (*lower)[i] = action.lower(a);
      (*upper)[i] = action.upper(a);
    } else if (has_lower) {
      (*lower)[i] = action.lower(a);
      (*upper)[i] = action.lower(a) + 2.0;
    } else if (has_upper) {
      (*lower)[i] = action.upper(a) - 2.0;
      (*upper)[i] = action.upper(a);
    }
  }
}

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double percent) {
  if (sorted.empty()) return 0;
  const auto rank =
      static_cast<std::size_t>(std::ceil(percent / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

}  // namespace

int BenchCommand(client::Client& client, const std::vector<std::string>& args) {
  FlagParser parser("bench", args);
  BenchOptions options;
  alsim::v1::CreateRequest create;
  while (parser.Next()) {
    if (parser.Is("--instances")) {
      options.instances = static_cast<std::uint32_t>(parser.UnsignedValue(1, 1000000));
    } else if (parser.Is("--steps")) {
      options.steps = parser.UnsignedValue(1, UINT64_MAX);
    } else if (parser.Is("--substeps")) {
      options.substeps = static_cast<std::uint32_t>(parser.UnsignedValue(1, INT32_MAX));
    } else if (parser.Is("--batch")) {
      options.batch = true;
    } else if (parser.Is("--no-batch")) {
      options.batch = false;
    } else if (parser.Is("--seed")) {
      options.seed = parser.UnsignedValue(0, UINT64_MAX);
    } else if (parser.Is("--json")) {
      options.json = true;
    } else if (ParseSolverFlag(parser, create.mutable_solver())) {
    } else if (!parser.IsFlag() && options.scene.empty()) {
      options.scene = parser.arg();
    } else {
      parser.Unexpected();
    }
  }
  if (options.scene.empty()) parser.Error("no scene given (a built-in name or an MJCF/URDF file)");
  std::vector<std::string> notes;
  if (const std::string error = LoadSceneSource(options.scene, create.mutable_scene(), &notes);
      !error.empty()) {
    parser.Error(error);
  }
  for (const std::string& note : notes) std::cerr << "alsim: bench: warning: " << note << "\n";
  create.set_count(options.instances);
  create.set_seed(options.seed);

  InstallInterruptFlag();
  const Clock::time_point create_start = Clock::now();
  alsim::v1::CreateResponse created;
  grpc::Status status = client.Create(create, &created);
  if (!status.ok()) return ServerError("bench", status);
  const double create_seconds = std::chrono::duration<double>(Clock::now() - create_start).count();

  // From here on every way out destroys the group.
  const auto destroy_and_exit = [&](int code) {
    alsim::v1::DestroyRequest request;
    request.mutable_instances()->set_group_id(created.group_id());
    alsim::v1::DestroyResponse response;
    const grpc::Status destroyed = client.Destroy(request, &response);
    if (!destroyed.ok()) {
      ServerError("bench", destroyed);
      std::cerr << "alsim: bench: group " << created.group_id() << " could not be destroyed\n";
      return code == kExitOk ? kExitFailed : code;
    }
    return code;
  };

  const int nu = static_cast<int>(created.specs().nu());
  const std::vector<std::uint64_t> ids(created.instance_ids().begin(),
                                       created.instance_ids().end());
  const auto count = static_cast<std::int64_t>(ids.size());
  std::vector<double> lower, upper;
  ControlRange(created.specs().action(), nu, &lower, &upper);
  std::mt19937_64 generator(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // Random controls for `instances` instances, [instances, nu].
  const auto random_actions = [&](std::int64_t instances) {
    std::vector<double> values(static_cast<std::size_t>(instances) * static_cast<std::size_t>(nu));
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::size_t a = i % static_cast<std::size_t>(nu);
      values[i] = lower[a] + (upper[a] - lower[a]) * unit(generator);
    }
    return client::MakeActionsTensor(values, instances, nu);
  };

  // One Step call: the whole group, or the instance `only`.
  alsim::v1::StepRequest request;
  request.set_substeps(options.substeps);
  alsim::v1::StepResponse response;
  std::vector<double> latencies_us;
  const std::uint64_t calls = options.batch ? options.steps : options.steps * ids.size();
  latencies_us.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(calls, 1u << 20)));
  double server_seconds = 0;
  const auto step_once = [&](const std::uint64_t* only) -> grpc::Status {
    request.clear_instances();
    if (only == nullptr) {
      request.mutable_instances()->set_group_id(created.group_id());
    } else {
      request.mutable_instances()->add_instance_ids(*only);
    }
    request.clear_actions();
    if (nu > 0) *request.mutable_actions() = random_actions(only == nullptr ? count : 1);
    response.Clear();
    const Clock::time_point start = Clock::now();
    grpc::Status result = client.Step(request, &response);
    latencies_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!result.ok()) return result;
    server_seconds += response.step_seconds();
    for (int k = 0; k < response.status_size(); ++k) {
      if (response.status(k) != alsim::v1::INSTANCE_STATUS_OK) {
        const std::uint64_t id = only != nullptr ? *only : ids[static_cast<std::size_t>(k)];
        return {grpc::StatusCode::ABORTED, "instance " + std::to_string(id) + " diverged"};
      }
    }
    return grpc::Status::OK;
  };

  ProgressBar progress(static_cast<std::int64_t>(options.steps), IsTerminal(STDERR_FILENO),
                       "steps");
  std::uint64_t done = 0;
  const Clock::time_point start = Clock::now();
  for (; done < options.steps && status.ok() && !Interrupted(); ++done) {
    if (options.batch) {
      status = step_once(nullptr);
    } else {
      for (std::size_t k = 0; k < ids.size() && status.ok(); ++k) status = step_once(&ids[k]);
    }
    if (status.ok()) progress.Update(static_cast<std::int64_t>(done + 1));
  }
  const double wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  progress.Clear();
  if (!status.ok()) {
    if (status.error_code() == grpc::StatusCode::ABORTED) {  // our own: a diverged instance
      std::cerr << "alsim: bench: " << status.error_message() << " in step " << done + 1
                << "; the benchmark stops\n";
    } else {
      ServerError("bench", status);
      std::cerr << "alsim: bench: " << done << " of " << options.steps << " steps had succeeded\n";
    }
    return destroy_and_exit(kExitFailed);
  }
  if (Interrupted()) {
    std::cerr << "alsim: bench: interrupted after " << done << " of " << options.steps
              << " steps\n";
    return destroy_and_exit(kExitInterrupted);
  }

  std::vector<double> sorted = latencies_us;
  std::sort(sorted.begin(), sorted.end());
  double mean_us = 0;
  for (const double latency : sorted) mean_us += latency;
  mean_us /= static_cast<double>(std::max<std::size_t>(sorted.size(), 1));
  const double instance_steps =
      static_cast<double>(count) * static_cast<double>(done) * options.substeps;
  const double client_rate = wall_seconds > 0 ? instance_steps / wall_seconds : 0.0;
  const double server_rate = server_seconds > 0 ? instance_steps / server_seconds : 0.0;
  const alsim::v1::Specs& specs = created.specs();
  if (options.json) {
    JsonObjectWriter out;
    out.String("scene", options.scene);
    out.Int("instances", count);
    out.Int("steps", static_cast<std::int64_t>(done));
    out.Int("substeps", options.substeps);
    out.Bool("batch", options.batch);
    out.Int("calls", static_cast<std::int64_t>(latencies_us.size()));
    out.Int("nq", specs.nq());
    out.Int("nv", specs.nv());
    out.Int("nu", specs.nu());
    out.Double("create_seconds", create_seconds);
    out.Double("wall_seconds", wall_seconds);
    out.Double("server_step_seconds", server_seconds);
    out.Double("instance_steps_per_second", client_rate);
    out.Double("server_instance_steps_per_second", server_rate);
    out.Double("latency_p50_us", Percentile(sorted, 50));
    out.Double("latency_p99_us", Percentile(sorted, 99));
    out.Double("latency_mean_us", mean_us);
    out.Double("latency_max_us", sorted.empty() ? 0.0 : sorted.back());
    std::cout << out.Finish() << "\n";
  } else {
    std::printf(
        "bench      %s: %lld instance%s x %llu steps x %u substep%s, %s (%zu Step calls)\n",
        options.scene.c_str(), static_cast<long long>(count), count == 1 ? "" : "s",
        static_cast<unsigned long long>(done), options.substeps, options.substeps == 1 ? "" : "s",
        options.batch ? "one call per step for all instances" : "one call per instance and step",
        latencies_us.size());
    std::printf("create     %.3f s (nq %u, nv %u, nu %u)\n", create_seconds, specs.nq(), specs.nv(),
                specs.nu());
    std::printf(
        "throughput %.0f instance steps/s at the client (%.3f s), %.0f in the server's "
        "stepping (%.3f s)\n",
        client_rate, wall_seconds, server_rate, server_seconds);
    std::printf("latency    per Step call: p50 %.0f us, p99 %.0f us, mean %.0f us, max %.0f us\n",
                Percentile(sorted, 50), Percentile(sorted, 99), mean_us,
                sorted.empty() ? 0.0 : sorted.back());
  }
  std::fflush(stdout);
  return destroy_and_exit(kExitOk);
}

}  // namespace alsim::cli
