// A real server on ephemeral loopback ports, called through the C++ client.
#include "server/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

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

// A stream that sends one frame per 100 s ends as soon as another thread cancels it (the viewer
// does so when its browser leaves), and a canceller used before the call ends it at its start.
TEST_F(ServerTest, AStreamCancellerEndsAQuietStream) {
  client::Client client(server_->grpc_address());
  alsim::v1::CreateRequest create;
  create.mutable_scene()->set_builtin("box_stack");
  alsim::v1::CreateResponse created;
  ASSERT_TRUE(client.Create(create, &created).ok());
  alsim::v1::StreamStatesRequest request;
  request.mutable_instances()->add_instance_ids(created.instance_ids(0));
  request.set_rate_hz(0.01);
  client::StreamCanceller canceller;
  int frames = 0;
  std::thread cancel([&canceller] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    canceller.Cancel();
  });
  const auto started = std::chrono::steady_clock::now();
  const grpc::Status status = client.StreamStates(
      request, [&frames](const alsim::v1::StateFrame&) { return ++frames > 0; }, &canceller);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  cancel.join();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(frames, 1);      // the first frame is due at once, the next in 100 s
  EXPECT_LT(seconds, 60.0);  // ended by the cancel, long before the second frame
  client::StreamCanceller early;
  early.Cancel();
  frames = 0;
  EXPECT_TRUE(
      client
          .StreamStates(
              request, [&frames](const alsim::v1::StateFrame&) { return ++frames > 0; }, &early)
          .ok());
  EXPECT_EQ(frames, 0);
  alsim::v1::DestroyRequest destroy;
  destroy.mutable_instances()->set_group_id(created.group_id());
  alsim::v1::DestroyResponse destroyed;
  EXPECT_TRUE(client.Destroy(destroy, &destroyed).ok());
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

// ---- TLS and tokens through the C++ client --------------------------------------------------

