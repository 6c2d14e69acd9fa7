// create_fuzzer: alsim.v1.Simulator/Create with a fuzzed CreateRequest (built-in names, scene
// text and assets compiled by the sandboxed alsim-scene-compiler, solver configs, counts) against
// the in-process server of rpc_harness.h. What a Create makes is destroyed after each input.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/rpc_harness.h"
#include "tests/fuzz/scene_input.h"

namespace {

// Scene text that hits a known bug (scene_input.h): skipped.
bool KnownBug(const alsim::v1::CreateRequest& request) {
  if (!request.scene().has_text()) return false;
  alsim::fuzz::SceneInput scene;
  scene.text = request.scene().text().text();
  for (const auto& [name, bytes] : request.scene().text().assets()) {
    scene.assets.push_back({name, bytes});
  }
  return alsim::fuzz::KnownBug(scene);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  alsim::fuzz::RpcHarness::Get();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  alsim::v1::CreateRequest request;
  if (!alsim::fuzz::ParseInput(data, size, &request) || KnownBug(request)) return 0;
  alsim::fuzz::RpcHarness& harness = alsim::fuzz::RpcHarness::Get();
  alsim::v1::CreateResponse response;
  const auto context = harness.Context(std::chrono::seconds(8));
  const grpc::Status status = harness.stub().Create(context.get(), request, &response);
  alsim::fuzz::RpcHarness::Check(status, "Create");
  if (status.ok()) {
    const std::uint32_t count = request.count() == 0 ? 1 : request.count();
    if (response.group_id() == 0 || response.instance_ids_size() != static_cast<int>(count)) {
      std::fprintf(stderr, "create_fuzzer: Create answered OK without its group or ids\n");
      std::abort();
    }
  }
  harness.RestorePool();
  return 0;
}
