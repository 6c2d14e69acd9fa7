// alsim: command-line client of an alsim server, and the headless runner (`alsim run`).
//
// Exit statuses of the server commands: 0 done, 1 the server refused a call or could not be
// reached or a simulation diverged, 2 bad arguments.
#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <google/protobuf/util/json_util.h>

#include "client/cli/remote_commands.h"
#include "client/cli/remote_common.h"
#include "client/cli/run_command.h"
#include "client/client.h"

namespace {

// The help is split around `run`'s part, which prints this build's defaults.
constexpr char kUsageCommands[] =
    "Usage: alsim [GLOBAL OPTIONS] COMMAND [OPTIONS]\n"
    "\n"
    "Commands:\n"
    "  server-info [--json]   health status, version and build of the server\n"
    "  health [--service S]   grpc.health.v1 status of the server (or of service S);\n"
    "                         exits 0 only when SERVING\n";
constexpr char kUsageGlobalOptions[] =
    "\n"
    "Global options (the server commands; run ignores them):\n"
    "  --address ADDR   server address, host:port or unix:PATH\n"
    "                   [$ALSIM_ADDRESS, default 127.0.0.1:50051]\n"
    "  --wait SECONDS   wait up to SECONDS for the server to accept connections [default 0]\n"
    "  --timeout SECONDS  deadline of each call (watch's stream has none) [default 5]\n"
    "  --help           print this help\n"
    "\n"
    "The server commands exit 0 when done, 1 when the server refuses a call (printed as\n"
    "'alsim: COMMAND: CODE: message', CODE the gRPC status code, e.g. NOT_FOUND) or cannot be\n"
    "reached, or a simulation diverged, and 2 for bad arguments. 'alsim COMMAND --help' shows\n"
    "one command's part of this help.\n";

struct CliOptions {
  std::string address = "127.0.0.1:50051";
  double wait_seconds = 0;
  double timeout_seconds = 5;
  std::string command;
  std::vector<std::string> command_args;
};

[[noreturn]] void UsageError(const std::string& message) {
  std::cerr << "alsim: " << message << "\nTry 'alsim --help'.\n";
  std::exit(2);
}

double ParseSeconds(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const double seconds = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(seconds >= 0)) {
    UsageError(flag + " '" + value + "' is not a non-negative number of seconds");
  }
  return seconds;
}

CliOptions ParseArgs(int argc, char** argv) {
  CliOptions options;
  if (const char* address = std::getenv("ALSIM_ADDRESS")) options.address = address;
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  auto value_of = [&](const std::string& flag) {
    if (i + 1 >= args.size()) UsageError(flag + " needs a value");
    return args[++i];
  };
  for (; i < args.size() && options.command.empty(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsageCommands << alsim::cli::RemoteUsage() << alsim::cli::RunUsage()
                << kUsageGlobalOptions;
      std::exit(0);
    } else if (arg == "--address") {
      options.address = value_of(arg);
    } else if (arg == "--wait") {
      options.wait_seconds = ParseSeconds(arg, value_of(arg));
    } else if (arg == "--timeout") {
      options.timeout_seconds = ParseSeconds(arg, value_of(arg));
    } else if (arg.rfind("--", 0) == 0) {
      UsageError("unknown option '" + arg + "'");
    } else {
      options.command = arg;
    }
  }
  options.command_args.assign(args.begin() + static_cast<long>(i), args.end());
  if (options.command.empty()) UsageError("no command given");
  return options;
}

std::chrono::milliseconds ToMilliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0));
}

// Connects (waiting if asked); exits with a message when the server cannot be reached.
void Connect(alsim::client::Client& client, double wait_seconds) {
  if (wait_seconds > 0 && !client.WaitForConnection(ToMilliseconds(wait_seconds))) {
    std::cerr << "alsim: no server answered at " << client.address() << " within " << wait_seconds
              << " s\n";
    std::exit(1);
  }
}

// "alsim: COMMAND: CODE: message", as the other server commands report errors.
int Fail(const std::string& command, const grpc::Status& status) {
  return alsim::cli::ServerError(command, status);
}

