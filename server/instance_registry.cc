#include "server/instance_registry.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <thread>

#include <oneapi/tbb/info.h>

#include "engine/solver/solver.h"

namespace alsim::server {

InstanceRegistry::InstanceRegistry(const RegistryLimits& limits, int threads, MemoryBudget* budget)
    : limits_(limits),
      threads_(threads > 0 ? threads : tbb::info::default_concurrency()),
      worker_limit_(tbb::global_control::max_allowed_parallelism,
                    static_cast<std::size_t>(threads_) + 1),
      arena_(threads_, 0),
      budget_(budget) {}

void InstanceRegistry::WaitForTasks() {
  std::unique_lock<std::mutex> lock(pending_mutex_);
  pending_done_.wait(lock, [this] { return pending_ == 0; });
}

InstanceRegistry::~InstanceRegistry() { WaitForTasks(); }

void InstanceRegistry::Enqueue(std::function<void()> fn) {
  std::list<std::function<void()>>::iterator queued;
  {
    const std::lock_guard<std::mutex> lock(pending_mutex_);
    ++pending_;
    queued = queued_.insert(queued_.end(), std::move(fn));
  }
  arena_.enqueue([this, queued] {
    (*queued)();  // must not throw: an exception escaping a task would end the process
    const std::lock_guard<std::mutex> lock(pending_mutex_);
    queued_.erase(queued);
    if (--pending_ == 0) pending_done_.notify_all();
  });
}

void InstanceRegistry::RunOnThread(std::function<void()> fn) {
  {
    const std::lock_guard<std::mutex> lock(pending_mutex_);
    ++pending_;
  }
  std::thread([this, fn = std::move(fn)] {
    fn();
    const std::lock_guard<std::mutex> lock(pending_mutex_);
    if (--pending_ == 0) pending_done_.notify_all();
  }).detach();
}

template <class Map>
std::uint64_t InstanceRegistry::FreshId(const Map& taken) {
  for (;;) {
    std::uint64_t id = 0;
    // getrandom draws from the kernel's CSPRNG: ids cannot be guessed from other ids.
    if (getrandom(&id, sizeof id, 0) != static_cast<ssize_t>(sizeof id)) {
      static std::mt19937_64 fallback{std::random_device{}()};
      id = fallback();
    }
    id >>= 1;  // 63 bits: safe as a signed 64-bit integer in every client language
    if (id != 0 && taken.count(id) == 0) return id;
  }
}

grpc::Status InstanceRegistry::Create(const CreateSpec& spec,
                                      const std::function<grpc::Status()>& should_stop,
                                      std::uint64_t* group, std::vector<std::uint64_t>* ids) {
  const std::uint32_t count = spec.count;
  auto admit = [&]() -> grpc::Status {
    if (instances_.size() + count > limits_.max_instances) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "creating " + std::to_string(count) +
                  " instance(s) would exceed the server's limit of " +
                  std::to_string(limits_.max_instances) + " (" + std::to_string(instances_.size()) +
                  " live); destroy some or raise --max-instances"};
    }
    const std::size_t own = tenant_instances_.count(spec.tenant) != 0
                                ? tenant_instances_.at(spec.tenant)
                                : std::size_t{0};
    if (limits_.max_instances_per_tenant > 0 && own + count > limits_.max_instances_per_tenant) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "creating " + std::to_string(count) + " instance(s) would exceed the limit of " +
                  std::to_string(limits_.max_instances_per_tenant) + " per client (" +
                  std::to_string(own) + " live; --max-instances-per-tenant)"};
    }
    return grpc::Status::OK;
  };
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (grpc::Status status = admit(); !status.ok()) return status;
  }
  // The memory budget first, for the whole group: nothing is allocated that it cannot afford.
  const std::uint64_t per_instance = spec.scene.instance_bytes;
  if (budget_ != nullptr && per_instance > 0 && !budget_->TryReserve(per_instance * count)) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            std::to_string(count) + " instance(s) of this scene need about " +
                std::to_string((per_instance * count) >> 20) + " MiB (" +
                std::to_string(per_instance >> 10) +
                " KiB each), more than is left of the "
                "server's memory budget (" +
                std::to_string(budget_->limit() >> 20) + " MiB, --max-memory)"};
  }
  // Build the instances before taking the lock: Data allocates every buffer up front. Each one
  // takes over its share of the reservation as soon as it exists.
  std::uint64_t unclaimed = budget_ != nullptr ? per_instance * count : 0;
  std::vector<std::shared_ptr<Instance>> created;
  grpc::Status status;
  try {
    for (std::uint32_t k = 0; k < count && status.ok(); ++k) {
      auto instance = std::make_shared<Instance>();
      if (budget_ != nullptr) {
        instance->budget = budget_;
        instance->reserved_bytes = per_instance;
        unclaimed -= per_instance;
      }
      instance->instance_bytes = per_instance;
      instance->model_bytes = spec.scene.model_bytes;
      instance->tenant = spec.tenant;
      instance->source = spec.scene.source;
      instance->look = spec.scene.look;
      instance->scene = spec.scene.name;
      instance->max_episode_steps = spec.max_episode_steps;
      StartInstance(spec.scene.model, spec.options, spec.seed + k, spec.keyframe, instance.get());
      created.push_back(std::move(instance));
      if (should_stop != nullptr && k % 16 == 15) status = should_stop();
    }
  } catch (const std::bad_alloc&) {
    status = {grpc::StatusCode::RESOURCE_EXHAUSTED, "the server ran out of memory building " +
                                                        std::to_string(count) +
                                                        " instance(s); nothing was created"};
  }
  if (budget_ != nullptr) budget_->Release(unclaimed);
  if (status.ok() && should_stop != nullptr) status = should_stop();
  if (!status.ok()) return status;  // `created` frees the instances and their reservations
  const std::lock_guard<std::mutex> lock(mutex_);
  if (grpc::Status late = admit(); !late.ok()) {  // another Create came first
    return {late.error_code(), late.error_message() + "; nothing was created"};
  }
  *group = FreshId(groups_);
  std::vector<std::uint64_t>& members = groups_[*group];
  ids->clear();
  for (auto& instance : created) {
    instance->id = FreshId(instances_);
    instance->group = *group;
    instance->sequence = next_sequence_++;
    members.push_back(instance->id);
    ids->push_back(instance->id);
    instances_[instance->id] = std::move(instance);
  }
  tenant_instances_[spec.tenant] += count;
  return grpc::Status::OK;
}

