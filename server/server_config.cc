#include "server/server_config.h"

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/core/build_info.h"

namespace alsim::server {
namespace {

// One row per option; parsing, environment lookup and --help are all driven by this table.
struct OptionSpec {
  const char* flag;
  const char* environment_variable;
  const char* value_name;
  const char* help;
  // Stores a value into the config; returns an error message, empty on success.
  std::string (*apply)(const std::string& value, ServerConfig& config);
  std::string (*default_value)();
};

std::string ValidateAddress(const std::string& flag, const std::string& value) {
  if (value.empty()) return flag + " needs an address, e.g. 127.0.0.1:50051";
  if (value.rfind("unix:", 0) == 0) {
    return value.size() > 5 ? "" : flag + " unix: needs a socket path, e.g. unix:/tmp/alsim.sock";
  }
  const auto colon = value.rfind(':');
  if (colon == std::string::npos || colon + 1 == value.size()) {
    return flag + " '" + value + "' is not host:port or unix:PATH";
  }
  const std::string port = value.substr(colon + 1);
  char* end = nullptr;
  const long number = std::strtol(port.c_str(), &end, 10);
  if (*end != '\0' || number < 0 || number > 65535) {
    return flag + " '" + value + "' has an invalid port '" + port + "' (0..65535)";
  }
  return "";
}

// A whole number in [low, high] or an error naming the flag.
std::string ParseCount(const char* flag, const std::string& v, long long low, long long high,
                       long long* out) {
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < low || n > high) {
    return std::string(flag) + " '" + v + "' is not a whole number in [" + std::to_string(low) +
           ", " + std::to_string(high) + "]";
  }
  *out = n;
  return "";
}

// A byte count with an optional binary suffix (K, M, G, T: 2^10 .. 2^40), in [low, high].
std::string ParseBytes(const char* flag, const std::string& v, std::uint64_t low,
                       std::uint64_t high, std::uint64_t* out) {
  char* end = nullptr;
  const double number = std::strtod(v.c_str(), &end);
  double scale = 1;
  const std::string suffix = end != nullptr ? std::string(end) : std::string();
  if (suffix == "K" || suffix == "KiB")
    scale = 1ull << 10;
  else if (suffix == "M" || suffix == "MiB")
    scale = 1ull << 20;
  else if (suffix == "G" || suffix == "GiB")
    scale = 1ull << 30;
  else if (suffix == "T" || suffix == "TiB")
    scale = 1ull << 40;
  else if (!suffix.empty())
    scale = -1;
  const double bytes = number * scale;
  if (v.empty() || scale < 0 || !std::isfinite(bytes) || bytes < static_cast<double>(low) ||
      bytes > static_cast<double>(high)) {
    return std::string(flag) + " '" + v + "' is not a byte count in [" + std::to_string(low) +
           ", " + std::to_string(high) + "] (suffixes K, M, G, T allowed)";
  }
  *out = static_cast<std::uint64_t>(bytes);
  return "";
}

// Non-negative seconds (0 allowed when `zero_ok`).
std::string ParseSeconds(const char* flag, const std::string& v, bool zero_ok, double* out) {
  char* end = nullptr;
  const double seconds = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 0 ||
      (!zero_ok && seconds == 0)) {
    return std::string(flag) + " '" + v + "' is not a " + (zero_ok ? "non-negative" : "positive") +
           " number of seconds";
  }
  *out = seconds;
  return "";
}

std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

