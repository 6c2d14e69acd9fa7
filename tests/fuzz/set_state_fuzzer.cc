// set_state_fuzzer: alsim.v1.Simulator/SetState with a fuzzed SetStateRequest on the pool of
// rpc_harness.h, which is reset after each input. A state whose last 8 bytes (the snapshot's
// checksum) are zero gets its real checksum before it is sent (snapshot_checksum.h), so that
// mutations reach the checks behind it; the seeds are real snapshots of the pool's scenes, with
// their checksum and with it zeroed.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/rpc_harness.h"
#include "tests/fuzz/snapshot_checksum.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::fuzz::RpcHarness::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  alsim::v1::SetStateRequest request;
  if (!alsim::fuzz::ParseInput(data, size, &request)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  request.set_instance_id(harness.InstanceId(request.instance_id()));
  alsim::fuzz::FillZeroChecksum(request.mutable_state());
  alsim::v1::SetStateResponse response;
  const auto context = harness.Context();
  const grpc::Status status = harness.stub().SetState(context.get(), request, &response);
  alsim::fuzz::RpcHarness::Check(status, "SetState");
  harness.ResetPool();
  return 0;
}
