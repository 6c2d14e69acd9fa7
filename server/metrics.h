// The server's Prometheus registry and the metrics every server exports.
//
// Conventions (DESIGN.md, shared/research/anchors.md section 4): base units, `_total` counters,
// no per-instance labels. The gRPC series use the go-grpc-prometheus names and labels (grpc_type,
// grpc_service, grpc_method, grpc_code) so that existing gRPC dashboards work; they are recorded
// by a server interceptor (MakeMetricsInterceptorFactory) for every RPC, health checks included.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/support/server_interceptor.h>
#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "engine/solver/solver_options.h"

namespace alsim::server {

class ServerMetrics {
 public:
  // Registers every family and `alsim_build_info` (a gauge fixed at 1 whose labels carry the
  // version, git revision, build type and the gRPC and MuJoCo versions: the `_info` idiom).
  ServerMetrics();

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }
  // Read at each scrape: process_cpu_seconds_total, process_start_time_seconds,
  // process_resident_memory_bytes and process_virtual_memory_bytes (the Prometheus client
  // conventions, from /proc/self/stat and /proc/self/statm) and alsim_heap_in_use_bytes (malloc's
  // bytes in use over all arenas, from glibc's malloc_info). The gap between resident memory and
  // the heap in use is memory malloc keeps but does not use: a growing heap is a leak, a growing
  // gap is fragmentation.
  const std::shared_ptr<prometheus::Collectable>& process_collector() const {
    return process_collector_;
  }

  // One instance step: its wall time (s) and the solver's report.
  void ObserveStep(const SolverStatistics& statistics, double seconds);
  void AddSteps(double steps) { steps_total_->Increment(steps); }
  void SetInstances(std::size_t live) { instances_->Set(static_cast<double>(live)); }
  // The configured most live instances (--max-instances): alerts compare alsim_instances to it.
  void SetInstancesLimit(std::size_t limit) { instances_limit_->Set(static_cast<double>(limit)); }
  // One instance whose step diverged (it then refuses Step until Reset or SetState).
  void AddDiverged() { diverged_total_->Increment(); }
  // Compiled scenes held, and the memory budget's use and limit (bytes).
  void SetScenes(std::size_t held) { scenes_->Set(static_cast<double>(held)); }
  void SetMemory(double reserved, double limit) {
    memory_reserved_->Set(reserved);
    memory_limit_->Set(limit);
  }
  void AddDroppedFrames(double frames) { frames_dropped_->Increment(frames); }

  // RPC accounting for the interceptor: one call started / finished with `code`.
  void RpcStarted(const std::string& type, const std::string& service, const std::string& method);
  void RpcHandled(const std::string& type, const std::string& service, const std::string& method,
                  const std::string& code, double seconds);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<prometheus::Collectable> process_collector_;
  prometheus::Family<prometheus::Counter>* rpc_started_;
  prometheus::Family<prometheus::Counter>* rpc_handled_;
  prometheus::Family<prometheus::Histogram>* rpc_seconds_;
  prometheus::Histogram* step_seconds_;
  prometheus::Histogram* iterations_;
  prometheus::Histogram* residual_;
  prometheus::Histogram* contacts_;
  prometheus::Histogram* islands_;
  prometheus::Gauge* instances_;
  prometheus::Gauge* instances_limit_;
  prometheus::Gauge* scenes_;
  prometheus::Gauge* memory_reserved_;
  prometheus::Gauge* memory_limit_;
  prometheus::Counter* steps_total_;
  prometheus::Counter* frames_dropped_;
  prometheus::Counter* diverged_total_;
};

// A factory of per-RPC interceptors that record grpc_server_started_total,
// grpc_server_handled_total and grpc_server_handling_seconds into `metrics` (which must outlive
// the server).
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
MakeMetricsInterceptorFactory(ServerMetrics* metrics);

}  // namespace alsim::server