const OptionSpec kOptions[] = {
    {"--listen", "ALSIM_LISTEN", "ADDR",
     "gRPC address: host:port, or unix:PATH for a unix socket; port 0 picks a free port",
     [](const std::string& v, ServerConfig& c) {
       c.listen_address = v;
       return ValidateAddress("--listen", v);
     },
     [] { return ServerConfig{}.listen_address; }},
    {"--metrics", "ALSIM_METRICS", "ADDR",
     "Prometheus scrape address (host:port, serves /metrics), or 'none' to disable",
     [](const std::string& v, ServerConfig& c) {
       c.metrics_address = v;
       return v == "none" ? std::string() : ValidateAddress("--metrics", v);
     },
     [] { return ServerConfig{}.metrics_address; }},
    {"--shutdown-grace", "ALSIM_SHUTDOWN_GRACE", "SECONDS",
     "on SIGTERM/SIGINT, how long in-flight calls may run before they are cancelled",
     [](const std::string& v, ServerConfig& c) {
       char* end = nullptr;
       const double seconds = std::strtod(v.c_str(), &end);
       if (v.empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 0) {
         return "--shutdown-grace '" + v + "' is not a non-negative number of seconds";
       }
       c.shutdown_grace_seconds = seconds;
       return std::string();
     },
     [] {
       std::ostringstream out;
       out << ServerConfig{}.shutdown_grace_seconds;
       return out.str();
     }},
    {"--threads", "ALSIM_THREADS", "N",
     "threads that step instances (batches in parallel, contact islands inside); 0 = all cores",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--threads", v, 0, 4096, &n);
       c.threads = static_cast<int>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.threads); }},
    {"--max-instances", "ALSIM_MAX_INSTANCES", "N",
     "live instances accepted; Create beyond it fails with RESOURCE_EXHAUSTED",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-instances", v, 1, 1LL << 24, &n);
       c.max_instances = static_cast<std::size_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_instances); }},
    {"--max-message-bytes", "ALSIM_MAX_MESSAGE_BYTES", "BYTES",
     "largest gRPC message sent or received (gRPC's default limit is 4 MiB)",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-message-bytes", v, 1024, (1LL << 31) - 1, &n);
       c.max_message_bytes = static_cast<std::size_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_message_bytes); }},
    {"--max-scene-bytes", "ALSIM_MAX_SCENE_BYTES", "BYTES",
     "largest scene text plus mesh assets that Create accepts",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-scene-bytes", v, 1, (1LL << 31) - 1, &n);
       c.max_scene_bytes = static_cast<std::size_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_scene_bytes); }},
    {"--scenes-dir", "ALSIM_SCENES_DIR", "DIR",
     "directory of the built-in scenes (each NAME.xml is scene NAME)",
     [](const std::string& v, ServerConfig& c) {
       c.scenes_dir = v;
       return v.empty() ? std::string("--scenes-dir needs a directory") : std::string();
     },
     [] { return ServerConfig{}.scenes_dir; }},
    {"--max-instances-per-tenant", "ALSIM_MAX_INSTANCES_PER_TENANT", "N",
     "live instances one tenant (token) may hold; 0 = only --max-instances",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-instances-per-tenant", v, 0, 1LL << 24, &n);
       c.max_instances_per_tenant = static_cast<std::size_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_instances_per_tenant); }},
    {"--max-iterations", "ALSIM_MAX_ITERATIONS", "N",
     "largest solver max_iterations a client may ask for (per island, per step)",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-iterations", v, 1, 1LL << 30, &n);
       c.max_iterations = static_cast<std::uint32_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_iterations); }},
    {"--max-call-iterations", "ALSIM_MAX_CALL_ITERATIONS", "N",
     "solver iterations one Step may ask for: substeps x max_iterations x instances",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-call-iterations", v, 1, 1LL << 60, &n);
       c.max_call_iterations = static_cast<std::uint64_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_call_iterations); }},
    {"--max-gradient-doubles", "ALSIM_MAX_GRADIENT_DOUBLES", "N",
     "float64 values of the Jacobians one Step reply may carry (StepRequest.gradients: K x nv x "
     "the asked columns); more is INVALID_ARGUMENT",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-gradient-doubles", v, 1, 1LL << 28, &n);
       c.max_gradient_doubles = static_cast<std::size_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_gradient_doubles); }},
    {"--max-call-seconds", "ALSIM_MAX_CALL_SECONDS", "SECONDS",
     "a Step or StepStream message running longer is interrupted inside its solve "
     "(DEADLINE_EXCEEDED; steps taken are kept); 0 = no limit",
     [](const std::string& v, ServerConfig& c) {
       return ParseSeconds("--max-call-seconds", v, true, &c.max_call_seconds);
     },
     [] { return Number(ServerConfig{}.max_call_seconds); }},
    {"--max-memory", "ALSIM_MAX_MEMORY", "BYTES",
     "memory for compiled scenes and instances, estimated before each Create (RESOURCE_EXHAUSTED "
     "beyond); 0 = three quarters of the host's or container's memory",
     [](const std::string& v, ServerConfig& c) {
       return ParseBytes("--max-memory", v, 0, 1ull << 50, &c.max_memory);
     },
     [] { return Number(static_cast<double>(ServerConfig{}.max_memory)); }},
    {"--max-compile-memory", "ALSIM_MAX_COMPILE_MEMORY", "BYTES",
     "resident memory of one scene compile (its own process, killed beyond it)",
     [](const std::string& v, ServerConfig& c) {
       return ParseBytes("--max-compile-memory", v, 64ull << 20, 1ull << 50, &c.max_compile_memory);
     },
     [] { return std::to_string(ServerConfig{}.max_compile_memory >> 30) + "G"; }},
    {"--max-compile-seconds", "ALSIM_MAX_COMPILE_SECONDS", "SECONDS",
     "wall time of one scene compile; longer ones are killed (RESOURCE_EXHAUSTED)",
     [](const std::string& v, ServerConfig& c) {
       return ParseSeconds("--max-compile-seconds", v, false, &c.max_compile_seconds);
     },
     [] { return Number(ServerConfig{}.max_compile_seconds); }},
    {"--max-compiles", "ALSIM_MAX_COMPILES", "N",
     "scene compiles running at once; more wait for a slot",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--max-compiles", v, 1, 256, &n);
       c.max_compiles = static_cast<int>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.max_compiles); }},
    {"--scene-cache", "ALSIM_SCENE_CACHE", "N",
     "compiled scenes kept after their last instance is gone (least recently used go first)",
     [](const std::string& v, ServerConfig& c) {
       long long n = 0;
       std::string error = ParseCount("--scene-cache", v, 0, 1LL << 20, &n);
       c.scene_cache = static_cast<std::size_t>(n);
       return error;
     },
     [] { return std::to_string(ServerConfig{}.scene_cache); }},
    {"--scene-compiler", "ALSIM_SCENE_COMPILER", "PATH",
     "the alsim-scene-compiler program; empty = the one next to alsim-server",
     [](const std::string& v, ServerConfig& c) {
       c.scene_compiler = v;
       return std::string();
     },
     [] { return std::string("''"); }},
    {"--tls-cert", "ALSIM_TLS_CERT", "FILE",
     "serve TLS with this certificate chain (PEM); needs --tls-key",
     [](const std::string& v, ServerConfig& c) {
       c.tls_cert = v;
       return std::string();
     },
     [] { return std::string("none"); }},
    {"--tls-key", "ALSIM_TLS_KEY", "FILE", "the private key (PEM) of --tls-cert",
     [](const std::string& v, ServerConfig& c) {
       c.tls_key = v;
       return std::string();
     },
     [] { return std::string("none"); }},
    {"--tls-client-ca", "ALSIM_TLS_CLIENT_CA", "FILE",
     "with TLS: clients must present a certificate signed by this CA (PEM): mutual TLS",
     [](const std::string& v, ServerConfig& c) {
       c.tls_client_ca = v;
       return std::string();
     },
     [] { return std::string("none"); }},
    {"--auth-tokens", "ALSIM_AUTH_TOKENS", "FILE",
     "require 'authorization: Bearer TOKEN' on every Simulator call; FILE has 'TOKEN TENANT' "
     "lines, and each tenant sees only its own instances",
     [](const std::string& v, ServerConfig& c) {
       c.auth_tokens = v;
       return std::string();
     },
     [] { return std::string("none"); }},
    {"--reflection", "ALSIM_REFLECTION", "on|off", "serve gRPC server reflection",
     [](const std::string& v, ServerConfig& c) {
       if (v != "on" && v != "off") return "--reflection '" + v + "' is not on or off";
       c.reflection = v == "on";
       return std::string();
     },
     [] { return std::string(ServerConfig{}.reflection ? "on" : "off"); }},
    {"--state-dir", "ALSIM_STATE_DIR", "DIR",
     "on SIGTERM save every instance in DIR before exiting, and restore them (same ids, tenants "
     "and states) when a server starts with the same DIR",
     [](const std::string& v, ServerConfig& c) {
       c.state_dir = v;
       return std::string();
     },
     [] { return std::string("none"); }},
};