int RunHealth(alsim::client::Client& client, const std::vector<std::string>& args) {
  std::string service;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--service" && i + 1 < args.size()) {
      service = args[++i];
    } else {
      UsageError("health: unexpected argument '" + args[i] + "'");
    }
  }
  alsim::client::HealthStatus status{};
  const grpc::Status rpc = client.CheckHealth(service, &status);
  if (!rpc.ok()) return Fail("health", rpc);
  std::cout << alsim::client::HealthStatusName(status) << "\n";
  return status == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

int RunServerInfo(alsim::client::Client& client, const std::vector<std::string>& args) {
  bool json = false;
  for (const auto& arg : args) {
    if (arg == "--json") {
      json = true;
    } else {
      UsageError("server-info: unexpected argument '" + arg + "'");
    }
  }
  alsim::client::HealthStatus health{};
  const grpc::Status health_rpc = client.CheckHealth("", &health);
  if (!health_rpc.ok()) return Fail("server-info", health_rpc);
  alsim::v1::ServerInfoResponse info;
  const grpc::Status info_rpc = client.ServerInfo(&info);
  if (!info_rpc.ok()) return Fail("server-info", info_rpc);

  if (json) {
    std::string text;
    google::protobuf::util::JsonPrintOptions print_options;
    print_options.preserve_proto_field_names = true;
    print_options.always_print_primitive_fields = true;
    (void)google::protobuf::util::MessageToJsonString(info, &text, print_options);
    std::cout << R"({"address":")" << client.address() << R"(","health":")"
              << alsim::client::HealthStatusName(health) << R"(","server_info":)" << text << "}\n";
    return 0;
  }
  std::vector<std::pair<std::string, std::string>> dependencies(info.dependencies().begin(),
                                                                info.dependencies().end());
  std::sort(dependencies.begin(), dependencies.end());
  std::cout << "alsim server at " << client.address() << "\n"
            << "  health:           " << alsim::client::HealthStatusName(health) << "\n"
            << "  version:          " << info.version() << " (git " << info.git_revision() << ")\n"
            << "  build:            " << info.build_type() << ", " << info.compiler()
            << (info.sanitizer().empty() ? "" : ", sanitizer " + info.sanitizer()) << "\n"
            << "  dependencies:    ";
  for (const auto& [library, version] : dependencies) std::cout << " " << library << " " << version;
  std::cout << "\n  hardware threads: " << info.hardware_threads() << "\n"
            << "  uptime:           " << std::fixed << std::setprecision(1) << info.uptime_seconds()
            << " s\n"
            << "  instances:        " << info.instances() << " of at most " << info.max_instances()
            << "\n  built-in scenes: ";
  for (const std::string& scene : info.builtin_scenes()) std::cout << " " << scene;
  std::cout << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const CliOptions options = ParseArgs(argc, argv);
  // The runner works in this process: it needs no channel.
  if (options.command == "run") return alsim::cli::RunCommand(options.command_args);
  alsim::client::Client client(options.address, ToMilliseconds(options.timeout_seconds));
  if (options.command == "health") {
    Connect(client, options.wait_seconds);
    return RunHealth(client, options.command_args);
  }
  if (options.command == "server-info") {
    Connect(client, options.wait_seconds);
    return RunServerInfo(client, options.command_args);
  }
  using RemoteCommand = int (*)(alsim::client::Client&, const std::vector<std::string>&);
  const std::vector<std::pair<std::string, RemoteCommand>> remote_commands = {
      {"create", alsim::cli::CreateCommand}, {"step", alsim::cli::StepCommand},
      {"watch", alsim::cli::WatchCommand},   {"bench", alsim::cli::BenchCommand},
      {"list", alsim::cli::ListCommand},     {"destroy", alsim::cli::DestroyCommand},
  };
  for (const auto& [name, run] : remote_commands) {
    if (options.command != name) continue;
    const auto& args = options.command_args;
    if (std::find(args.begin(), args.end(), "--help") != args.end() ||
        std::find(args.begin(), args.end(), "-h") != args.end()) {
      std::cout << "Usage: alsim [GLOBAL OPTIONS] " << name << " ...\n\n"
                << alsim::cli::RemoteCommandUsage(name) << kUsageGlobalOptions;
      return 0;
    }
    Connect(client, options.wait_seconds);
    return run(client, args);
  }
  UsageError("unknown command '" + options.command + "'");
}
