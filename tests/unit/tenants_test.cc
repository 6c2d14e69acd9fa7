// The token file of --auth-tokens: what it accepts and every way it is refused.
#include "server/tenants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace alsim::server {
namespace {

using ::testing::HasSubstr;

std::string WriteFile(const std::string& text) {
  char path[] = "/tmp/alsim_tokens_XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  std::ofstream(path) << text;
  close(fd);
  return path;
}

TEST(TenantDirectoryTest, ReadsTokenTenantLinesAndSkipsComments) {
  const std::string path = WriteFile(
      "# tokens for the cluster\n\nalice-token-0123456789 alice\n  bob-token-9876543210xx bob\n"
      "carol-token-5555555555 alice\n");
  std::string error;
  const auto directory = TenantDirectory::Load(path, &error);
  std::remove(path.c_str());
  ASSERT_NE(directory, nullptr) << error;
  EXPECT_EQ(directory->tenants(), 2u) << "two tokens may name one tenant";
}

TEST(TenantDirectoryTest, RefusesWhatCannotBeUsedSafely) {
  const std::pair<const char*, const char*> cases[] = {
      {"short alice\n", "shorter than 16"},
      {"alice-token-0123456789\n", ":1: expected 'TOKEN TENANT'"},
      {"alice-token-0123456789 alice extra\n", "expected 'TOKEN TENANT'"},
      {"alice-token-0123456789 alice\nalice-token-0123456789 bob\n", "given twice"},
      {"# only a comment\n", "no tokens"},
  };
  for (const auto& [text, reason] : cases) {
    const std::string path = WriteFile(text);
    std::string error;
    EXPECT_EQ(TenantDirectory::Load(path, &error), nullptr) << text;
    EXPECT_THAT(error, HasSubstr(reason)) << text;
    EXPECT_THAT(error, HasSubstr(path)) << "names the file";
    EXPECT_THAT(error, ::testing::Not(HasSubstr("alice-token"))) << "never repeats a token";
    std::remove(path.c_str());
  }
  std::string error;
  EXPECT_EQ(TenantDirectory::Load("/nonexistent/tokens", &error), nullptr);
  EXPECT_THAT(error, HasSubstr("cannot read"));
}

}  // namespace
}  // namespace alsim::server