const OptionSpec* FindOption(const std::string& flag) {
  for (const auto& option : kOptions) {
    if (flag == option.flag) return &option;
  }
  return nullptr;
}

ConfigParseResult UsageError(const std::string& message) {
  return {std::nullopt, "alsim-server: " + message + "\nTry 'alsim-server --help'.\n", 2};
}

}  // namespace

std::optional<std::string> ProcessEnvironment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::string ServerUsage() {
  std::ostringstream out;
  out << "Usage: alsim-server [OPTIONS]\n\n"
      << "Hosts multibody contact simulations and serves them over gRPC (alsim.v1.Simulator,\n"
      << "grpc.health.v1.Health) with Prometheus metrics. Stops gracefully on SIGTERM or "
         "SIGINT.\n\n"
      << "Options (each may also be set by the environment variable shown; flags win):\n";
  for (const auto& option : kOptions) {
    out << "  " << option.flag << " " << option.value_name << "  [$" << option.environment_variable
        << ", default " << option.default_value() << "]\n      " << option.help << "\n";
  }
  out << "  --help        print this help and exit\n"
      << "  --version     print the version and exit\n";
  return out.str();
}

std::uint64_t EffectiveMaxMemory(const ServerConfig& config) {
  if (config.max_memory > 0) return config.max_memory;
  std::uint64_t total = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                        static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(path);
    std::string value;
    if (in >> value && !value.empty() && value != "max") {
      const std::uint64_t limit = std::strtoull(value.c_str(), nullptr, 10);
      if (limit > 0 && limit < total) total = limit;
    }
  }
  return total / 4 * 3;
}

