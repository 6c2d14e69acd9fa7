#include "engine/core/build_info.h"

#include <cholmod.h>
#include <mujoco/mujoco.h>
#include <oneapi/tbb/version.h>
#include <Eigen/Core>

#include "alsim/build_config.h"

namespace alsim {
namespace {

// mj_version() encodes major.minor.patch as one integer (222 for 2.2.2).
std::string MujocoVersion() {
  const int v = mj_version();
  return std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) + "." + std::to_string(v % 10);
}

BuildInfo MakeEngineBuildInfo() {
  BuildInfo info;
  info.version = ALSIM_VERSION;
  info.git_revision = ALSIM_GIT_REVISION;
  info.build_type = ALSIM_BUILD_TYPE;
  info.compiler = ALSIM_COMPILER;
  info.sanitizer = ALSIM_SANITIZER;
  info.dependencies = {
      {"eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
                    "." + std::to_string(EIGEN_MINOR_VERSION)},
      {"onetbb", TBB_runtime_version()},
      {"cholmod", std::to_string(CHOLMOD_MAIN_VERSION) + "." + std::to_string(CHOLMOD_SUB_VERSION) +
                      "." + std::to_string(CHOLMOD_SUBSUB_VERSION)},
      {"mujoco", MujocoVersion()},
  };
  return info;
}

}  // namespace

const BuildInfo& EngineBuildInfo() {
  static const BuildInfo info = MakeEngineBuildInfo();
  return info;
}

}  // namespace alsim
