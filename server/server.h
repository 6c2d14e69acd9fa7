// alsim-server's lifecycle: the gRPC server, its services and the metrics endpoint.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

#include <grpcpp/server.h>
#include <prometheus/exposer.h>

#include "server/metrics.h"
#include "server/server_config.h"
#include "server/simulator_service.h"

namespace alsim::server {

class Server {
 public:
  // Binds both addresses and starts serving. On failure returns null and sets `error` to a
  // message naming the address that could not be used.
  static std::unique_ptr<Server> Start(const ServerConfig& config, std::string* error);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  SimulatorService& simulator_service() { return *simulator_service_; }

  // The address clients should dial: the configured one with port 0 replaced by the bound port.
  const std::string& grpc_address() const { return grpc_address_; }
  // http://host:port/metrics, or empty when metrics are disabled.
  const std::string& metrics_url() const { return metrics_url_; }

  // Reports NOT_SERVING to health checks and refuses new calls, lets in-flight calls finish for
  // up to `grace`, then interrupts the rest (inside their solves) and cancels them; with a state
  // directory, saves every instance there; stops the metrics endpoint. Idempotent.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  Server() = default;

  ServerMetrics metrics_;
  std::unique_ptr<SimulatorService> simulator_service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::string grpc_address_;
  std::string metrics_url_;
  std::string state_dir_;
  std::mutex shutdown_mutex_;
  std::condition_variable shutdown_cv_;
  bool calls_ended_ = false;
};

}  // namespace alsim::server