// A throwaway CA and a server certificate for 127.0.0.1 and localhost, made with the openssl CLI
// in a temporary directory (removed at the end); ok() is false when openssl failed or is missing.
class TestPki {
 public:
  TestPki() {
    char pattern[] = "/tmp/alsim_pki_XXXXXX";
    if (mkdtemp(pattern) == nullptr) return;
    dir_ = pattern;
    std::ofstream(Path("openssl.cnf")) << "[req]\ndistinguished_name = dn\nprompt = no\n"
                                          "[dn]\nCN = unused\n"
                                          "[ca]\nbasicConstraints = critical,CA:TRUE\n"
                                          "keyUsage = critical,keyCertSign,cRLSign\n"
                                          "[server]\nbasicConstraints = CA:FALSE\n"
                                          "extendedKeyUsage = serverAuth\n"
                                          "subjectAltName = IP:127.0.0.1,DNS:localhost\n";
    std::ofstream(Path("tokens")) << "alice-token-0123456789 alice\n";
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    ok_ = Run("openssl req -x509" + key +
              " -keyout ca.key -out ca.pem -days 2 -subj /CN=alsim-test-ca -config openssl.cnf "
              "-extensions ca") &&
          Run("openssl req -new" + key +
              " -keyout server.key -out server.csr -subj /CN=localhost -config openssl.cnf") &&
          Run("openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
              "-out server.pem -extfile openssl.cnf -extensions server");
  }
  ~TestPki() {
    if (!dir_.empty()) (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  bool ok() const { return ok_; }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  bool Run(const std::string& command) const {
    return std::system(("cd '" + dir_ + "' && " + command + " >/dev/null 2>&1").c_str()) == 0;
  }

  std::string dir_;
  bool ok_ = false;
};

TEST(ClientCredentialsTest, TlsAndTokenReachEveryKindOfCall) {
  TestPki pki;
  if (!pki.ok()) GTEST_SKIP() << "the openssl CLI could not make certificates";
  server::ServerConfig config;
  config.listen_address = "127.0.0.1:0";
  config.metrics_address = "none";
  config.tls_cert = pki.Path("server.pem");
  config.tls_key = pki.Path("server.key");
  config.auth_tokens = pki.Path("tokens");
  std::string error;
  auto server = server::Server::Start(config, &error);
  ASSERT_NE(server, nullptr) << error;

  client::ClientOptions options;
  ASSERT_TRUE(client::ReadPemFile(pki.Path("ca.pem"), &options.tls_root_certs).ok());
  options.token = "alice-token-0123456789";
  client::Client client(server->grpc_address(), options);
  EXPECT_TRUE(client.tls());
  ASSERT_TRUE(client.WaitForConnection(std::chrono::seconds(5)));
  alsim::v1::ServerInfoResponse info;
  const grpc::Status info_status = client.ServerInfo(&info);
  ASSERT_TRUE(info_status.ok()) << info_status.error_message();
  alsim::v1::ListResponse list;
  EXPECT_TRUE(client.List(&list).ok());

  // The streams carry the token too: the server gets as far as the unknown instance.
  alsim::v1::StreamStatesRequest watch;
  watch.mutable_instances()->add_instance_ids(12345);
  EXPECT_EQ(
      client.StreamStates(watch, [](const alsim::v1::StateFrame&) { return true; }).error_code(),
      grpc::StatusCode::NOT_FOUND);
  alsim::v1::GetSceneRequest scene_request;
  scene_request.set_instance_id(12345);
  alsim::v1::GetSceneResponse scene;
  EXPECT_EQ(client.GetScene(scene_request, &scene).error_code(), grpc::StatusCode::NOT_FOUND);
  alsim::v1::StepRequest step;
  step.mutable_instances()->add_instance_ids(12345);
  auto stream = client.OpenStepStream();
  stream->Write(step);
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);

  // Without the token: UNAUTHENTICATED, streams included; health needs none.
  client::ClientOptions no_token = options;
  no_token.token.clear();
  client::Client anonymous(server->grpc_address(), no_token);
  EXPECT_EQ(anonymous.ServerInfo(&info).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(anonymous.GetScene(scene_request, &scene).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(
      anonymous.StreamStates(watch, [](const alsim::v1::StateFrame&) { return true; }).error_code(),
      grpc::StatusCode::UNAUTHENTICATED);
  auto anonymous_stream = anonymous.OpenStepStream();
  anonymous_stream->Write(step);
  EXPECT_EQ(anonymous_stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  client::HealthStatus health{};
  EXPECT_TRUE(anonymous.CheckHealth("", &health).ok());

  // Without TLS, or trusting another CA: the handshake fails, UNAVAILABLE.
  client::ClientOptions plain;
  plain.token = options.token;
  client::Client plain_client(server->grpc_address(), plain);
  EXPECT_EQ(plain_client.ServerInfo(&info).error_code(), grpc::StatusCode::UNAVAILABLE);
  client::ClientOptions wrong_name = options;
  wrong_name.tls_server_name = "elsewhere.example";
  client::Client wrong_name_client(server->grpc_address(), wrong_name);
  EXPECT_EQ(wrong_name_client.ServerInfo(&info).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(ClientCredentialsTest, RefusedOptionsFailEveryCallWithoutReachingTheServer) {
  client::ClientOptions options;
  options.tls_cert_chain = "-----BEGIN CERTIFICATE-----\n";  // and no key
  EXPECT_EQ(client::ValidateClientOptions(options).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  client::Client client("127.0.0.1:1", options);
  EXPECT_FALSE(client.WaitForConnection(std::chrono::milliseconds(10)));
  alsim::v1::ServerInfoResponse info;
  EXPECT_EQ(client.ServerInfo(&info).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  auto stream = client.OpenStepStream();
  EXPECT_FALSE(stream->Write(alsim::v1::StepRequest()));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  for (const std::string token : {"two words", "line\nbreak", "tab\there"}) {
    client::ClientOptions bad_token;
    bad_token.token = token;
    EXPECT_EQ(client::ValidateClientOptions(bad_token).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT)
        << token;
  }
  client::ClientOptions not_pem;
  not_pem.tls_root_certs = "not a certificate";
  EXPECT_EQ(client::ValidateClientOptions(not_pem).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(not_pem.tls_enabled());
  EXPECT_FALSE(client::ClientOptions().tls_enabled());
}

TEST(ClientCredentialsTest, TokenAndPemFiles) {
  const std::string path = ::testing::TempDir() + "alsim_token_" + std::to_string(getpid());
  std::string token;
  std::ofstream(path) << "  secret-token-0123456789\n\n";
  ASSERT_TRUE(client::ReadTokenFile(path, &token).ok());
  EXPECT_EQ(token, "secret-token-0123456789");
  std::ofstream(path) << "two tokens\n";
  EXPECT_EQ(client::ReadTokenFile(path, &token).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  std::ofstream(path) << "\n";
  EXPECT_EQ(client::ReadTokenFile(path, &token).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  std::string pem;
  const grpc::Status not_pem = client::ReadPemFile(path, &pem);
  EXPECT_EQ(not_pem.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(not_pem.error_message(), HasSubstr(path));
  std::remove(path.c_str());
  EXPECT_EQ(client::ReadTokenFile(path, &token).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(client::ReadPemFile(path, &pem).error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace alsim
