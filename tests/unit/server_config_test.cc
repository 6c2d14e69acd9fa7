#include "server/server_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "server/batch_step.h"

namespace alsim::server {
namespace {

using ::testing::HasSubstr;

EnvironmentLookup FakeEnvironment(const std::map<std::string, std::string>& variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

ConfigParseResult Parse(const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& environment = {}) {
  return ParseServerConfig(args, FakeEnvironment(environment));
}

TEST(ServerConfigTest, DefaultsServeOnLoopback) {
  const auto result = Parse({});
  ASSERT_TRUE(result.config);
  EXPECT_EQ(result.config->listen_address, "127.0.0.1:50051");
  EXPECT_EQ(result.config->metrics_address, "127.0.0.1:9464");
  EXPECT_TRUE(result.config->metrics_enabled());
}

TEST(ServerConfigTest, FlagsInBothSpellings) {
  const auto result =
      Parse({"--listen", "0.0.0.0:7000", "--metrics=127.0.0.1:0", "--shutdown-grace", "0.5"});
  ASSERT_TRUE(result.config) << result.message;
  EXPECT_EQ(result.config->listen_address, "0.0.0.0:7000");
  EXPECT_EQ(result.config->metrics_address, "127.0.0.1:0");
  EXPECT_DOUBLE_EQ(result.config->shutdown_grace_seconds, 0.5);
}

TEST(ServerConfigTest, UnixSocketAndDisabledMetrics) {
  const auto result = Parse({"--listen", "unix:/tmp/alsim.sock", "--metrics", "none"});
  ASSERT_TRUE(result.config) << result.message;
  EXPECT_EQ(result.config->listen_address, "unix:/tmp/alsim.sock");
  EXPECT_FALSE(result.config->metrics_enabled());
}

TEST(ServerConfigTest, EnvironmentSetsAndFlagsWin) {
  const auto from_env = Parse({}, {{"ALSIM_LISTEN", "127.0.0.1:6000"}, {"ALSIM_METRICS", "none"}});
  ASSERT_TRUE(from_env.config);
  EXPECT_EQ(from_env.config->listen_address, "127.0.0.1:6000");
  EXPECT_FALSE(from_env.config->metrics_enabled());

  const auto flag_wins =
      Parse({"--listen", "127.0.0.1:7000"}, {{"ALSIM_LISTEN", "127.0.0.1:6000"}});
  ASSERT_TRUE(flag_wins.config);
  EXPECT_EQ(flag_wins.config->listen_address, "127.0.0.1:7000");
}

TEST(ServerConfigTest, BadInputIsAUsageErrorThatSaysWhy) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const Case cases[] = {
      {{"--bogus"}, "unknown option '--bogus'"},
      {{"--listen"}, "--listen needs a value"},
      {{"--listen", "localhost"}, "is not host:port or unix:PATH"},
      {{"--listen", "127.0.0.1:99999"}, "invalid port '99999'"},
      {{"--metrics", "127.0.0.1:http"}, "invalid port 'http'"},
      {{"--listen", "unix:"}, "needs a socket path"},
      {{"--shutdown-grace", "-1"}, "not a non-negative number"},
      {{"--shutdown-grace", "soon"}, "not a non-negative number"},
  };
  for (const auto& c : cases) {
    const auto result = Parse(c.args);
    EXPECT_FALSE(result.config) << c.args[0];
    EXPECT_EQ(result.exit_code, 2) << c.args[0];
    EXPECT_THAT(result.message, HasSubstr(c.expected));
    EXPECT_THAT(result.message, HasSubstr("--help"));
  }
}

TEST(ServerConfigTest, BadEnvironmentNamesTheVariable) {
  const auto result = Parse({}, {{"ALSIM_METRICS", "nowhere"}});
  EXPECT_FALSE(result.config);
  EXPECT_THAT(result.message, HasSubstr("$ALSIM_METRICS"));
}

TEST(ServerConfigTest, HelpDocumentsEveryFlagAndVariable) {
  const auto result = Parse({"--help"});
  EXPECT_FALSE(result.config);
  EXPECT_EQ(result.exit_code, 0);
  for (const char* text :
       {"--listen", "ALSIM_LISTEN", "--metrics", "ALSIM_METRICS", "--shutdown-grace",
        "ALSIM_SHUTDOWN_GRACE", "127.0.0.1:50051", "127.0.0.1:9464", "unix:PATH", "--version"}) {
    EXPECT_THAT(result.message, HasSubstr(text));
  }
}

TEST(ServerConfigTest, ServiceLimitsAndThreads) {
  const auto result = Parse({"--threads", "3", "--max-instances=10", "--max-message-bytes",
                             "1048576", "--scenes-dir", "/srv/scenes"},
                            {{"ALSIM_MAX_SCENE_BYTES", "2048"}, {"ALSIM_THREADS", "8"}});
  ASSERT_TRUE(result.config) << result.message;
  EXPECT_EQ(result.config->threads, 3) << "the flag wins over $ALSIM_THREADS";
  EXPECT_EQ(result.config->max_instances, 10u);
  EXPECT_EQ(result.config->max_message_bytes, 1048576u);
  EXPECT_EQ(result.config->max_scene_bytes, 2048u);
  EXPECT_EQ(result.config->scenes_dir, "/srv/scenes");
  EXPECT_GT(ServerConfig{}.max_message_bytes, 4u << 20) << "above gRPC's 4 MiB default";
}

TEST(ServerConfigTest, BadLimitsAreUsageErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--threads", "-1"},
                                               {"--max-instances", "0"},
                                               {"--max-message-bytes", "12x"},
                                               {"--max-scene-bytes", ""}}) {
    const auto result = Parse(args);
    EXPECT_FALSE(result.config) << args[0];
    EXPECT_EQ(result.exit_code, 2) << args[0];
    EXPECT_THAT(result.message, HasSubstr(args[0])) << args[0];
  }
}

