#include "server/server.h"

#include <algorithm>
#include <exception>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "engine/model/model_import.h"
#include "server/drain.h"

namespace alsim::server {
namespace {

// "host:0" -> "host:<bound port>"; unix: addresses are returned unchanged.
std::string WithBoundPort(const std::string& address, int bound_port) {
  if (address.rfind("unix:", 0) == 0) return address;
  return address.substr(0, address.rfind(':') + 1) + std::to_string(bound_port);
}

// A whole file, or false.
bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return true;
}

// Insecure credentials, or TLS from the configured PEM files; null with *error when a file
// cannot be read.
std::shared_ptr<grpc::ServerCredentials> Credentials(const ServerConfig& config,
                                                     std::string* error) {
  if (!config.tls_enabled()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  if (!ReadFile(config.tls_cert, &pair.cert_chain)) {
    *error = "cannot read --tls-cert " + config.tls_cert;
    return nullptr;
  }
  if (!ReadFile(config.tls_key, &pair.private_key)) {
    *error = "cannot read --tls-key " + config.tls_key;
    return nullptr;
  }
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!config.tls_client_ca.empty()) {
    if (!ReadFile(config.tls_client_ca, &options.pem_root_certs)) {
      *error = "cannot read --tls-client-ca " + config.tls_client_ca;
      return nullptr;
    }
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  options.pem_key_cert_pairs.push_back(pair);
  return grpc::SslServerCredentials(options);
}

// Removes gRPC's reflection plugin from a builder. Linking grpc++_reflection registers the plugin
// for every server of the process (a static initializer), so --reflection off must take it out.
class WithoutReflection final : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->erase(std::remove_if(plugins->begin(), plugins->end(),
                                  [](const std::unique_ptr<grpc::ServerBuilderPlugin>& plugin) {
                                    return plugin->name() == "proto_server_reflection";
                                  }),
                   plugins->end());
  }
};

}  // namespace

