// step_fuzzer: alsim.v1.Simulator/Step with a fuzzed StepRequest (selection, actions and
// external-forces tensors, substeps, observations) on the pool of rpc_harness.h, which is reset
// after each input.
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
  alsim::v1::StepRequest request;
  if (!alsim::fuzz::ParseInput(data, size, &request)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  harness.Rewrite(request.mutable_instances());
  request.set_substeps(alsim::fuzz::RpcHarness::Substeps(request.substeps()));
  alsim::v1::StepResponse response;
  const auto context = harness.Context();
  const grpc::Status status = harness.stub().Step(context.get(), request, &response);
  alsim::fuzz::RpcHarness::Check(status, "Step");
  if (status.ok() &&
      (response.status_size() == 0 || response.status_size() != response.diagnostics_size())) {
    std::fprintf(stderr, "step_fuzzer: Step answered OK with %d statuses and %d diagnostics\n",
                 response.status_size(), response.diagnostics_size());
    std::abort();
  }
  harness.ResetPool();
  return 0;
}
