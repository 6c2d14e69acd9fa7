// A real server on ephemeral loopback ports, called through the C++ client.
#include "server/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "client/client.h"
#include "engine/core/build_info.h"
#include "tests/support/http_get.h"

namespace alsim {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using HealthResponse = grpc::health::v1::HealthCheckResponse;

// One server for the whole suite: a metrics endpoint that has served a scrape takes ~2 s to
// stop (shared/research/deps-probe.md, pitfall 2).
class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server::ServerConfig config;
    config.listen_address = "127.0.0.1:0";
    config.metrics_address = "127.0.0.1:0";
    std::string error;
    server_ = server::Server::Start(config, &error).release();
    ASSERT_NE(server_, nullptr) << error;
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static server::Server* server_;
};

server::Server* ServerTest::server_ = nullptr;

TEST_F(ServerTest, BindsEphemeralPorts) {
  EXPECT_THAT(server_->grpc_address(), ContainsRegex("^127\\.0\\.0\\.1:[1-9][0-9]*$"));
  EXPECT_THAT(server_->metrics_url(),
              ContainsRegex("^http://127\\.0\\.0\\.1:[1-9][0-9]*/metrics$"));
}

TEST_F(ServerTest, HealthIsServingForTheServerAndTheSimulatorService) {
  client::Client client(server_->grpc_address());
  for (const std::string service : {"", "alsim.v1.Simulator"}) {
    client::HealthStatus status = HealthResponse::UNKNOWN;
    const grpc::Status rpc = client.CheckHealth(service, &status);
    ASSERT_TRUE(rpc.ok()) << rpc.error_message();
    EXPECT_EQ(status, HealthResponse::SERVING) << "service '" << service << "'";
  }
}

TEST_F(ServerTest, HealthOfAnUnknownServiceIsNotFound) {
  client::Client client(server_->grpc_address());
  client::HealthStatus status = HealthResponse::UNKNOWN;
  EXPECT_EQ(client.CheckHealth("no.such.Service", &status).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServerTest, ServerInfoReportsVersionAndBuild) {
  client::Client client(server_->grpc_address());
  alsim::v1::ServerInfoResponse info;
  const grpc::Status rpc = client.ServerInfo(&info);
  ASSERT_TRUE(rpc.ok()) << rpc.error_message();
  EXPECT_EQ(info.version(), EngineBuildInfo().version);
  EXPECT_THAT(info.version(), ContainsRegex("^[0-9]+\\.[0-9]+\\.[0-9]+$"));
  EXPECT_FALSE(info.git_revision().empty());
  EXPECT_FALSE(info.build_type().empty());
  EXPECT_EQ(info.dependencies().at("mujoco"), "2.2.2");
  EXPECT_EQ(info.dependencies().count("grpc"), 1u);
  EXPECT_GE(info.hardware_threads(), 1u);
  EXPECT_GE(info.uptime_seconds(), 0.0);
}

TEST_F(ServerTest, MetricsEndpointServesBuildInfo) {
  const auto response = testing::HttpGet(server_->metrics_url());
  ASSERT_EQ(response.status, 200) << response.error;
  EXPECT_THAT(response.body, HasSubstr("# TYPE alsim_build_info gauge"));
  EXPECT_THAT(response.body, ContainsRegex("alsim_build_info\\{[^}]*version=\"" +
                                           EngineBuildInfo().version + "\"[^}]*\\} 1"));
  EXPECT_THAT(response.body, ContainsRegex("alsim_build_info\\{[^}]*mujoco_version=\"2\\.2\\.2\""));
}

TEST(ServerStartTest, ABusyPortIsAClearError) {
  server::ServerConfig config;
  config.listen_address = "127.0.0.1:0";
  config.metrics_address = "none";
  std::string error;
  auto first = server::Server::Start(config, &error);
  ASSERT_NE(first, nullptr) << error;

  config.listen_address = first->grpc_address();
  auto second = server::Server::Start(config, &error);
  EXPECT_EQ(second, nullptr);
  EXPECT_THAT(error, HasSubstr("cannot listen on " + first->grpc_address()));
}

TEST(ServerStartTest, ServesOnAUnixSocket) {
  const std::string path =
      ::testing::TempDir() + "alsim_test_" + std::to_string(getpid()) + ".sock";
  server::ServerConfig config;
  config.listen_address = "unix:" + path;
  config.metrics_address = "none";
  std::string error;
  auto server = server::Server::Start(config, &error);
  ASSERT_NE(server, nullptr) << error;
  EXPECT_EQ(server->grpc_address(), "unix:" + path);
  EXPECT_TRUE(server->metrics_url().empty());

  client::Client client(server->grpc_address());
  alsim::v1::ServerInfoResponse info;
  ASSERT_TRUE(client.ServerInfo(&info).ok());
  EXPECT_EQ(info.version(), EngineBuildInfo().version);
}

TEST(ServerStartTest, ShutdownReportsNotServingAndRefusesCalls) {
  server::ServerConfig config;
  config.listen_address = "127.0.0.1:0";
  config.metrics_address = "none";
  std::string error;
  auto server = server::Server::Start(config, &error);
  ASSERT_NE(server, nullptr) << error;
  client::Client client(server->grpc_address(), std::chrono::milliseconds(500));
  alsim::v1::ServerInfoResponse info;
  ASSERT_TRUE(client.ServerInfo(&info).ok());

  server->Shutdown(std::chrono::milliseconds(100));
  EXPECT_FALSE(client.ServerInfo(&info).ok());
  server->Shutdown(std::chrono::milliseconds(100));  // idempotent
}

}  // namespace
}  // namespace alsim
