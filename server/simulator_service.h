// alsim.v1.Simulator: the service contract of proto/alsim/v1/alsim.proto.
#pragma once

#include <chrono>

#include "alsim/v1/alsim.grpc.pb.h"

namespace alsim::server {

class SimulatorService final : public alsim::v1::Simulator::CallbackService {
 public:
  SimulatorService();

  grpc::ServerUnaryReactor* ServerInfo(grpc::CallbackServerContext* context,
                                       const alsim::v1::ServerInfoRequest* request,
                                       alsim::v1::ServerInfoResponse* response) override;

 private:
  std::chrono::steady_clock::time_point started_;
};

}  // namespace alsim::server
