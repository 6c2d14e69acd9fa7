#include "server/simulator_service.h"

#include <thread>

#include "server/build_info.h"

namespace alsim::server {

SimulatorService::SimulatorService() : started_(std::chrono::steady_clock::now()) {}

grpc::ServerUnaryReactor* SimulatorService::ServerInfo(grpc::CallbackServerContext* context,
                                                       const alsim::v1::ServerInfoRequest*,
                                                       alsim::v1::ServerInfoResponse* response) {
  const BuildInfo& info = ServerBuildInfo();
  response->set_version(info.version);
  response->set_git_revision(info.git_revision);
  response->set_build_type(info.build_type);
  response->set_compiler(info.compiler);
  response->set_sanitizer(info.sanitizer);
  for (const auto& [library, version] : info.dependencies) {
    (*response->mutable_dependencies())[library] = version;
  }
  response->set_hardware_threads(std::thread::hardware_concurrency());
  response->set_uptime_seconds(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());

  auto* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace alsim::server
