// alsim.v1.Simulator: the service contract of proto/alsim/v1/alsim.proto.
//
// Unary calls that simulate or compile (Create, Step, Reset, SetState) run as tasks on the
// registry's TBB arena, so gRPC's callback threads never block on physics; the cheap ones answer
// on the callback thread. Deadlines and cancellation are checked between (sub)steps.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "alsim/v1/alsim.grpc.pb.h"
#include "server/instance_registry.h"
#include "server/scene_catalog.h"
#include "server/state_streams.h"

namespace alsim::server {

class ServerMetrics;

struct ServiceLimits {
  std::size_t max_instances = 4096;
  std::size_t max_scene_bytes = 16u << 20;    // scene text plus assets
  std::size_t max_message_bytes = 64u << 20;  // gRPC send and receive limit
};

class SimulatorService final : public alsim::v1::Simulator::CallbackService {
 public:
  // `metrics` may be null (no metrics recorded); it must outlive the service.
  SimulatorService(const ServiceLimits& limits, const std::string& scenes_dir, int threads,
                   ServerMetrics* metrics);

  grpc::ServerUnaryReactor* ServerInfo(grpc::CallbackServerContext* context,
                                       const alsim::v1::ServerInfoRequest* request,
                                       alsim::v1::ServerInfoResponse* response) override;
  grpc::ServerUnaryReactor* Create(grpc::CallbackServerContext* context,
                                   const alsim::v1::CreateRequest* request,
                                   alsim::v1::CreateResponse* response) override;
  grpc::ServerUnaryReactor* Step(grpc::CallbackServerContext* context,
                                 const alsim::v1::StepRequest* request,
                                 alsim::v1::StepResponse* response) override;
  grpc::ServerUnaryReactor* Reset(grpc::CallbackServerContext* context,
                                  const alsim::v1::ResetRequest* request,
                                  alsim::v1::ResetResponse* response) override;
  grpc::ServerUnaryReactor* GetState(grpc::CallbackServerContext* context,
                                     const alsim::v1::GetStateRequest* request,
                                     alsim::v1::GetStateResponse* response) override;
  grpc::ServerUnaryReactor* SetState(grpc::CallbackServerContext* context,
                                     const alsim::v1::SetStateRequest* request,
                                     alsim::v1::SetStateResponse* response) override;
  grpc::ServerUnaryReactor* Destroy(grpc::CallbackServerContext* context,
                                    const alsim::v1::DestroyRequest* request,
                                    alsim::v1::DestroyResponse* response) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* context,
                                 const alsim::v1::ListRequest* request,
                                 alsim::v1::ListResponse* response) override;
  grpc::ServerWriteReactor<alsim::v1::StateFrame>* StreamStates(
      grpc::CallbackServerContext* context, const alsim::v1::StreamStatesRequest* request) override;
  grpc::ServerBidiReactor<alsim::v1::StepRequest, alsim::v1::StepResponse>* StepStream(
      grpc::CallbackServerContext* context) override;

  // Ends every open StreamStates call with UNAVAILABLE (graceful shutdown; new ones are refused).
  void CloseStreams() { pump_.Close(); }

  // The batched step of Step and StepStream: validates the whole request first, then steps every
  // selected instance `substeps` times in parallel on the arena, stopping between substeps once
  // `should_stop` returns true (deadline or cancellation: CANCELLED/DEADLINE_EXCEEDED).
  grpc::Status RunStep(const alsim::v1::StepRequest& request,
                       const std::function<grpc::Status()>& should_stop,
                       alsim::v1::StepResponse* response);

  InstanceRegistry& registry() { return registry_; }

 private:
  // Runs `work` on the arena and finishes the call with its status.
  grpc::ServerUnaryReactor* Offload(grpc::CallbackServerContext* context,
                                    std::function<grpc::Status()> work);

  ServiceLimits limits_;
  SceneCatalog catalog_;
  InstanceRegistry registry_;
  ServerMetrics* metrics_;
  std::chrono::steady_clock::time_point started_;
  StatePump pump_;  // after registry_: destroyed first
};

// DEADLINE_EXCEEDED or CANCELLED once the call's deadline has passed or the client cancelled.
grpc::Status CallInterrupted(grpc::CallbackServerContext* context);

}  // namespace alsim::server
