// step_stream_fuzzer: alsim.v1.Simulator/StepStream with a fuzzed sequence of StepRequests on the
// pool of rpc_harness.h, which is reset after each input.
//
// Input: the wire format of `message { repeated alsim.v1.StepRequest requests = 1; }`, i.e. each
// request as field 1 (tag 0x0a, varint length, the serialized StepRequest); at most 16 are sent.
// Inputs holding any other field, or a request that does not parse, are skipped.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>

#include "tests/fuzz/rpc_harness.h"

namespace {

constexpr std::size_t kMaxRequests = 16;

bool ParseRequests(const std::uint8_t* data, std::size_t size,
                   std::vector<alsim::v1::StepRequest>* requests) {
  google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
  for (std::uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
    std::uint32_t length = 0;
    std::string bytes;
    if (tag != 0x0a || !in.ReadVarint32(&length) ||
        !in.ReadString(&bytes, static_cast<int>(length))) {
      return false;
    }
    if (requests->size() == kMaxRequests) return false;
    requests->emplace_back();
    if (!requests->back().ParseFromString(bytes)) return false;
  }
  return in.CurrentPosition() == static_cast<int>(size);  // not a malformed tag
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::fuzz::RpcHarness::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<alsim::v1::StepRequest> requests;
  if (!ParseRequests(data, size, &requests)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  const auto context = harness.Context(std::chrono::seconds(3));
  const auto stream = harness.stub().StepStream(context.get());
  for (alsim::v1::StepRequest& request : requests) {
    harness.Rewrite(request.mutable_instances());
    request.set_substeps(alsim::fuzz::RpcHarness::Substeps(request.substeps()));
    if (!stream->Write(request)) break;
  }
  stream->WritesDone();
  std::size_t answered = 0;
  alsim::v1::StepResponse response;
  while (stream->Read(&response)) ++answered;
  const grpc::Status status = stream->Finish();
  alsim::fuzz::RpcHarness::Check(status, "StepStream");
  if (status.ok() && answered != requests.size()) {
    std::fprintf(stderr, "step_stream_fuzzer: %zu requests, %zu replies, status OK\n",
                 requests.size(), answered);
    std::abort();
  }
  harness.ResetPool();
  return 0;
}
