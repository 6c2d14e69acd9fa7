#include "server/metrics.h"

#include <prometheus/gauge.h>

#include "server/build_info.h"

namespace alsim::server {
namespace {

std::string DependencyVersion(const BuildInfo& info, const std::string& name) {
  for (const auto& [library, version] : info.dependencies) {
    if (library == name) return version;
  }
  return "unknown";
}

}  // namespace

ServerMetrics::ServerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  const BuildInfo& info = ServerBuildInfo();
  prometheus::BuildGauge()
      .Name("alsim_build_info")
      .Help("Build information of the running alsim server; the value is always 1")
      .Register(*registry_)
      .Add({{"version", info.version},
            {"git_revision", info.git_revision},
            {"build_type", info.build_type},
            {"grpc_version", DependencyVersion(info, "grpc")},
            {"mujoco_version", DependencyVersion(info, "mujoco")}})
      .Set(1);
}

}  // namespace alsim::server
