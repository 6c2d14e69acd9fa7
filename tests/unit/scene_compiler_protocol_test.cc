// The server <-> scene compiler messages: round trips, and every malformed message refused (the
// server reads the compiler's reply, which a compromised compiler could forge).
#include "server/scene_compiler_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace alsim::server {
namespace {

SceneCompileRequest SampleRequest() {
  SceneCompileRequest request;
  request.text = "<mujoco/>";
  request.name = "scene.xml";
  request.assets = {{"a.stl", std::string("\0solid\xff", 8)}, {"b.xml", "<mujoco/>"}};
  return request;
}

SceneCompileReply SampleReply() {
  SceneCompileReply reply;
  reply.scene.mjb = std::string(300, '\x7f');
  reply.scene.sets_timestep = true;
  reply.scene.warnings = {"one", "two"};
  reply.scene.deformables = std::string("\x01\0deformables", 13);
  reply.model_bytes = 12345;
  reply.instance_bytes = 678;
  return reply;
}

TEST(SceneCompilerProtocolTest, RequestsAndRepliesRoundTrip) {
  SceneCompileRequest request;
  std::string error;
  ASSERT_TRUE(DecodeRequest(EncodeRequest(SampleRequest()), &request, &error)) << error;
  EXPECT_EQ(request.text, "<mujoco/>");
  EXPECT_EQ(request.name, "scene.xml");
  ASSERT_EQ(request.assets.size(), 2u);
  EXPECT_EQ(request.assets[0].bytes, std::string("\0solid\xff", 8));
  SceneCompileReply reply;
  ASSERT_TRUE(DecodeReply(EncodeReply(SampleReply()), &reply, &error)) << error;
  EXPECT_EQ(reply.scene.mjb, std::string(300, '\x7f'));
  EXPECT_TRUE(reply.scene.sets_timestep);
  EXPECT_THAT(reply.scene.warnings, ::testing::ElementsAre("one", "two"));
  EXPECT_EQ(reply.scene.deformables, std::string("\x01\0deformables", 13));
  EXPECT_EQ(reply.model_bytes, 12345u);
  EXPECT_EQ(reply.instance_bytes, 678u);
}

TEST(SceneCompilerProtocolTest, EveryTruncationAndTrailingByteIsRefused) {
  const std::string request = EncodeRequest(SampleRequest());
  const std::string reply = EncodeReply(SampleReply());
  std::string error;
  SceneCompileRequest decoded_request;
  SceneCompileReply decoded_reply;
  for (std::size_t n = 0; n < request.size(); ++n) {
    EXPECT_FALSE(DecodeRequest(request.substr(0, n), &decoded_request, &error)) << n;
  }
  for (std::size_t n = 0; n < reply.size(); ++n) {
    EXPECT_FALSE(DecodeReply(reply.substr(0, n), &decoded_reply, &error)) << n;
  }
  EXPECT_FALSE(DecodeRequest(request + "x", &decoded_request, &error));
  EXPECT_FALSE(DecodeReply(reply + "x", &decoded_reply, &error));
  EXPECT_FALSE(DecodeReply(request, &decoded_reply, &error)) << "a request is not a reply";
}

TEST(SceneCompilerProtocolTest, AHugeLengthFieldIsRefusedWithoutAllocating) {
  std::string reply = EncodeReply(SampleReply());
  // The error string's length, right after magic and version: claim 2^62 bytes.
  const std::uint64_t huge = 1ull << 62;
  reply.replace(8, 8, reinterpret_cast<const char*>(&huge), 8);
  SceneCompileReply decoded;
  std::string error;
  EXPECT_FALSE(DecodeReply(reply, &decoded, &error));
  EXPECT_THAT(error, ::testing::HasSubstr("truncated"));
}

TEST(SceneCompilerProtocolTest, FramesCarryTheirLength) {
  const std::string framed = Frame("hello");
  ASSERT_EQ(framed.size(), kFrameHeaderBytes + 5);
  EXPECT_EQ(FrameLength(framed.data()), 5u);
  EXPECT_EQ(framed.substr(kFrameHeaderBytes), "hello");
}

}  // namespace
}  // namespace alsim::server
