// C++ client of an alsim server. Every call carries a deadline.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/channel.h>

#include "alsim/v1/alsim.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace alsim::client {

using HealthStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

class Client {
 public:
  // `address` as for alsim-server --listen: host:port or unix:PATH.
  explicit Client(const std::string& address,
                  std::chrono::milliseconds call_timeout = std::chrono::seconds(5));

  // Blocks until the server accepts a connection or `timeout` passes; false on timeout.
  bool WaitForConnection(std::chrono::milliseconds timeout);

  // grpc.health.v1 Check of `service` ("" is the server as a whole).
  grpc::Status CheckHealth(const std::string& service, HealthStatus* status);

  grpc::Status ServerInfo(alsim::v1::ServerInfoResponse* info);

  const std::string& address() const { return address_; }

 private:
  std::unique_ptr<grpc::ClientContext> MakeContext() const;

  std::string address_;
  std::chrono::milliseconds call_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<alsim::v1::Simulator::Stub> simulator_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

// "SERVING", "NOT_SERVING", ...
std::string HealthStatusName(HealthStatus status);

}  // namespace alsim::client
