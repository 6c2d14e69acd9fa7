// destroy_fuzzer: alsim.v1.Simulator/Destroy with a fuzzed DestroyRequest on the pool of
// rpc_harness.h; groups it destroys are re-created after each input, so the pool never empties.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/rpc_harness.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::fuzz::RpcHarness::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  alsim::v1::DestroyRequest request;
  if (!alsim::fuzz::ParseInput(data, size, &request)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  harness.Rewrite(request.mutable_instances());
  alsim::v1::DestroyResponse response;
  grpc::Status status;
  {
    const auto context = harness.Context();
    status = harness.stub().Destroy(context.get(), request, &response);
  }
  alsim::fuzz::RpcHarness::Check(status, "Destroy");
  harness.RestorePool();
  return 0;
}
