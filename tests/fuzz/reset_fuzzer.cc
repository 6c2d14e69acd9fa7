// reset_fuzzer: alsim.v1.Simulator/Reset with a fuzzed ResetRequest (selection, seeds, noise,
// observations) on the pool of rpc_harness.h, which is reset to its initial state after each input.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/rpc_harness.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::fuzz::RpcHarness::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  alsim::v1::ResetRequest request;
  if (!alsim::fuzz::ParseInput(data, size, &request)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  harness.Rewrite(request.mutable_instances());
  alsim::v1::ResetResponse response;
  const auto context = harness.Context();
  const grpc::Status status = harness.stub().Reset(context.get(), request, &response);
  alsim::fuzz::RpcHarness::Check(status, "Reset");
  harness.ResetPool();
  return 0;
}
