// The server's simulation instances (server/instance.h): creation in groups, lookup,
// per-instance locking, and the TBB arena that the calls which simulate run on (their batched
// step and reset: server/batch_step.h). Protobuf-free; simulator_service.cc maps RPCs onto it.
//
// Concurrency: every operation on an instance holds its mutex. A batch locks its instances in
// increasing id order, so two overlapping batches serialize (the later one waits) and can never
// deadlock; calls on disjoint instances run in parallel. The registry's own map is guarded by a
// separate mutex that is never held while stepping.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>

#include "engine/data/data.h"
#include "engine/model/model.h"
#include "engine/sim/step.h"
#include "server/instance.h"
#include "server/memory_budget.h"
#include "server/scene_catalog.h"

namespace alsim::server {

struct RegistryLimits {
  std::size_t max_instances = 4096;
  std::size_t max_instances_per_tenant = 0;  // 0 = only max_instances
};

// What Create makes: `count` instances of one loaded scene, for `tenant`.
struct CreateSpec {
  LoadedScene scene;
  std::string tenant;
  StepOptions options;
  std::uint32_t count = 1;
  std::uint64_t seed = 0;
  std::uint32_t max_episode_steps = 0;
  int keyframe = -1;  // the instances' start and reset state (Instance::keyframe); -1: none
};

struct InstanceSummary {
  std::uint64_t id, group;
  std::string scene, solver;
  double time;
  std::uint64_t steps;
  bool diverged;
};

class InstanceRegistry {
 public:
  // `threads`: the arena that batched steps run on (0 = every hardware thread). `budget` (may be
  // null) is charged each instance's estimated bytes; it must outlive every instance.
  InstanceRegistry(const RegistryLimits& limits, int threads, MemoryBudget* budget = nullptr);

  // Creates spec.count instances of spec.scene in a new group owned by spec.tenant; instance k's
  // generator is seeded with seed + k. RESOURCE_EXHAUSTED beyond the instance limits or the
  // memory budget; nothing is created then, nor when `should_stop` (polled while the instances
  // are built; may be null) returns non-OK, whose status is returned.
  grpc::Status Create(const CreateSpec& spec, const std::function<grpc::Status()>& should_stop,
                      std::uint64_t* group, std::vector<std::uint64_t>* ids);

  // Puts back an instance saved by a draining server, with its id, group and tenant
  // (drain/resume). INVALID_ARGUMENT when the id is taken.
  grpc::Status Adopt(std::shared_ptr<Instance> instance);

  // Looks up `ids` (or, when ids is empty, the instances of `group`, in creation order) among
  // `tenant`'s instances, locks them in increasing id order and runs `fn` with them in the
  // requested order. NOT_FOUND names an unknown id or group (another tenant's included);
  // INVALID_ARGUMENT for a repeated id or neither/both selectors.
  grpc::Status WithInstances(const std::string& tenant, const std::vector<std::uint64_t>& ids,
                             std::uint64_t group,
                             const std::function<grpc::Status(std::vector<Instance*>&)>& fn);

  // As WithInstances, but never waits: when any instance is locked (being stepped), sets *busy and
  // returns OK without running fn. For observers (streams) that must not stall behind a step.
  grpc::Status TryWithInstances(const std::string& tenant, const std::vector<std::uint64_t>& ids,
                                std::uint64_t group,
                                const std::function<grpc::Status(std::vector<Instance*>&)>& fn,
                                bool* busy);

  // The selection rules of WithInstances without locking anything: OK when every instance exists.
  // `models` (may be null) receives each selected instance's model, which never changes.
  grpc::Status Check(const std::string& tenant, const std::vector<std::uint64_t>& ids,
                     std::uint64_t group,
                     std::vector<std::shared_ptr<const Model>>* models = nullptr);

  // The instance `id` of `tenant` without locking it, for its immutable fields (model, scene,
  // look); NOT_FOUND as WithInstances.
  grpc::Status Find(const std::string& tenant, std::uint64_t id,
                    std::shared_ptr<const Instance>* instance);

  // Removes instances (the same selection rules); waits for calls using them to finish.
  grpc::Status Destroy(const std::string& tenant, const std::vector<std::uint64_t>& ids,
                       std::uint64_t group, int* destroyed);

  // `tenant`'s live instances in creation order, without waiting for steps in progress (reads the
  // published fields).
  std::vector<InstanceSummary> List(const std::string& tenant);
  // Every live instance of every tenant, in creation order (drain).
  std::vector<std::shared_ptr<Instance>> All();
  std::size_t size();
  const RegistryLimits& limits() const { return limits_; }

  // Queues fn as a task on the arena and returns at once; tbb::parallel_for inside fn uses the
  // arena's threads. Every slot belongs to workers, so queued tasks run even with one thread.
  void Enqueue(std::function<void()> fn);

  // Runs fn on a thread of its own (work that waits, such as a Create's compile, and must not
  // hold an arena thread that steps could use); WaitForTasks waits for it too. fn must not throw.
  void RunOnThread(std::function<void()> fn);

  // Waits until every queued task has finished (returned from its function, not only answered
  // its call): the gRPC server must outlive the tasks that finish its calls.
  void WaitForTasks();

  // Waits for every queued task to finish.
  ~InstanceRegistry();

 private:
  grpc::Status Select(const std::string& tenant, const std::vector<std::uint64_t>& ids,
                      std::uint64_t group, std::vector<std::shared_ptr<Instance>>* out);
  // A random id, never 0, not among `taken`; under mutex_.
  template <class Map>
  static std::uint64_t FreshId(const Map& taken);
  static grpc::Status CallOnLiveInstances(
      const std::vector<std::shared_ptr<Instance>>& selected,
      const std::function<grpc::Status(std::vector<Instance*>&)>& fn);

  RegistryLimits limits_;
  int threads_;
  // TBB starts hardware_concurrency - 1 workers by default, because the thread that creates an
  // arena usually works in it too. Here no such thread joins: every slot of the arena is a
  // worker's, so the worker limit must be raised to `threads` (global_control counts the master).
  tbb::global_control worker_limit_;
  tbb::task_arena arena_;
  MemoryBudget* budget_;
  std::mutex mutex_;  // guards the maps
  std::map<std::uint64_t, std::shared_ptr<Instance>> instances_;
  std::map<std::uint64_t, std::vector<std::uint64_t>> groups_;
  std::map<std::string, std::size_t> tenant_instances_;  // live instances per tenant
  std::uint64_t next_sequence_ = 1;
  std::mutex pending_mutex_;
  std::condition_variable pending_done_;
  int pending_ = 0;  // queued or running tasks
  // The functions of the queued or running Enqueue tasks, owned here rather than by the TBB
  // tasks: LeakSanitizer does not scan the memory tbbmalloc maps for TBB's tasks, so a function
  // owned by a task that has answered its call but not yet been freed looked leaked to the fuzz
  // targets' leak check after each input. Under pending_mutex_.
  std::list<std::function<void()>> queued_;
};

}  // namespace alsim::server
