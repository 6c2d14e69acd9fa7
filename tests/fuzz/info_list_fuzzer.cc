// info_list_fuzzer: alsim.v1.Simulator/ServerInfo and /List, whose requests have no fields: the
// input is parsed as a ListRequest (its unknown fields are kept and sent) and goes to both calls.
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
  alsim::v1::ListRequest list;
  if (!alsim::fuzz::ParseInput(data, size, &list)) return 0;
  alsim::v1::ServerInfoRequest info;
  if (!info.ParseFromString(list.SerializeAsString())) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  alsim::v1::ServerInfoResponse info_response;
  grpc::Status status;
  {
    const auto context = harness.Context();
    status = harness.stub().ServerInfo(context.get(), info, &info_response);
  }
  alsim::fuzz::RpcHarness::Check(status, "ServerInfo");
  if (status.ok() && info_response.builtin_scenes_size() == 0) {
    std::fprintf(stderr, "info_list_fuzzer: ServerInfo lists no built-in scene\n");
    std::abort();
  }
  alsim::v1::ListResponse list_response;
  const auto context = harness.Context();
  status = harness.stub().List(context.get(), list, &list_response);
  alsim::fuzz::RpcHarness::Check(status, "List");
  if (status.ok() && list_response.instances_size() == 0) {
    std::fprintf(stderr, "info_list_fuzzer: List does not show the pool\n");
    std::abort();
  }
  return 0;
}
