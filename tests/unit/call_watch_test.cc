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
  const auto watched = watch.Watch([&] {
    return cancelled ? grpc::Status(grpc::StatusCode::CANCELLED, "gone") : grpc::Status::OK;
  });
  const CallWatch::Ticket& ticket = watched->ticket();
  EXPECT_FALSE(Rises(ticket, 50ms));
  EXPECT_TRUE(CallWatch::Reason(ticket).ok());
  cancelled = true;
  ASSERT_TRUE(Rises(ticket, 2000ms));
  EXPECT_EQ(CallWatch::Reason(ticket).error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(CallWatch::Reason(ticket).error_message(), "gone");
}

TEST(CallWatchTest, CallsPastTheServersLimitAreInterrupted) {
  CallWatch watch(0.05);
  const auto watched = watch.Watch([] { return grpc::Status::OK; });
  ASSERT_TRUE(Rises(watched->ticket(), 2000ms));
  EXPECT_EQ(CallWatch::Reason(watched->ticket()).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_NE(CallWatch::Reason(watched->ticket()).error_message().find("--max-call-seconds"),
            std::string::npos);
}

TEST(CallWatchTest, ShutdownRaisesEveryFlagNowAndLater) {
  CallWatch watch(0);
  const auto before = watch.Watch([] { return grpc::Status::OK; });
  watch.StopAll();
  EXPECT_TRUE(before->ticket().flag.load()) << "at once, not at the next tick";
  EXPECT_EQ(CallWatch::Reason(before->ticket()).error_code(), grpc::StatusCode::UNAVAILABLE);
  const auto after = watch.Watch([] { return grpc::Status::OK; });
  EXPECT_TRUE(after->ticket().flag.load());
  EXPECT_TRUE(watch.stopping());
}

// Once a call stops being watched its check never runs again, not even one that the watch's
// thread had already picked up: the check reads a context that gRPC frees after the call.
TEST(CallWatchTest, AFinishedCallIsNeverCheckedAgain) {
  CallWatch watch(0);
  for (int round = 0; round < 20; ++round) {
    auto alive = std::make_shared<std::atomic<bool>>(true);
    std::atomic<int> checks_after_end{0};
    {
      const auto watched = watch.Watch([&, alive] {
        if (!*alive) ++checks_after_end;
        std::this_thread::sleep_for(2ms);  // widen the window
        return grpc::Status::OK;
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(round % 7));
    }
    *alive = false;  // after the scope: the check must not run from here on
    std::this_thread::sleep_for(25ms);
    EXPECT_EQ(checks_after_end.load(), 0) << "round " << round;
  }
}

}  // namespace
}  // namespace alsim::server
