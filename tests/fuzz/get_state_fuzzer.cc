// get_state_fuzzer: alsim.v1.Simulator/GetState with a fuzzed GetStateRequest on the pool of
// rpc_harness.h. A state the server gives must be one it takes back (SetState).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/rpc_harness.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::fuzz::RpcHarness::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  alsim::v1::GetStateRequest request;
  if (!alsim::fuzz::ParseInput(data, size, &request)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  request.set_instance_id(harness.InstanceId(request.instance_id()));
  alsim::v1::GetStateResponse response;
  grpc::Status status;
  {
    const auto context = harness.Context();
    status = harness.stub().GetState(context.get(), request, &response);
  }
  alsim::fuzz::RpcHarness::Check(status, "GetState");
  if (!status.ok()) return 0;
  alsim::v1::SetStateRequest back;
  back.set_instance_id(request.instance_id());
  back.set_state(response.state());
  alsim::v1::SetStateResponse ignored;
  const auto context = harness.Context();
  status = harness.stub().SetState(context.get(), back, &ignored);
  alsim::fuzz::RpcHarness::Check(status, "SetState");
  if (!status.ok() && status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
    std::fprintf(stderr, "get_state_fuzzer: SetState refused GetState's own state: %s\n",
                 status.error_message().c_str());
    std::abort();
  }
  return 0;
}
