// Command-line and environment configuration of alsim-server.
#pragma once

#include <cstddef>
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

  bool metrics_enabled() const { return metrics_address != "none"; }
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

}  // namespace alsim::server
