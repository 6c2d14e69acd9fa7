#include "server/server.h"

#include <exception>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_builder.h>

namespace alsim::server {
namespace {

// "host:0" -> "host:<bound port>"; unix: addresses are returned unchanged.
std::string WithBoundPort(const std::string& address, int bound_port) {
  if (address.rfind("unix:", 0) == 0) return address;
  return address.substr(0, address.rfind(':') + 1) + std::to_string(bound_port);
}

}  // namespace

std::unique_ptr<Server> Server::Start(const ServerConfig& config, std::string* error) {
  std::unique_ptr<Server> server(new Server());

  // Metrics first: if the scrape port is taken we fail before accepting any RPC.
  if (config.metrics_enabled()) {
    try {
      server->exposer_ = std::make_unique<prometheus::Exposer>(config.metrics_address);
    } catch (const std::exception& e) {
      *error = "cannot serve metrics on " + config.metrics_address + ": " + e.what();
      return nullptr;
    }
    server->exposer_->RegisterCollectable(server->metrics_.registry());
    const auto ports = server->exposer_->GetListeningPorts();
    server->metrics_url_ =
        "http://" + WithBoundPort(config.metrics_address, ports.empty() ? 0 : ports.front()) +
        "/metrics";
  }

  server->simulator_service_ = std::make_unique<SimulatorService>(
      ServiceLimits{config.max_instances, config.max_scene_bytes, config.max_message_bytes},
      config.scenes_dir, config.threads, &server->metrics_);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
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
  builder.AddListeningPort(config.listen_address, grpc::InsecureServerCredentials(), &bound_port);
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
    simulator_service_->CloseStreams();  // streams end with UNAVAILABLE, not a grace timeout
    grpc_server_->Shutdown(std::chrono::system_clock::now() + grace);
    grpc_server_->Wait();
    // A task that finished a call may still be returning from Finish() when gRPC considers the
    // call done; the gRPC server must not be deleted under it.
    simulator_service_->registry().WaitForTasks();
    grpc_server_.reset();
  }
  exposer_.reset();
}

}  // namespace alsim::server