grpc::Status InstanceRegistry::Adopt(std::shared_ptr<Instance> instance) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (instance->id == 0 || instance->group == 0 || instances_.count(instance->id) != 0) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "instance id " + std::to_string(instance->id) + " is taken"};
  }
  groups_[instance->group].push_back(instance->id);
  ++tenant_instances_[instance->tenant];
  instance->sequence = next_sequence_++;
  instances_[instance->id] = std::move(instance);
  return grpc::Status::OK;
}

std::vector<std::shared_ptr<Instance>> InstanceRegistry::All() {
  std::vector<std::shared_ptr<Instance>> all;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, instance] : instances_) all.push_back(instance);
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a->sequence < b->sequence; });
  return all;
}

grpc::Status InstanceRegistry::Select(const std::string& tenant,
                                      const std::vector<std::uint64_t>& ids, std::uint64_t group,
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
    // Another tenant's group is as unknown as one that never existed.
    if (found == groups_.end() || found->second.empty() ||
        instances_.at(found->second.front())->tenant != tenant) {
      return {grpc::StatusCode::NOT_FOUND, "no group " + std::to_string(group)};
    }
    chosen = &found->second;
  }
  for (const std::uint64_t id : *chosen) {
    const auto found = instances_.find(id);
    if (found == instances_.end() || found->second->tenant != tenant) {
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
    const std::string& tenant, const std::vector<std::uint64_t>& ids, std::uint64_t group,
    const std::function<grpc::Status(std::vector<Instance*>&)>& fn) {
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(tenant, ids, group, &selected);
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
    const std::string& tenant, const std::vector<std::uint64_t>& ids, std::uint64_t group,
    const std::function<grpc::Status(std::vector<Instance*>&)>& fn, bool* busy) {
  *busy = false;
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(tenant, ids, group, &selected);
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

grpc::Status InstanceRegistry::Check(const std::string& tenant,
                                     const std::vector<std::uint64_t>& ids, std::uint64_t group,
                                     std::vector<std::shared_ptr<const Model>>* models) {
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(tenant, ids, group, &selected);
  if (status.ok() && models != nullptr) {
    for (const auto& instance : selected) models->push_back(instance->model);
  }
  return status;
}

grpc::Status InstanceRegistry::Find(const std::string& tenant, std::uint64_t id,
                                    std::shared_ptr<const Instance>* instance) {
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(tenant, {id}, 0, &selected);
  if (status.ok()) *instance = selected.front();
  return status;
}

grpc::Status InstanceRegistry::Destroy(const std::string& tenant,
                                       const std::vector<std::uint64_t>& ids, std::uint64_t group,
                                       int* destroyed) {
  std::vector<std::shared_ptr<Instance>> selected;
  grpc::Status status = Select(tenant, ids, group, &selected);
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
    auto own = tenant_instances_.find(instance->tenant);
    if (own != tenant_instances_.end() && --own->second == 0) tenant_instances_.erase(own);
    ++*destroyed;
  }
  return grpc::Status::OK;
}

std::vector<InstanceSummary> InstanceRegistry::List(const std::string& tenant) {
  std::vector<std::shared_ptr<Instance>> all;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [id, instance] : instances_) {
      if (instance->tenant == tenant) all.push_back(instance);
    }
  }
  std::sort(all.begin(), all.end(),
            [](const auto& a, const auto& b) { return a->sequence < b->sequence; });
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

}  // namespace alsim::server
