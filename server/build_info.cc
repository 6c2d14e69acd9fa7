#include "server/build_info.h"

#include <google/protobuf/stubs/common.h>
#include <grpcpp/grpcpp.h>

namespace alsim::server {

const BuildInfo& ServerBuildInfo() {
  static const BuildInfo info = [] {
    BuildInfo server_info = EngineBuildInfo();
    server_info.dependencies.emplace_back("grpc", grpc::Version());
    server_info.dependencies.emplace_back(
        "protobuf", google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION));
    return server_info;
  }();
  return info;
}

}  // namespace alsim::server
