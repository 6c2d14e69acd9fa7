// The service's cost over the engine, printed as the Markdown tables of BENCHMARKS.md:
//   throughput  instance steps per second for batches of K humanoids (MuJoCo's humanoid.xml),
//               stepped in process (the engine on a T-thread arena) and through a server on
//               loopback (one batched Step call per step, actions [K, nu] in, qpos and qvel out),
//               over the same trajectory, and their ratio;
//   latency     one instance, one step per call: round-trip p50/p99 over TCP loopback and a unix
//               socket, the server's own step time, and the overhead (round trip minus step time,
//               per call).
// Usage: service_bench [throughput|latency|all] [--threads T] [--steps N]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "engine/core/parallel.h"
#include "engine/model/model_import.h"
#include "engine/sim/step.h"
#include "server/server.h"

namespace alsim {
namespace {

using Clock = std::chrono::steady_clock;
const char* const kHumanoid = "/usr/share/mujoco/model/humanoid/humanoid.xml";

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p * values.size()))];
}

std::vector<double> Actions(int batch, int nu, int step) {
  std::vector<double> actions(static_cast<size_t>(batch) * nu);
  for (size_t i = 0; i < actions.size(); ++i) actions[i] = 0.4 * std::sin(0.05 * step + i);
  return actions;
}

double InProcess(const Model& model, int batch, int steps, int threads) {
  std::vector<Data> instances;
  instances.reserve(batch);
  for (int k = 0; k < batch; ++k) instances.emplace_back(model);
  double seconds = 0;
  RunWithThreads(threads, [&] {
    const auto start = Clock::now();
    for (int n = 0; n < steps; ++n) {
      const std::vector<double> actions = Actions(batch, model.nu, n);
      ParallelFor(0, batch, 1, [&](int k) {
        std::copy_n(actions.data() + static_cast<size_t>(k) * model.nu, model.nu,
                    instances[k].ctrl.begin());
        Step(model, instances[k]);
      });
    }
    seconds = Seconds(start);
  });
  return batch * steps / seconds;
}

std::unique_ptr<server::Server> StartServer(const std::string& listen, int threads) {
  server::ServerConfig config;
  config.listen_address = listen;
  config.metrics_address = "none";
  config.threads = threads;
  config.max_instances = 4096;
  std::string error;
  auto server = server::Server::Start(config, &error);
  if (server == nullptr) {
    std::fprintf(stderr, "service_bench: %s\n", error.c_str());
    std::exit(1);
  }
  return server;
}

std::unique_ptr<v1::Simulator::Stub> Connect(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(256 << 20);
  // Batched replies are hundreds of kB: a read-ahead window that holds one whole reply saves
  // HTTP/2 window-update round trips (gRPC's default starts at 64 kB).
  args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8 << 20);
  return v1::Simulator::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

std::vector<std::uint64_t> CreateHumanoids(v1::Simulator::Stub& stub, int count) {
  v1::CreateRequest request;
  request.mutable_scene()->set_builtin("humanoid");
  request.set_count(count);
  v1::CreateResponse response;
  grpc::ClientContext context;
  const grpc::Status status = stub.Create(&context, request, &response);
  if (!status.ok()) {
    std::fprintf(stderr, "service_bench: Create: %s\n", status.error_message().c_str());
    std::exit(1);
  }
  return {response.instance_ids().begin(), response.instance_ids().end()};
}

v1::StepRequest StepRequestFor(const std::vector<std::uint64_t>& ids, int nu, int step) {
  v1::StepRequest request;
  for (const auto id : ids) request.mutable_instances()->add_instance_ids(id);
  const std::vector<double> actions = Actions(static_cast<int>(ids.size()), nu, step);
  v1::Tensor* tensor = request.mutable_actions();
  tensor->set_dtype(v1::DTYPE_FLOAT64);
  tensor->add_shape(static_cast<long>(ids.size()));
  tensor->add_shape(nu);
  tensor->set_data(
      std::string(reinterpret_cast<const char*>(actions.data()), actions.size() * sizeof(double)));
  request.add_observations(v1::OBSERVATION_QPOS);
  request.add_observations(v1::OBSERVATION_QVEL);
  return request;
}

