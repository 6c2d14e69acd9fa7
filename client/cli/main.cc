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
#include "client/viewer/view_command.h"

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
    "  --tls            connect with TLS, verifying the server's certificate against gRPC's\n"
    "                   default root certificates [$ALSIM_TLS=1; default: plain TCP unless\n"
    "                   a --tls-* option is given]\n"
    "  --tls-ca FILE    verify the server's certificate with these CA certificates (PEM);\n"
    "                   implies --tls [$ALSIM_TLS_CA]\n"
    "  --tls-server-name NAME\n"
    "                   the name the server's certificate must carry; implies --tls\n"
    "                   [$ALSIM_TLS_SERVER_NAME, default: the host of --address]\n"
    "  --tls-cert FILE, --tls-key FILE\n"
    "                   mutual TLS (a server with --tls-client-ca): this client's certificate\n"
    "                   chain and private key (PEM), both or neither; imply --tls\n"
    "                   [$ALSIM_TLS_CLIENT_CERT, $ALSIM_TLS_CLIENT_KEY]\n"
    "  --token TOKEN    bearer token for a server with --auth-tokens, sent on every call\n"
    "                   (in clear text without TLS) [$ALSIM_TOKEN]\n"
    "  --token-file FILE  the token read from FILE (surrounding whitespace dropped): keeps it\n"
    "                   out of process listings [$ALSIM_TOKEN_FILE]\n"
    "  --help           print this help\n"
    "\n"
    "An option given on the command line overrides its environment variable; an empty\n"
    "$ALSIM_TLS* or $ALSIM_TOKEN* variable counts as unset.\n"
    "\n"
    "The server commands exit 0 when done, 1 when the server refuses a call (printed as\n"
    "'alsim: COMMAND: CODE: message', CODE the gRPC status code, e.g. NOT_FOUND) or cannot be\n"
    "reached, or a simulation diverged, and 2 for bad arguments. 'alsim COMMAND --help' shows\n"
    "one command's part of this help.\n";

// A global option's value and where it came from ("--tls-ca" or "$ALSIM_TLS_CA"), for messages.
struct Setting {
  std::string value;
  std::string source;
  bool given() const { return !source.empty(); }
};

struct CliOptions {
  std::string address = "127.0.0.1:50051";
  double wait_seconds = 0;
  double timeout_seconds = 5;
  // Checked and read by ClientOptionsFrom, for the server commands only.
  Setting tls, tls_ca, tls_server_name, tls_cert, tls_key, token, token_file;
  Setting env_token, env_token_file;  // used when neither --token nor --token-file is given
  std::string command;
  std::vector<std::string> command_args;
};

[[noreturn]] void UsageError(const std::string& message) {
  std::cerr << "alsim: " << message << "\nTry 'alsim --help'.\n";
  alsim::cli::Leave(alsim::cli::kExitUsage);
}

double ParseSeconds(const std::string& flag, const std::string& value) {
  char* end = nullptr;
  const double seconds = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(seconds >= 0)) {
    UsageError(flag + " '" + value + "' is not a non-negative number of seconds");
  }
  return seconds;
}

// A non-empty environment variable as a Setting; unset and empty leave `setting` as it is.
void FromEnvironment(const char* name, Setting* setting) {
  const char* value = std::getenv(name);
  if (value != nullptr && *value != '\0') *setting = {value, std::string("$") + name};
}

bool ParseSwitch(const std::string& source, const std::string& value) {
  if (value.empty() || value == "0" || value == "false" || value == "off" || value == "no") {
    return false;
  }
  if (value == "1" || value == "true" || value == "on" || value == "yes") return true;
  UsageError(source + " '" + value + "' is not 1 or 0 (true/false, on/off, yes/no)");
}

