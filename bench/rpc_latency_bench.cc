// Round-trip latency of a unary RPC (ServerInfo) to an in-process server, over TCP loopback and
// over a unix socket: the floor that every remote step pays on top of the physics.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include "client/client.h"
#include "server/server.h"

namespace {

void RunServerInfoRoundTrip(benchmark::State& state, const std::string& listen_address) {
  alsim::server::ServerConfig config;
  config.listen_address = listen_address;
  config.metrics_address = "none";
  std::string error;
  auto server = alsim::server::Server::Start(config, &error);
  if (server == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  alsim::client::Client client(server->grpc_address());
  alsim::v1::ServerInfoResponse info;
  if (!client.ServerInfo(&info).ok()) {  // connect outside the timed loop
    state.SkipWithError("ServerInfo failed");
    return;
  }
  for (auto _ : state) {  // NOLINT(clang-analyzer-deadcode.DeadStores): benchmark idiom
    const grpc::Status status = client.ServerInfo(&info);
    if (!status.ok()) state.SkipWithError(status.error_message().c_str());
    benchmark::DoNotOptimize(info);
  }
}

void BM_ServerInfoTcpLoopback(benchmark::State& state) {
  RunServerInfoRoundTrip(state, "127.0.0.1:0");
}
void BM_ServerInfoUnixSocket(benchmark::State& state) {
  RunServerInfoRoundTrip(state, "unix:/tmp/alsim_bench_" + std::to_string(getpid()) + ".sock");
}

BENCHMARK(BM_ServerInfoTcpLoopback)->UseRealTime();
BENCHMARK(BM_ServerInfoUnixSocket)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
