// CallWatch raises a call's flag when its check fails, when it runs past the server's limit, and
// for every call, present and future, once the server shuts down.
#include "server/call_watch.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace alsim::server {
namespace {

using namespace std::chrono_literals;

// Waits up to `limit` for the flag; true if it rose.
bool Rises(const CallWatch::Ticket& ticket, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!ticket.flag.load()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(CallWatchTest, AFailedCheckRaisesTheFlagWithItsStatus) {
  CallWatch watch(0);
  std::atomic<bool> cancelled{false};
  const auto ticket = watch.Watch([&] {
    return cancelled ? grpc::Status(grpc::StatusCode::CANCELLED, "gone") : grpc::Status::OK;
  });
  EXPECT_FALSE(Rises(*ticket, 50ms));
  EXPECT_TRUE(CallWatch::Reason(*ticket).ok());
  cancelled = true;
  ASSERT_TRUE(Rises(*ticket, 2000ms));
  EXPECT_EQ(CallWatch::Reason(*ticket).error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(CallWatch::Reason(*ticket).error_message(), "gone");
}

TEST(CallWatchTest, CallsPastTheServersLimitAreInterrupted) {
  CallWatch watch(0.05);
  const auto ticket = watch.Watch([] { return grpc::Status::OK; });
  ASSERT_TRUE(Rises(*ticket, 2000ms));
  EXPECT_EQ(CallWatch::Reason(*ticket).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_NE(CallWatch::Reason(*ticket).error_message().find("--max-call-seconds"),
            std::string::npos);
}

TEST(CallWatchTest, ShutdownRaisesEveryFlagNowAndLater) {
  CallWatch watch(0);
  const auto before = watch.Watch([] { return grpc::Status::OK; });
  watch.StopAll();
  EXPECT_TRUE(before->flag.load()) << "at once, not at the next tick";
  EXPECT_EQ(CallWatch::Reason(*before).error_code(), grpc::StatusCode::UNAVAILABLE);
  const auto after = watch.Watch([] { return grpc::Status::OK; });
  EXPECT_TRUE(after->flag.load());
  EXPECT_TRUE(watch.stopping());
}

TEST(CallWatchTest, ReleasedTicketsAreForgotten) {
  CallWatch watch(0);
  std::atomic<int> checks{0};
  {
    const auto ticket = watch.Watch([&] {
      ++checks;
      return grpc::Status::OK;
    });
    std::this_thread::sleep_for(40ms);
  }
  std::this_thread::sleep_for(30ms);  // the watch drops the released ticket at its next tick
  const int settled = checks.load();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(checks.load(), settled);
}

}  // namespace
}  // namespace alsim::server
