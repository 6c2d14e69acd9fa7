// alsim.v1.Simulator: the service contract of proto/alsim/v1/alsim.proto.
//
// Calls that simulate (Step, Reset, SetState, GetState, Destroy) run as tasks on the registry's
// TBB arena, so gRPC's callback threads never block on physics; Create runs on a thread of its
// own, since it waits for a scene compiler process and must not hold an arena thread that steps
// could use; the cheap calls answer on the callback thread. Every call first authenticates its
// tenant (when the server has tokens) and sees only that tenant's instances.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "alsim/v1/alsim.grpc.pb.h"
#include "server/batch_step.h"
#include "server/call_watch.h"
#include "server/instance_registry.h"
#include "server/memory_budget.h"
#include "server/scene_catalog.h"
#include "server/scene_compiler.h"
#include "server/state_streams.h"
#include "server/tenants.h"

namespace alsim::server {

class ServerMetrics;

struct ServiceLimits {
  std::size_t max_instances = 4096;
  std::size_t max_instances_per_tenant = 0;   // 0 = only max_instances
  std::size_t max_scene_bytes = 16u << 20;    // scene text plus assets
  std::size_t max_message_bytes = 64u << 20;  // gRPC send and receive limit
  std::uint32_t max_iterations = 10000;       // SolverConfig.max_iterations at most
  // substeps x max_iterations x instances of one Step: the solver iterations a call may ask for.
  std::uint64_t max_call_iterations = 1000000000;
  double max_call_seconds = 60;  // a Step or stream message running longer is interrupted
  // float64 values of one Step reply's Jacobians (StepRequest.gradients, batch::GradientDoubles)
  std::size_t max_gradient_doubles = batch::kDefaultMaxGradientDoubles;
  std::uint64_t max_memory = 0;  // bytes for models and instances; 0 = no budget
  std::size_t max_creates = 64;  // Creates in progress at once
  std::size_t scene_cache = 0;   // compiled scenes kept after their last instance
};

struct ServiceOptions {
  ServiceLimits limits;
  std::string scenes_dir;
  SceneCompilerLimits compiler;
  int threads = 0;  // arena threads; 0 = every hardware thread
  // Token -> tenant; null: every caller is the anonymous tenant "".
  std::shared_ptr<const TenantDirectory> tenants;
};

// The generated callback service, but with StepStream on raw bytes (see step_stream.h).
using SimulatorServiceBase = alsim::v1::Simulator::WithCallbackMethod_ServerInfo<
    alsim::v1::Simulator::WithCallbackMethod_Create<alsim::v1::Simulator::WithCallbackMethod_Step<
        alsim::v1::Simulator::WithCallbackMethod_Reset<
            alsim::v1::Simulator::WithCallbackMethod_GetState<
                alsim::v1::Simulator::WithCallbackMethod_SetState<
                    alsim::v1::Simulator::WithCallbackMethod_Destroy<
                        alsim::v1::Simulator::WithCallbackMethod_List<
                            alsim::v1::Simulator::WithCallbackMethod_StreamStates<
                                alsim::v1::Simulator::WithRawCallbackMethod_StepStream<
                                    alsim::v1::Simulator::WithCallbackMethod_GetScene<
                                        alsim::v1::Simulator::Service>>>>>>>>>>>;

class SimulatorService final : public SimulatorServiceBase {
 public:
  // `metrics` may be null (no metrics recorded); it must outlive the service.
  SimulatorService(const ServiceOptions& options, ServerMetrics* metrics);
  ~SimulatorService() override;

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
  grpc::ServerUnaryReactor* GetScene(grpc::CallbackServerContext* context,
                                     const alsim::v1::GetSceneRequest* request,
                                     alsim::v1::GetSceneResponse* response) override;
  grpc::ServerWriteReactor<alsim::v1::StateFrame>* StreamStates(
      grpc::CallbackServerContext* context, const alsim::v1::StreamStatesRequest* request) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* StepStream(
      grpc::CallbackServerContext* context) override;

  // Ends every open StreamStates call with UNAVAILABLE (graceful shutdown; new ones are refused).
  void CloseStreams() { pump_.Close(); }

  // Shutdown, first half: refuses new work (UNAVAILABLE), interrupts every running step and
  // compile at its next iteration, and ends every open StreamStates call.
  void BeginShutdown();

  // The batched step of Step and StepStream for `tenant`: the request translated for the
  // batch-step core (server/batch_step.h), which validates all of it first and then steps every
  // selected instance `substeps` times in parallel on the arena, and its reply written into
  // `response`. `ticket`'s flag interrupts it inside a solve and between substeps, with the
  // ticket's reason.
  grpc::Status RunStep(const std::string& tenant, const alsim::v1::StepRequest& request,
                       CallWatch::Ticket& ticket, alsim::v1::StepResponse* response);

  InstanceRegistry& registry() { return registry_; }
  // After instances were added or removed outside the service's calls (restore).
  void RefreshMetrics() { PublishCounts(); }
  SceneCatalog& catalog() { return catalog_; }
  MemoryBudget& budget() { return budget_; }

 private:
  // Runs `work` on the arena and finishes the call with its status; an exception from `work`
  // becomes RESOURCE_EXHAUSTED (memory ran out) or INTERNAL for this call alone, as in every
  // handler (Guarded, simulator_service.cc).
  grpc::ServerUnaryReactor* Offload(grpc::CallbackServerContext* context,
                                    std::function<grpc::Status()> work);
  // The caller's tenant, or UNAUTHENTICATED; UNAVAILABLE once shutting down.
  grpc::Status Admit(const grpc::CallbackServerContext& context, std::string* tenant) const;
  grpc::Status CreateNow(grpc::CallbackServerContext* context, const std::string& tenant,
                         const alsim::v1::CreateRequest& request,
                         alsim::v1::CreateResponse* response);
  grpc::Status ToStepOptions(const alsim::v1::SolverConfig& config, StepOptions* options) const;
  // Live instances, compiled scenes and the memory budget, to the metrics.
  void PublishCounts();
  // After a Destroy: gives malloc's free pages back to the system (rate-limited).
  void ReturnFreedMemory();

  ServiceLimits limits_;
  std::shared_ptr<const TenantDirectory> tenants_;
  MemoryBudget budget_;
  SceneCompiler compiler_;
  SceneCatalog catalog_;
  InstanceRegistry registry_;
  ServerMetrics* metrics_;
  std::chrono::steady_clock::time_point started_;
  std::atomic<std::size_t> creates_in_progress_{0};
  std::atomic<std::int64_t> last_trim_{0};  // steady_clock ticks of the last malloc_trim
  CallWatch watch_;
  StatePump pump_;  // after registry_: destroyed first
};

// SolverConfig -> the engine's options (unset fields keep `options`' values); INVALID_ARGUMENT
// for an unknown solver or a bad value. The server's own limits are checked by the service.
grpc::Status SolverOptionsOf(const alsim::v1::SolverConfig& config, StepOptions* options);
// The SolverConfig that gives back `options`' solver settings through SolverOptionsOf.
alsim::v1::SolverConfig SolverConfigOf(const StepOptions& options);

// DEADLINE_EXCEEDED or CANCELLED once the call's deadline has passed or the client cancelled.
grpc::Status CallInterrupted(const grpc::CallbackServerContext* context);

}  // namespace alsim::server
