// stream_states_fuzzer: alsim.v1.Simulator/StreamStates with a fuzzed StreamStatesRequest on the
// pool of rpc_harness.h: reads up to two frames within 300 ms, then cancels the stream.
// (A rate_hz that is NaN or tiny once overflowed the period's conversion; regressions/ keeps the
// reproducers, which StatePump::Open now refuses before converting.)
#include <cmath>
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
  alsim::v1::StreamStatesRequest request;
  if (!alsim::fuzz::ParseInput(data, size, &request)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  harness.Rewrite(request.mutable_instances());
  const auto context = harness.Context(std::chrono::milliseconds(300));
  const auto reader = harness.stub().StreamStates(context.get(), request);
  alsim::v1::StateFrame frame;
  bool open = true;
  for (int k = 0; k < 2 && open; ++k) {
    open = reader->Read(&frame);
    if (open && (frame.sequence() == 0 || frame.instance_ids_size() == 0)) {
      std::fprintf(stderr, "stream_states_fuzzer: a frame without sequence or instances\n");
      std::abort();
    }
  }
  // A stream still open is cancelled; one the server ended reports the server's status.
  if (open) context->TryCancel();
  alsim::fuzz::RpcHarness::Check(reader->Finish(), "StreamStates");
  return 0;
}