double Remote(v1::Simulator::Stub& stub, int batch, int nu, int steps) {
  const std::vector<std::uint64_t> ids = CreateHumanoids(stub, batch);
  const auto start = Clock::now();
  for (int n = 0; n < steps; ++n) {
    const v1::StepRequest request = StepRequestFor(ids, nu, n);
    v1::StepResponse response;
    grpc::ClientContext context;
    const grpc::Status status = stub.Step(&context, request, &response);
    if (!status.ok()) {
      std::fprintf(stderr, "service_bench: Step: %s\n", status.error_message().c_str());
      std::exit(1);
    }
  }
  const double rate = batch * steps / Seconds(start);
  v1::DestroyRequest destroy;
  for (const auto id : ids) destroy.mutable_instances()->add_instance_ids(id);
  v1::DestroyResponse destroyed;
  grpc::ClientContext context;
  stub.Destroy(&context, destroy, &destroyed);
  return rate;
}

void Throughput(int threads, int steps) {
  const auto model = ImportModelFromFile(kHumanoid).model;
  std::printf(
      "\n### Remote vs in-process throughput, humanoid.xml, %d server thread(s), %d steps, median "
      "of 3 runs\n\n",
      threads, steps);
  std::printf("| instances | in-process steps/s | remote steps/s | remote / in-process |\n");
  std::printf("|---|---|---|---|\n");
  auto server = StartServer("127.0.0.1:0", threads);
  auto stub = Connect(server->grpc_address());
  for (const int batch : {1, 16, 64, 256}) {
    // The same `steps`-step trajectory (falling, landing) for every batch size; three interleaved
    // runs of each side, medians reported, so load drifts on the shared machine hit both.
    std::vector<double> local, remote;
    for (int r = 0; r < 3; ++r) {
      local.push_back(InProcess(*model, batch, steps, threads));
      remote.push_back(Remote(*stub, batch, model->nu, steps));
    }
    const double local_rate = Percentile(local, 0.5), remote_rate = Percentile(remote, 0.5);
    std::printf("| %d | %.0f | %.0f | %.2fx |\n", batch, local_rate, remote_rate,
                remote_rate / local_rate);
    std::fflush(stdout);
  }
}

void Latency(int steps) {
  const auto model = ImportModelFromFile(kHumanoid).model;
  std::printf("\n### Single-instance step latency (humanoid.xml, 1 step per call, %d calls)\n\n",
              steps);
  std::printf(
      "| transport | round trip p50 us | p99 us | server step p50 us | overhead p50 us | overhead "
      "p99 us |\n");
  std::printf("|---|---|---|---|---|---|\n");
  const std::string socket = "unix:/tmp/alsim_service_bench_" + std::to_string(getpid()) + ".sock";
  for (const auto& [name, listen] :
       {std::pair<std::string, std::string>{"TCP loopback", "127.0.0.1:0"},
        {"unix socket", socket}}) {
    auto server = StartServer(listen, 1);
    auto stub = Connect(server->grpc_address());
    const std::vector<std::uint64_t> ids = CreateHumanoids(*stub, 1);
    std::vector<double> round_trip, step, overhead;
    for (int n = 0; n < steps; ++n) {
      const v1::StepRequest request = StepRequestFor(ids, model->nu, n);
      v1::StepResponse response;
      grpc::ClientContext context;
      const auto start = Clock::now();
      const grpc::Status status = stub->Step(&context, request, &response);
      const double rtt = Seconds(start);
      if (!status.ok()) std::exit(1);
      if (n < 50) continue;  // warm-up: connection, first contacts
      round_trip.push_back(1e6 * rtt);
      step.push_back(1e6 * response.step_seconds());
      overhead.push_back(1e6 * (rtt - response.step_seconds()));
    }
    std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", name.c_str(),
                Percentile(round_trip, 0.5), Percentile(round_trip, 0.99), Percentile(step, 0.5),
                Percentile(overhead, 0.5), Percentile(overhead, 0.99));
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace alsim

int main(int argc, char** argv) {
  std::string what = "all";
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int steps = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      threads = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--steps" && i + 1 < argc) {
      steps = std::max(60, std::atoi(argv[++i]));
    } else if (arg == "throughput" || arg == "latency" || arg == "all") {
      what = arg;
    } else {
      std::fprintf(stderr,
                   "usage: service_bench [throughput|latency|all] [--threads T] [--steps N]\n");
      return 2;
    }
  }
  if (what != "latency") alsim::Throughput(threads, steps);
  if (what != "throughput") alsim::Latency(2 * steps);
  return 0;
}
