#include "server/instance_registry.h"

#include <algorithm>

#include <oneapi/tbb/info.h>

#include "engine/dynamics/kinematics.h"
#include "engine/solver/solver.h"

namespace alsim::server {

InstanceRegistry::InstanceRegistry(const RegistryLimits& limits, int threads)
    : limits_(limits),
      threads_(threads > 0 ? threads : tbb::info::default_concurrency()),
      worker_limit_(tbb::global_control::max_allowed_parallelism,
                    static_cast<std::size_t>(threads_) + 1),
      arena_(threads_, 0) {}

void InstanceRegistry::WaitForTasks() {
  std::unique_lock<std::mutex> lock(pending_mutex_);
  pending_done_.wait(lock, [this] { return pending_ == 0; });
}

InstanceRegistry::~InstanceRegistry() { WaitForTasks(); }

void InstanceRegistry::Enqueue(std::function<void()> fn) {
  {
    const std::lock_guard<std::mutex> lock(pending_mutex_);
    ++pending_;
  }
  arena_.enqueue([this, fn = std::move(fn)] {
    fn();
    const std::lock_guard<std::mutex> lock(pending_mutex_);
    if (--pending_ == 0) pending_done_.notify_all();
  });
}

grpc::Status InstanceRegistry::Create(const std::shared_ptr<const Model>& model,
                                      const std::string& scene, const StepOptions& options,
                                      std::uint32_t count, std::uint64_t seed, std::uint64_t* group,
                                      std::vector<std::uint64_t>* ids) {
  // Build the instances before taking the lock: Data allocates every buffer up front.
  std::vector<std::shared_ptr<Instance>> created;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (instances_.size() + count > limits_.max_instances) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "creating " + std::to_string(count) +
                  " instance(s) would exceed the server's limit of " +
                  std::to_string(limits_.max_instances) + " (" + std::to_string(instances_.size()) +
                  " live); destroy some or raise --max-instances"};
    }
  }
  for (std::uint32_t k = 0; k < count; ++k) {
    auto instance = std::make_shared<Instance>();
    instance->model = model;
    instance->scene = scene;
    instance->options = options;
    instance->data = std::make_unique<Data>(*model);
    instance->data->solver = MakeConstraintSolver(options.solver.type, *model);
    instance->rng.seed(seed + k);
    Kinematics(*model, *instance->data);
    created.push_back(std::move(instance));
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  if (instances_.size() + count > limits_.max_instances) {  // another Create came first
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "the server reached its limit of " + std::to_string(limits_.max_instances) +
                " instances while this group was being built; nothing was created"};
  }
  *group = next_group_++;
  std::vector<std::uint64_t>& members = groups_[*group];
  ids->clear();
  for (auto& instance : created) {
    instance->id = next_instance_++;
    instance->group = *group;
    members.push_back(instance->id);
    ids->push_back(instance->id);
    instances_[instance->id] = std::move(instance);
  }
  return grpc::Status::OK;
}

grpc::Status InstanceRegistry::Select(const std::vector<std::uint64_t>& ids, std::uint64_t group,
                                      std::vector<std::shared_ptr<Instance>>* out) {
  out->clear();
  if (ids.empty() == (group == 0)) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "select instances by instance_ids or by group_id (exactly one of the two)"};
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<std::uint64_t>* chosen = &ids;
  if (group != 0) {
    const auto found = groups_.find(group);
    if (found == groups_.end()) {
      return {grpc::StatusCode::NOT_FOUND, "no group " + std::to_string(group)};
    }
    chosen = &found->second;
  }
  for (const std::uint64_t id : *chosen) {
    const auto found = instances_.find(id);
    if (found == instances_.end()) {
      return {grpc::StatusCode::NOT_FOUND, "no instance " + std::to_string(id)};
    }
    out->push_back(found->second);
  }
  std::vector<std::uint64_t> sorted = *chosen;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "instance " + std::to_string(*std::adjacent_find(sorted.begin(), sorted.end())) +
                " is selected twice"};
  }
  return grpc::Status::OK;
}