ConfigParseResult ParseServerConfig(const std::vector<std::string>& args,
                                    const EnvironmentLookup& environment) {
  ServerConfig config;
  for (const auto& option : kOptions) {
    if (const auto value = environment(option.environment_variable)) {
      const std::string error = option.apply(*value, config);
      if (!error.empty()) return UsageError(error + " (from $" + option.environment_variable + ")");
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") return {std::nullopt, ServerUsage(), 0};
    if (arg == "--version")
      return {std::nullopt, "alsim-server " + EngineBuildInfo().version + "\n", 0};
    // Accept both "--flag value" and "--flag=value".
    const auto equals = arg.find('=');
    const std::string flag = arg.substr(0, equals);
    const OptionSpec* option = FindOption(flag);
    if (option == nullptr) return UsageError("unknown option '" + arg + "'");
    std::string value;
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return UsageError(flag + " needs a value (" + option->value_name + ")");
    }
    const std::string error = option->apply(value, config);
    if (!error.empty()) return UsageError(error);
  }
  if (config.tls_cert.empty() != config.tls_key.empty()) {
    return UsageError("--tls-cert and --tls-key go together");
  }
  if (!config.tls_client_ca.empty() && config.tls_cert.empty()) {
    return UsageError("--tls-client-ca needs --tls-cert and --tls-key");
  }
  return {config, "", 0};
}

}  // namespace alsim::server
