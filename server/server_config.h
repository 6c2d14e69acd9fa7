// Command-line and environment configuration of alsim-server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace alsim::server {

struct ServerConfig {
  // gRPC listening address: host:port, [v6]:port, or unix:PATH. Port 0 picks a free port.
  std::string listen_address = "127.0.0.1:50051";
  // Prometheus /metrics address (host:port), or "none" to serve no metrics.
  std::string metrics_address = "127.0.0.1:9464";
  // Seconds that in-flight calls get to finish on SIGTERM/SIGINT before they are cancelled.
  double shutdown_grace_seconds = 5.0;
  // Threads that step instances (batches in parallel, islands inside); 0 = every hardware thread.
  int threads = 0;
  // Live instances the server accepts; Create beyond it fails with RESOURCE_EXHAUSTED.
  std::size_t max_instances = 4096;
  // Largest gRPC message in either direction (gRPC's own default receive limit is 4 MiB, too
  // small for batched observations of many instances).
  std::size_t max_message_bytes = 64u << 20;
  // Largest scene text plus assets that Create accepts.
  std::size_t max_scene_bytes = 16u << 20;
  // Where the built-in scenes (SceneSource.builtin) are read from.
  std::string scenes_dir = ALSIM_DEFAULT_SCENES_DIR;

  // ---- limits that bound what one client can make the server do
  // Live instances one tenant may hold (0 = only max_instances).
  std::size_t max_instances_per_tenant = 0;
  // SolverConfig.max_iterations a client may ask for.
  std::uint32_t max_iterations = 10000;
  // substeps x max_iterations x instances of one Step call.
  std::uint64_t max_call_iterations = 1000000000;
  // float64 values of the Jacobians one Step reply may carry (StepRequest.gradients): 4 Mi (32
  // MiB), half the default message limit (server/batch_step.h, kDefaultMaxGradientDoubles).
  std::size_t max_gradient_doubles = std::size_t{1} << 22;
  // A Step (or StepStream message) running longer is interrupted inside its solve; 0 = no limit.
  double max_call_seconds = 60;
  // Memory for compiled scenes and instances (estimated before each Create); 0 = three quarters
  // of the memory of the host or container (cgroup limit).
  std::uint64_t max_memory = 0;
  // One scene compile: resident memory, wall time; compiles at once.
  std::uint64_t max_compile_memory = 4ull << 30;
  double max_compile_seconds = 60;
  int max_compiles = 4;
  // Compiled scenes kept after their last instance is destroyed (most recently used first).
  std::size_t scene_cache = 8;
  // The alsim-scene-compiler program; empty = the one next to alsim-server.
  std::string scene_compiler;

  // ---- identity
  // TLS: the server's certificate chain and private key (PEM); both or neither. With a client CA,
  // clients must present a certificate it signed (mutual TLS).
  std::string tls_cert, tls_key, tls_client_ca;
  // Bearer tokens: a file of "TOKEN TENANT" lines; empty = no authentication (one tenant).
  std::string auth_tokens;
  // Serve gRPC server reflection (grpcurl, grpc_cli).
  bool reflection = true;

  // ---- drain and resume
  // On SIGTERM, save every instance here before exiting; on start, restore what is saved here.
  // Empty = instances end with the process.
  std::string state_dir;

  bool metrics_enabled() const { return metrics_address != "none"; }
  bool tls_enabled() const { return !tls_cert.empty(); }
};

// Outcome of parsing: a config to run with, or a text to print and an exit status
// (0 after --help/--version, 2 after a usage error).
struct ConfigParseResult {
  std::optional<ServerConfig> config;
  std::string message;
  int exit_code = 0;
};

using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Reads the process environment (getenv).
std::optional<std::string> ProcessEnvironment(const std::string& name);

// Every flag may also come from its environment variable (ALSIM_LISTEN, ...); a flag given on the
// command line wins over the environment. `args` excludes the program name.
ConfigParseResult ParseServerConfig(const std::vector<std::string>& args,
                                    const EnvironmentLookup& environment = ProcessEnvironment);

// The --help text: every flag with its variable, default and meaning.
std::string ServerUsage();

// max_memory as the server applies it: the configured bytes, or for 0 three quarters of the
// memory of the host or of the container's cgroup, whichever is smaller.
std::uint64_t EffectiveMaxMemory(const ServerConfig& config);

}  // namespace alsim::server
