#include "tests/fuzz/rpc_harness.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include "server/server_config.h"

namespace alsim::fuzz {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "rpc fuzz harness: %s\n", what.c_str());
  std::abort();
}

alsim::v1::CreateRequest PoolRequest(const char* scene, std::uint32_t count, const char* solver) {
  alsim::v1::CreateRequest request;
  request.mutable_scene()->set_builtin(scene);
  request.set_count(count);
  request.set_seed(7);
  if (solver != nullptr) request.mutable_solver()->set_solver(solver);
  return request;
}

}  // namespace

RpcHarness& RpcHarness::Get() {
  static RpcHarness* const harness = [] {
    auto* created = new RpcHarness();  // never destroyed: the server lives as long as the process
    created->Start();
    return created;
  }();
  return *harness;
}

void RpcHarness::Start() {
  server::ServerConfig config;
  config.listen_address = "127.0.0.1:0";
  config.metrics_address = "none";
  config.threads = 2;
  config.max_instances = 64;
  config.max_message_bytes = 8u << 20;
  config.max_scene_bytes = 1u << 20;
  config.max_iterations = 1000;
  config.max_call_iterations = 20000;
  config.max_call_seconds = 1;
  config.max_memory = 1ull << 30;
  config.max_compile_seconds = 5;
  config.max_compiles = 2;
  // The scene compiler is built with ASan, which reserves terabytes of address space for its
  // shadow memory before main: an address-space limit would make every allocation fail.
  config.max_compile_memory = 1ull << 46;
  config.reflection = false;
  // No cache of unused scenes: a scene's model is freed with its last instance, so what an input
  // leaves behind does not depend on the inputs before it.
  config.scene_cache = 0;
  // alsim-scene-compiler is found next to this executable (TREE/bin/fuzz, its instrumented copy).
  std::string error;
  server_ = server::Server::Start(config, &error);
  if (server_ == nullptr) Die("the server does not start: " + error);
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(64 << 20);
  arguments.SetMaxSendMessageSize(64 << 20);
  stub_ = alsim::v1::Simulator::NewStub(grpc::CreateCustomChannel(
      server_->grpc_address(), grpc::InsecureChannelCredentials(), arguments));

  groups_.resize(4);
  groups_[0].request = PoolRequest("box_stack", 2, nullptr);
  groups_[1].request = PoolRequest("quadruped_drop_8", 2, nullptr);
  groups_[2].request = PoolRequest("box_stack", 1, "pgs");
  groups_[3].request = PoolRequest("box_incline", 1, "admm-nosub");
  for (PoolGroup& group : groups_) CreateGroup(&group);
  RebuildIds();
}

void RpcHarness::CreateGroup(PoolGroup* group) {
  alsim::v1::CreateResponse response;
  const auto context = Context(std::chrono::seconds(120));
  const grpc::Status status = stub_->Create(context.get(), group->request, &response);
  if (!status.ok()) {
    Die("cannot create the pool's " + group->request.scene().builtin() + ": " +
        status.error_message());
  }
  group->group = response.group_id();
  group->ids.assign(response.instance_ids().begin(), response.instance_ids().end());
}

void RpcHarness::RebuildIds() {
  ids_.clear();
  for (const PoolGroup& group : groups_)
    ids_.insert(ids_.end(), group.ids.begin(), group.ids.end());
}

std::unique_ptr<grpc::ClientContext> RpcHarness::Context(std::chrono::milliseconds timeout) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

std::uint64_t RpcHarness::InstanceId(std::uint64_t fuzzed) const {
  if (fuzzed == 0 || fuzzed >= kPoolIdRange) return fuzzed;
  return ids_[(fuzzed - 1) % ids_.size()];
}

std::uint64_t RpcHarness::GroupId(std::uint64_t fuzzed) const {
  if (fuzzed == 0 || fuzzed >= kPoolIdRange) return fuzzed;
  return groups_[(fuzzed - 1) % groups_.size()].group;
}

void RpcHarness::Rewrite(alsim::v1::InstanceSelection* selection) const {
  for (int k = 0; k < selection->instance_ids_size(); ++k) {
    selection->set_instance_ids(k, InstanceId(selection->instance_ids(k)));
  }
  selection->set_group_id(GroupId(selection->group_id()));
}

std::uint32_t RpcHarness::Substeps(std::uint32_t fuzzed) {
  if (fuzzed > 1000000) return fuzzed;
  return fuzzed % 8;
}

void RpcHarness::ResetPool() {
  alsim::v1::ResetRequest request;
  for (const std::uint64_t id : ids_) request.mutable_instances()->add_instance_ids(id);
  alsim::v1::ResetResponse response;
  const auto context = Context(std::chrono::seconds(30));
  const grpc::Status status = stub_->Reset(context.get(), request, &response);
  if (!status.ok()) Die("cannot reset the pool: " + status.error_message());
}

void RpcHarness::RestorePool() {
  alsim::v1::ListResponse listed;
  {
    const auto context = Context(std::chrono::seconds(30));
    const grpc::Status status = stub_->List(context.get(), alsim::v1::ListRequest(), &listed);
    if (!status.ok()) Die("cannot list the instances: " + status.error_message());
  }
  std::set<std::uint64_t> live;
  for (const alsim::v1::InstanceInfo& info : listed.instances()) live.insert(info.instance_id());
  const std::set<std::uint64_t> pool(ids_.begin(), ids_.end());
  alsim::v1::DestroyRequest strays;
  for (const std::uint64_t id : live) {
    if (pool.count(id) == 0) strays.mutable_instances()->add_instance_ids(id);
  }
  std::vector<PoolGroup*> broken;
  for (PoolGroup& group : groups_) {
    bool whole = true;
    for (const std::uint64_t id : group.ids) whole = whole && live.count(id) != 0;
    if (whole) continue;
    for (const std::uint64_t id : group.ids) {
      if (live.count(id) != 0) strays.mutable_instances()->add_instance_ids(id);
    }
    broken.push_back(&group);
  }
  // Strays first: the server's instance limit must leave room for the re-created groups.
  if (strays.instances().instance_ids_size() > 0) {
    alsim::v1::DestroyResponse destroyed;
    const auto context = Context(std::chrono::seconds(30));
    const grpc::Status status = stub_->Destroy(context.get(), strays, &destroyed);
    if (!status.ok()) Die("cannot destroy stray instances: " + status.error_message());
  }
  for (PoolGroup* group : broken) CreateGroup(group);
  if (!broken.empty()) RebuildIds();
}

void RpcHarness::Check(const grpc::Status& status, const char* rpc) {
  // ALSIM_FUZZ_VERBOSE=1 prints every answer (to check seeds and reproducers).
  static const bool verbose = std::getenv("ALSIM_FUZZ_VERBOSE") != nullptr;
  if (verbose) {
    std::fprintf(stderr, "%s: %d %s\n", rpc, static_cast<int>(status.error_code()),
                 status.error_message().c_str());
  }
  switch (status.error_code()) {
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::DATA_LOSS:
    case grpc::StatusCode::UNIMPLEMENTED:
    case grpc::StatusCode::UNAVAILABLE:
      Die(std::string(rpc) + " answered " + std::to_string(status.error_code()) + ": " +
          status.error_message());
    default:
      return;
  }
}

}  // namespace alsim::fuzz