CliOptions ParseArgs(int argc, char** argv) {
  CliOptions options;
  if (const char* address = std::getenv("ALSIM_ADDRESS")) options.address = address;
  FromEnvironment("ALSIM_TLS", &options.tls);
  FromEnvironment("ALSIM_TLS_CA", &options.tls_ca);
  FromEnvironment("ALSIM_TLS_SERVER_NAME", &options.tls_server_name);
  // Not $ALSIM_TLS_CERT and $ALSIM_TLS_KEY: alsim-server reads those for its own certificate,
  // and a client started in the server's environment (a container's health check) would present
  // the server's certificate as its own.
  FromEnvironment("ALSIM_TLS_CLIENT_CERT", &options.tls_cert);
  FromEnvironment("ALSIM_TLS_CLIENT_KEY", &options.tls_key);
  FromEnvironment("ALSIM_TOKEN", &options.env_token);
  FromEnvironment("ALSIM_TOKEN_FILE", &options.env_token_file);
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
    } else if (arg == "--tls") {
      options.tls = {"1", arg};
    } else if (arg == "--tls-ca") {
      options.tls_ca = {value_of(arg), arg};
    } else if (arg == "--tls-server-name") {
      options.tls_server_name = {value_of(arg), arg};
    } else if (arg == "--tls-cert") {
      options.tls_cert = {value_of(arg), arg};
    } else if (arg == "--tls-key") {
      options.tls_key = {value_of(arg), arg};
    } else if (arg == "--token") {
      if (options.token_file.given()) UsageError("give --token or --token-file, not both");
      options.token = {value_of(arg), arg};
    } else if (arg == "--token-file") {
      if (options.token.given()) UsageError("give --token or --token-file, not both");
      options.token_file = {value_of(arg), arg};
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

// The client's options: reads the PEM and token files (exits 2 naming the option when one cannot
// be read or is malformed).
alsim::client::ClientOptions ClientOptionsFrom(const CliOptions& cli) {
  Setting token = cli.token, token_file = cli.token_file;
  // A token on the command line overrides both variables.
  if (!token.given() && !token_file.given()) {
    if (cli.env_token.given() && cli.env_token_file.given()) {
      UsageError("set $ALSIM_TOKEN or $ALSIM_TOKEN_FILE, not both");
    }
    token = cli.env_token;
    token_file = cli.env_token_file;
  }
  const Setting* const settings[] = {&cli.tls_ca, &cli.tls_server_name, &cli.tls_cert, &cli.tls_key,
                                     &token,      &token_file};
  for (const Setting* setting : settings) {
    if (setting->given() && setting->value.empty()) UsageError(setting->source + " is empty");
  }
  if (cli.tls_cert.given() && !cli.tls_key.given()) {
    UsageError(cli.tls_cert.source + " needs a private key (--tls-key or $ALSIM_TLS_CLIENT_KEY)");
  }
  if (cli.tls_key.given() && !cli.tls_cert.given()) {
    UsageError(cli.tls_key.source + " needs a certificate (--tls-cert or $ALSIM_TLS_CLIENT_CERT)");
  }

  alsim::client::ClientOptions options;
  options.call_timeout = ToMilliseconds(cli.timeout_seconds);
  options.tls = cli.tls.given() && ParseSwitch(cli.tls.source, cli.tls.value);
  auto read_pem = [](const Setting& setting, std::string* contents) {
    if (!setting.given()) return;
    const grpc::Status status = alsim::client::ReadPemFile(setting.value, contents);
    if (!status.ok()) UsageError(setting.source + ": " + status.error_message());
  };
  read_pem(cli.tls_ca, &options.tls_root_certs);
  read_pem(cli.tls_cert, &options.tls_cert_chain);
  read_pem(cli.tls_key, &options.tls_private_key);
  options.tls_server_name = cli.tls_server_name.value;
  if (token_file.given()) {
    const grpc::Status status = alsim::client::ReadTokenFile(token_file.value, &options.token);
    if (!status.ok()) UsageError(token_file.source + ": " + status.error_message());
  } else {
    options.token = token.value;
  }
  const grpc::Status valid = alsim::client::ValidateClientOptions(options);
  if (!valid.ok()) UsageError((token.given() ? token.source + ": " : "") + valid.error_message());
  return options;
}

// Connects (waiting if asked); false, with a message, when the server cannot be reached. The caller
// returns, so that the channel is destroyed before the process leaves (see Leave).
bool Connect(alsim::client::Client& client, double wait_seconds) {
  if (wait_seconds > 0 && !client.WaitForConnection(ToMilliseconds(wait_seconds))) {
    std::cerr << "alsim: no server answered at " << client.address() << " within " << wait_seconds
              << " s";
    // The channel's last error tells a refused connection from a failed TLS handshake.
    alsim::client::HealthStatus ignored{};
    const grpc::Status status = client.CheckHealth("", &ignored);
    if (!status.ok()) {
      std::cerr << ": " << alsim::client::StatusCodeName(status.error_code()) << ": "
                << status.error_message();
    }
    std::cerr << "\n";
    return false;
  }
  return true;
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

// The command's exit status; the channel it made is gone when it returns.
static int Run(int argc, char** argv) {
  const CliOptions options = ParseArgs(argc, argv);
  // The runner works in this process: it needs no channel.
  if (options.command == "run") return alsim::cli::RunCommand(options.command_args);
  if (options.command == "health" || options.command == "server-info") {
    alsim::client::Client client(options.address, ClientOptionsFrom(options));
    if (!Connect(client, options.wait_seconds)) return 1;
    return options.command == "health" ? RunHealth(client, options.command_args)
                                       : RunServerInfo(client, options.command_args);
  }
  using RemoteCommand = int (*)(alsim::client::Client&, const std::vector<std::string>&);
  const std::vector<std::pair<std::string, RemoteCommand>> remote_commands = {
      {"create", alsim::cli::CreateCommand}, {"step", alsim::cli::StepCommand},
      {"watch", alsim::cli::WatchCommand},   {"bench", alsim::cli::BenchCommand},
      {"list", alsim::cli::ListCommand},     {"destroy", alsim::cli::DestroyCommand},
      {"view", alsim::viewer::ViewCommand},
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
    alsim::client::Client client(options.address, ClientOptionsFrom(options));
    if (!Connect(client, options.wait_seconds)) return 1;
    return run(client, args);
  }
  UsageError("unknown command '" + options.command + "'");
}

int main(int argc, char** argv) { alsim::cli::Leave(Run(argc, argv)); }
