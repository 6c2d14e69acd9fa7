#include "engine/core/build_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <map>

#include "server/build_info.h"

namespace alsim {
namespace {

using ::testing::MatchesRegex;

std::map<std::string, std::string> AsMap(const BuildInfo& info) {
  return {info.dependencies.begin(), info.dependencies.end()};
}

TEST(BuildInfoTest, VersionIsTheProjectVersion) {
  EXPECT_EQ(EngineBuildInfo().version, ALSIM_TEST_PROJECT_VERSION);
}

TEST(BuildInfoTest, EngineReportsItsNumericalLibraries) {
  const auto dependencies = AsMap(EngineBuildInfo());
  ASSERT_EQ(dependencies.count("mujoco"), 1u);
  // The version of the libmujoco actually loaded must be the 2.2.2 the importer is written for.
  EXPECT_EQ(dependencies.at("mujoco"), "2.2.2");
  EXPECT_EQ(mj_version(), 222);
  for (const char* library : {"eigen", "onetbb", "cholmod"}) {
    ASSERT_EQ(dependencies.count(library), 1u) << library;
    EXPECT_THAT(dependencies.at(library), MatchesRegex("[0-9]+\\.[0-9]+(\\.[0-9]+)?")) << library;
  }
  EXPECT_EQ(dependencies.count("grpc"), 0u) << "the engine must not link gRPC";
}

TEST(BuildInfoTest, ServerAddsTheRpcLibraries) {
  const auto dependencies = AsMap(server::ServerBuildInfo());
  EXPECT_THAT(dependencies.at("grpc"), MatchesRegex("1\\.[0-9]+\\.[0-9]+"));
  EXPECT_THAT(dependencies.at("protobuf"), MatchesRegex("3\\.[0-9]+\\.[0-9]+"));
  EXPECT_EQ(dependencies.at("mujoco"), "2.2.2");
}

}  // namespace
}  // namespace alsim
