#include "server/server_config.h"

#include <cmath>
#include <cstdlib>
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
  return {config, "", 0};
}

}  // namespace alsim::server
