// The shared half of the RPC fuzz targets: one real alsim-server in the fuzzing process
// (server::Server::Start on an ephemeral loopback port, no metrics, small limits), a client stub,
// and a pool of instances of built-in scenes that fuzzed requests are pointed at.
//
// Instance and group ids are random 63-bit numbers that a fuzzer cannot guess, so requests are
// rewritten before they are sent: a small id k (1 <= k < kPoolIdRange) becomes the id of pool
// instance (or group) (k - 1) mod n; 0 and larger ids go as they are (unset, or NOT_FOUND).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/client_context.h>
#include <grpcpp/support/status.h>

#include "alsim/v1/alsim.grpc.pb.h"
#include "server/server.h"

namespace alsim::fuzz {

inline constexpr std::uint64_t kPoolIdRange = 1024;

class RpcHarness {
 public:
  // Starts the server and creates the pool on first use; aborts if that fails.
  static RpcHarness& Get();

  alsim::v1::Simulator::Stub& stub() { return *stub_; }

  // A client context whose deadline is `timeout` from now.
  static std::unique_ptr<grpc::ClientContext> Context(
      std::chrono::milliseconds timeout = std::chrono::seconds(2));

  // Fuzzed ids -> pool ids (see the file comment).
  std::uint64_t InstanceId(std::uint64_t fuzzed) const;
  std::uint64_t GroupId(std::uint64_t fuzzed) const;
  void Rewrite(alsim::v1::InstanceSelection* selection) const;
  // Caps substeps that would run for long (within the server's limits, so cheap to refuse is
  // kept): values above the server's 10^6 stay, to reach its refusal.
  static std::uint32_t Substeps(std::uint32_t fuzzed);

  // Puts every pool instance back into its initial state (after calls that move or change them),
  // so that each input starts from the same server state.
  void ResetPool();
  // Destroys every instance that is not in the pool (left by Create) and re-creates pool groups
  // that lost instances (to Destroy), in their slots.
  void RestorePool();

  // Aborts (a finding) on a status the contract never gives for a request: INTERNAL, UNKNOWN,
  // DATA_LOSS, UNIMPLEMENTED, or UNAVAILABLE (the server is not shutting down). With
  // ALSIM_FUZZ_VERBOSE set, prints every status.
  static void Check(const grpc::Status& status, const char* rpc);

 private:
  struct PoolGroup {
    alsim::v1::CreateRequest request;
    std::uint64_t group = 0;
    std::vector<std::uint64_t> ids;
  };

  RpcHarness() = default;
  void Start();
  void CreateGroup(PoolGroup* group);
  void RebuildIds();

  std::unique_ptr<server::Server> server_;
  std::unique_ptr<alsim::v1::Simulator::Stub> stub_;
  std::vector<PoolGroup> groups_;
  std::vector<std::uint64_t> ids_;  // every pool instance, group by group
};

// An RPC target's body: parses `data` as `Message`; false when it does not parse.
template <class Message>
bool ParseInput(const std::uint8_t* data, std::size_t size, Message* message) {
  return message->ParseFromArray(data, static_cast<int>(size));
}

}  // namespace alsim::fuzz
