// `alsim step SELECTION`: N batched Step calls.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <thread>

#include "client/cli/json_writer.h"
#include "client/cli/remote_commands.h"
#include "client/cli/remote_common.h"

namespace alsim::cli {

int StepCommand(client::Client& client, const std::vector<std::string>& args) {
  FlagParser parser("step", args);
  SelectionFlags selection;
  std::uint64_t steps = 1;
  std::uint32_t substeps = 1;
  bool random_actions = false;
  std::uint64_t seed = 0;
  bool json = false;
  double rate = 0;  // Step calls per second at most; 0: one after another
  while (parser.Next()) {
    if (selection.Parse(parser)) {
    } else if (parser.Is("--steps")) {
      steps = parser.UnsignedValue(1, UINT64_MAX);
    } else if (parser.Is("--substeps")) {
      substeps = static_cast<std::uint32_t>(parser.UnsignedValue(1, INT32_MAX));
    } else if (parser.Is("--random-actions")) {
      random_actions = true;
    } else if (parser.Is("--seed")) {
      seed = parser.UnsignedValue(0, UINT64_MAX);
    } else if (parser.Is("--json")) {
      json = true;
    } else if (parser.Is("--rate")) {
      rate = parser.NumberValue(0, 1e6);
    } else {
      parser.Unexpected();
    }
  }
  selection.Require(parser);

  // The batch's ids in order and its actuator count, to shape the actions.
  std::vector<std::uint64_t> ids;
  int nu = 0;
  grpc::Status status = ProbeSelection(client, selection.ToProto(), &ids, &nu);
  if (!status.ok()) return ServerError("step", status);
  const auto batch = static_cast<std::int64_t>(ids.size());

  alsim::v1::StepRequest request;
  *request.mutable_instances() = selection.ToProto();
  request.set_substeps(substeps);
  request.add_observations(alsim::v1::OBSERVATION_TIME);
  std::vector<double> actions(static_cast<std::size_t>(batch) * static_cast<std::size_t>(nu), 0.0);
  if (nu > 0) *request.mutable_actions() = client::MakeActionsTensor(actions, batch, nu);
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);

  alsim::v1::StepResponse response;
  double server_seconds = 0;
  std::uint64_t taken = 0;
  bool diverged = false;
  const auto start = std::chrono::steady_clock::now();
  while (taken < steps && !diverged) {
    if (rate > 0) {  // paced from the start, so that a slow call is caught up, not repeated
      std::this_thread::sleep_until(start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::duration<double>(taken / rate)));
    }
    if (random_actions && nu > 0) {
      for (double& value : actions) value = uniform(generator);
      *request.mutable_actions() = client::MakeActionsTensor(actions, batch, nu);
    }
    response.Clear();
    status = client.Step(request, &response);
    if (!status.ok()) {
      ServerError("step", status);
      std::cerr << "alsim: step: " << taken << " of " << steps << " Step calls had succeeded\n";
      return kExitFailed;
    }
    ++taken;
    server_seconds += response.step_seconds();
    for (const int s : response.status()) diverged = diverged || s != alsim::v1::INSTANCE_STATUS_OK;
  }
  const double wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::vector<double> times;
  status = ObservationValues(response.observations(), "time", &times);
  if (status.ok() && (static_cast<std::int64_t>(times.size()) != batch ||
                      response.status_size() != batch || response.diagnostics_size() != batch)) {
    status = {grpc::StatusCode::INTERNAL, "the Step response does not have one entry per instance"};
  }
  if (!status.ok()) return ServerError("step", status);

  if (json) {
    std::vector<std::string> rows;
    for (std::int64_t k = 0; k < batch; ++k) {
      const alsim::v1::SolverDiagnostics& d = response.diagnostics(static_cast<int>(k));
      JsonObjectWriter row;
      row.UInt("id", ids[static_cast<std::size_t>(k)]);
      row.Double("time", times[static_cast<std::size_t>(k)]);
      row.String("status", InstanceStatusName(response.status(static_cast<int>(k))));
      row.Int("contacts", d.contacts());
      row.Int("islands", d.islands());
      row.Int("max_iterations", d.max_iterations());
      row.Double("mean_iterations", d.mean_iterations());
      row.Double("primal_residual", d.primal_residual());
      row.Double("dual_residual", d.dual_residual());
      row.Double("contact_residual", d.contact_residual());
      rows.push_back(row.Finish());
    }
    JsonObjectWriter out;
    out.Int("steps", static_cast<std::int64_t>(taken));
    out.Int("substeps", substeps);
    out.Double("step_seconds", server_seconds);
    out.Double("wall_seconds", wall_seconds);
    out.RawArray("instances", rows);
    std::cout << out.Finish() << "\n";
  } else {
    std::printf(
        "stepped %lld instance%s %llu time%s x %u substep%s: %.3f s on the server, %.3f s "
        "here\n",
        static_cast<long long>(batch), batch == 1 ? "" : "s",
        static_cast<unsigned long long>(taken), taken == 1 ? "" : "s", substeps,
        substeps == 1 ? "" : "s", server_seconds, wall_seconds);
    std::printf("%20s %12s  %-8s %8s %7s %9s %9s %10s %10s %10s\n", "instance", "time (s)",
                "status", "contacts", "islands", "max iter", "mean iter", "primal", "dual",
                "contact");
    for (std::int64_t k = 0; k < batch; ++k) {
      const alsim::v1::SolverDiagnostics& d = response.diagnostics(static_cast<int>(k));
      std::printf("%20llu %12.6f  %-8s %8u %7u %9u %9.2f %10.3g %10.3g %10.3g\n",
                  static_cast<unsigned long long>(ids[static_cast<std::size_t>(k)]),
                  times[static_cast<std::size_t>(k)],
                  InstanceStatusName(response.status(static_cast<int>(k))).c_str(), d.contacts(),
                  d.islands(), d.max_iterations(), d.mean_iterations(), d.primal_residual(),
                  d.dual_residual(), d.contact_residual());
    }
    std::printf(
        "(diagnostics of each instance's last step; primal, dual and contact are the "
        "solver's residuals)\n");
  }
  if (diverged) {
    std::cerr << "alsim: step: an instance diverged in Step call " << taken << " of " << steps
              << "; Reset or SetState it before stepping again\n";
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace alsim::cli