grpc::Status InstanceRegistry::WithInstances(
    const std::vector<std::uint64_t>& ids, std::uint64_t group,
    const std::function<grpc::Status(std::vector<Instance*>&)>& fn) {
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(ids, group, &selected);
  if (!status.ok()) return status;
  std::vector<Instance*> by_id;
  for (const auto& instance : selected) by_id.push_back(instance.get());
  std::sort(by_id.begin(), by_id.end(),
            [](const Instance* a, const Instance* b) { return a->id < b->id; });
  std::vector<std::unique_lock<std::mutex>> locks;
  locks.reserve(by_id.size());
  for (Instance* instance : by_id) locks.emplace_back(instance->mutex);
  return CallOnLiveInstances(selected, fn);
}

// fn on the selected instances in request order, once their locks are held; NOT_FOUND if one was
// destroyed while the caller waited for its lock.
grpc::Status InstanceRegistry::CallOnLiveInstances(
    const std::vector<std::shared_ptr<Instance>>& selected,
    const std::function<grpc::Status(std::vector<Instance*>&)>& fn) {
  std::vector<Instance*> ordered;
  for (const auto& instance : selected) {
    if (instance->destroyed) {
      return {grpc::StatusCode::NOT_FOUND,
              "instance " + std::to_string(instance->id) + " was destroyed"};
    }
    ordered.push_back(instance.get());
  }
  return fn(ordered);
}

grpc::Status InstanceRegistry::TryWithInstances(
    const std::vector<std::uint64_t>& ids, std::uint64_t group,
    const std::function<grpc::Status(std::vector<Instance*>&)>& fn, bool* busy) {
  *busy = false;
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(ids, group, &selected);
  if (!status.ok()) return status;
  std::vector<std::unique_lock<std::mutex>> locks;
  locks.reserve(selected.size());
  for (const auto& instance : selected) {
    std::unique_lock<std::mutex> lock(instance->mutex, std::try_to_lock);
    if (!lock.owns_lock()) {
      *busy = true;
      return grpc::Status::OK;
    }
    locks.push_back(std::move(lock));
  }
  return CallOnLiveInstances(selected, fn);
}

grpc::Status InstanceRegistry::Check(const std::vector<std::uint64_t>& ids, std::uint64_t group) {
  std::vector<std::shared_ptr<Instance>> selected;
  return Select(ids, group, &selected);
}

grpc::Status InstanceRegistry::Destroy(const std::vector<std::uint64_t>& ids, std::uint64_t group,
                                       int* destroyed) {
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(ids, group, &selected);
  if (!status.ok()) return status;
  *destroyed = 0;
  for (const auto& instance : selected) {
    {
      const std::lock_guard<std::mutex> wait_for_users(instance->mutex);
      if (instance->destroyed) continue;
      instance->destroyed = true;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    instances_.erase(instance->id);
    auto members = groups_.find(instance->group);
    if (members != groups_.end()) {
      auto& list = members->second;
      list.erase(std::remove(list.begin(), list.end(), instance->id), list.end());
      if (list.empty()) groups_.erase(members);
    }
    ++*destroyed;
  }
  return grpc::Status::OK;
}

std::vector<InstanceSummary> InstanceRegistry::List() {
  std::vector<std::shared_ptr<Instance>> all;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, instance] : instances_) all.push_back(instance);
  }
  std::vector<InstanceSummary> summaries;
  for (const auto& instance : all) {
    if (instance->destroyed) continue;
    // id, group, scene and options never change after Create.
    summaries.push_back({instance->id, instance->group, instance->scene,
                         SolverName(instance->options.solver.type), instance->published_time,
                         instance->steps, instance->diverged});
  }
  return summaries;
}

std::size_t InstanceRegistry::size() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return instances_.size();
}

void ResetInstance(Instance& instance, double noise) {
  const Model& m = *instance.model;
  Data& d = *instance.data;
  std::unique_ptr<ConstraintSolver> solver = std::move(d.solver);
  d = Data(m);
  d.solver = std::move(solver);  // stateless between steps; keeps its allocations
  if (noise > 0) {
    std::uniform_real_distribution<double> uniform(-noise, noise);
    for (int j = 0; j < m.njnt; ++j) {
      if (m.jnt_type[j] == JointType::kHinge || m.jnt_type[j] == JointType::kSlide) {
        d.qpos[m.jnt_qpos_adr[j]] += uniform(instance.rng);
      }
    }
    for (int i = 0; i < m.nv; ++i) d.qvel[i] += uniform(instance.rng);
  }
  Kinematics(m, d);
  instance.diverged = false;
  instance.published_time = d.time;
}

}  // namespace alsim::server