std::unique_ptr<Server> Server::Start(const ServerConfig& config, std::string* error) {
  std::unique_ptr<Server> server(new Server());
  // Before any thread could call libmujoco: no MuJoCo error may ever exit the process.
  InstallMujocoHandlers();
  server->state_dir_ = config.state_dir;
  std::string credentials_error;
  const auto credentials = Credentials(config, &credentials_error);
  if (credentials == nullptr) {
    *error = credentials_error;
    return nullptr;
  }
  ServiceOptions options;
  if (!config.auth_tokens.empty()) {
    std::string tokens_error;
    options.tenants = TenantDirectory::Load(config.auth_tokens, &tokens_error);
    if (options.tenants == nullptr) {
      *error = "--auth-tokens: " + tokens_error;
      return nullptr;
    }
  }

  // Metrics first: if the scrape port is taken we fail before accepting any RPC.
  if (config.metrics_enabled()) {
    try {
      server->exposer_ = std::make_unique<prometheus::Exposer>(config.metrics_address);
    } catch (const std::exception& e) {
      *error = "cannot serve metrics on " + config.metrics_address + ": " + e.what();
      return nullptr;
    }
    server->exposer_->RegisterCollectable(server->metrics_.registry());
    server->exposer_->RegisterCollectable(server->metrics_.process_collector());
    const auto ports = server->exposer_->GetListeningPorts();
    server->metrics_url_ =
        "http://" + WithBoundPort(config.metrics_address, ports.empty() ? 0 : ports.front()) +
        "/metrics";
  }

  ServiceLimits& limits = options.limits;
  limits.max_instances = config.max_instances;
  limits.max_instances_per_tenant = config.max_instances_per_tenant;
  limits.max_scene_bytes = config.max_scene_bytes;
  limits.max_message_bytes = config.max_message_bytes;
  limits.max_iterations = config.max_iterations;
  limits.max_call_iterations = config.max_call_iterations;
  limits.max_gradient_doubles = config.max_gradient_doubles;
  limits.max_call_seconds = config.max_call_seconds;
  limits.max_memory = EffectiveMaxMemory(config);
  limits.scene_cache = config.scene_cache;
  options.scenes_dir = config.scenes_dir;
  options.threads = config.threads;
  options.compiler.program = config.scene_compiler;
  options.compiler.memory_bytes = config.max_compile_memory;
  options.compiler.seconds = config.max_compile_seconds;
  options.compiler.concurrent = config.max_compiles;
  server->simulator_service_ = std::make_unique<SimulatorService>(options, &server->metrics_);

  if (!config.state_dir.empty()) {
    int restored = 0;
    std::string skipped;
    const std::string restore_error =
        RestoreInstances(*server->simulator_service_, config.state_dir, &restored, &skipped);
    if (!restore_error.empty()) {
      *error = "--state-dir: " + restore_error;
      return nullptr;
    }
    if (restored > 0 || !skipped.empty()) {
      // On stderr: stdout's first line is the ready line that scripts wait for.
      std::cerr << "alsim-server: restored " << restored << " instance(s) from " << config.state_dir
                << std::endl;
    }
    if (!skipped.empty()) std::cerr << "alsim-server: not restored:\n" << skipped;
    server->simulator_service_->RefreshMetrics();
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  if (!config.reflection) builder.SetOption(std::make_unique<WithoutReflection>());
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(config.max_message_bytes));
  // Batched actions can be hundreds of kB: read ahead a whole message instead of gRPC's initial
  // 64 kB window, which costs window-update round trips per call.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 8 << 20);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(MakeMetricsInterceptorFactory(&server->metrics_));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  // gRPC sets SO_REUSEPORT by default, which lets a second server bind the same port and
  // silently take half the connections; a taken port must be an error instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  int bound_port = 0;
  builder.AddListeningPort(config.listen_address, credentials, &bound_port);
  builder.RegisterService(server->simulator_service_.get());
  server->grpc_server_ = builder.BuildAndStart();
  // gRPC reports a failed bind as a null server or a zero port.
  if (server->grpc_server_ == nullptr || bound_port == 0) {
    *error = "cannot listen on " + config.listen_address +
             " (address in use, not local, or not permitted?)";
    return nullptr;
  }
  server->grpc_address_ = WithBoundPort(config.listen_address, bound_port);
  server->grpc_server_->GetHealthCheckService()->SetServingStatus(
      alsim::v1::Simulator::service_full_name(), true);
  return server;
}

Server::~Server() { Shutdown(std::chrono::milliseconds(0)); }

void Server::Shutdown(std::chrono::milliseconds grace) {
  if (grpc_server_ != nullptr) {
    grpc_server_->GetHealthCheckService()->Shutdown();
    // New calls get UNAVAILABLE; calls still running have `grace` to finish, then every step and
    // compile is interrupted at its next solver iteration.
    simulator_service_->CloseStreams();  // streams end with UNAVAILABLE, not a grace timeout
    const auto deadline = std::chrono::system_clock::now() + grace;
    std::thread interrupter([this, deadline] {
      std::unique_lock<std::mutex> lock(shutdown_mutex_);
      if (!shutdown_cv_.wait_until(lock, deadline, [this] { return calls_ended_; })) {
        simulator_service_->BeginShutdown();
      }
    });
    grpc_server_->Shutdown(deadline);
    grpc_server_->Wait();
    {
      const std::lock_guard<std::mutex> lock(shutdown_mutex_);
      calls_ended_ = true;
    }
    shutdown_cv_.notify_all();
    interrupter.join();
    simulator_service_->BeginShutdown();
    // A task that finished a call may still be returning from Finish() when gRPC considers the
    // call done; the gRPC server must not be deleted under it.
    simulator_service_->registry().WaitForTasks();
    if (!state_dir_.empty()) {
      int saved = 0;
      const std::string error = SaveInstances(*simulator_service_, state_dir_, &saved);
      if (error.empty()) {
        std::cout << "alsim-server: saved " << saved << " instance(s) in " << state_dir_
                  << std::endl;
      } else {
        std::cerr << "alsim-server: could not save the instances: " << error << std::endl;
      }
    }
    grpc_server_.reset();
  }
  exposer_.reset();
}

}  // namespace alsim::server