TEST(ServerConfigTest, HelpDocumentsTheServiceFlags) {
  const std::string help = ServerUsage();
  for (const char* text :
       {"--listen", "ALSIM_LISTEN", "--metrics", "--shutdown-grace", "--threads", "ALSIM_THREADS",
        "--max-instances", "ALSIM_MAX_INSTANCES", "--max-message-bytes", "--max-scene-bytes",
        "--scenes-dir", "ALSIM_SCENES_DIR"}) {
    EXPECT_THAT(help, HasSubstr(text));
  }
}

TEST(ServerConfigTest, HelpDocumentsTheHardeningFlags) {
  const std::string help = ServerUsage();
  for (const char* text :
       {"--max-instances-per-tenant", "--max-iterations", "--max-call-iterations",
        "--max-call-seconds", "--max-memory", "ALSIM_MAX_MEMORY", "--max-compile-memory",
        "--max-compile-seconds", "--max-compiles", "--scene-cache", "--scene-compiler",
        "--tls-cert", "--tls-key", "--tls-client-ca", "--auth-tokens", "ALSIM_AUTH_TOKENS",
        "--reflection", "--state-dir", "ALSIM_STATE_DIR"}) {
    EXPECT_THAT(help, HasSubstr(text));
  }
}

// --max-gradient-doubles: the Jacobian values one Step reply may carry; its default is the
// batch-step core's, 4 Mi doubles (32 MiB), which fits the default message limit with room left.
TEST(ServerConfigTest, GradientLimit) {
  EXPECT_EQ(ServerConfig{}.max_gradient_doubles, batch::kDefaultMaxGradientDoubles);
  EXPECT_EQ(ServerConfig{}.max_gradient_doubles, 4u << 20);
  EXPECT_LE(8 * ServerConfig{}.max_gradient_doubles, ServerConfig{}.max_message_bytes / 2);
  const auto flag = Parse({"--max-gradient-doubles", "1000"});
  ASSERT_TRUE(flag.config) << flag.message;
  EXPECT_EQ(flag.config->max_gradient_doubles, 1000u);
  const auto variable = Parse({}, {{"ALSIM_MAX_GRADIENT_DOUBLES", "77"}});
  ASSERT_TRUE(variable.config) << variable.message;
  EXPECT_EQ(variable.config->max_gradient_doubles, 77u);
  for (const char* bad : {"0", "-3", "1e3", ""}) {
    const auto result = Parse({"--max-gradient-doubles", bad});
    EXPECT_FALSE(result.config) << bad;
    EXPECT_THAT(result.message, HasSubstr("--max-gradient-doubles")) << bad;
  }
  EXPECT_THAT(ServerUsage(), HasSubstr("ALSIM_MAX_GRADIENT_DOUBLES"));
}

TEST(ServerConfigTest, ByteCountsTakeBinarySuffixes) {
  const auto result = Parse({"--max-memory", "2G", "--max-compile-memory", "512M"},
                            {{"ALSIM_MAX_CALL_SECONDS", "0.5"}});
  ASSERT_TRUE(result.config) << result.message;
  EXPECT_EQ(result.config->max_memory, 2ull << 30);
  EXPECT_EQ(result.config->max_compile_memory, 512ull << 20);
  EXPECT_EQ(result.config->max_call_seconds, 0.5);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--max-memory", "2X"},
        {"--max-compile-memory", "1K"},  // below the 64 MiB floor
        {"--max-compile-seconds", "0"},
        {"--max-iterations", "0"},
        {"--reflection", "maybe"}}) {
    const auto bad = Parse(args);
    EXPECT_FALSE(bad.config) << args[0] << " " << args[1];
    EXPECT_THAT(bad.message, HasSubstr(args[0]));
  }
}

TEST(ServerConfigTest, TlsFlagsGoTogether) {
  EXPECT_FALSE(Parse({"--tls-cert", "server.pem"}).config);
  EXPECT_FALSE(Parse({"--tls-client-ca", "ca.pem"}).config);
  const auto result = Parse({"--tls-cert", "s.pem", "--tls-key", "s.key", "--tls-client-ca", "ca"});
  ASSERT_TRUE(result.config) << result.message;
  EXPECT_TRUE(result.config->tls_enabled());
}

TEST(ServerConfigTest, TheMemoryBudgetDefaultsToThreeQuartersOfTheMachine) {
  ServerConfig config;
  const std::uint64_t automatic = EffectiveMaxMemory(config);
  EXPECT_GT(automatic, 64ull << 20);
  config.max_memory = 123456789;
  EXPECT_EQ(EffectiveMaxMemory(config), 123456789u);
}

}  // namespace
}  // namespace alsim::server
