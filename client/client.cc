#include "client/client.h"

#include <grpcpp/grpcpp.h>

namespace alsim::client {

Client::Client(const std::string& address, std::chrono::milliseconds call_timeout)
    : address_(address),
      call_timeout_(call_timeout),
      channel_(grpc::CreateChannel(address, grpc::InsecureChannelCredentials())),
      simulator_(alsim::v1::Simulator::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)) {}

std::unique_ptr<grpc::ClientContext> Client::MakeContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + call_timeout_);
  return context;
}

bool Client::WaitForConnection(std::chrono::milliseconds timeout) {
  return channel_->WaitForConnected(std::chrono::system_clock::now() + timeout);
}

grpc::Status Client::CheckHealth(const std::string& service, HealthStatus* status) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const auto context = MakeContext();
  grpc::Status rpc_status = health_->Check(context.get(), request, &response);
  if (rpc_status.ok()) *status = response.status();
  return rpc_status;
}

grpc::Status Client::ServerInfo(alsim::v1::ServerInfoResponse* info) {
  const auto context = MakeContext();
  return simulator_->ServerInfo(context.get(), alsim::v1::ServerInfoRequest(), info);
}

std::string HealthStatusName(HealthStatus status) {
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(status);
}

}  // namespace alsim::client
