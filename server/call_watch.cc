#include "server/call_watch.h"

#include <string>
#include <vector>

namespace alsim::server {
namespace {

constexpr auto kPeriod = std::chrono::milliseconds(10);

grpc::Status ShuttingDown() {
  return {grpc::StatusCode::UNAVAILABLE,
          "the server is shutting down; the steps already taken are kept"};
}

}  // namespace

CallWatch::CallWatch(double max_call_seconds)
    : max_call_seconds_(max_call_seconds), thread_([this] { Run(); }) {}

CallWatch::~CallWatch() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CallWatch::Raise(Ticket& ticket, grpc::Status reason) {
  if (ticket.flag.load()) return;
  ticket.reason = std::move(reason);
  ticket.flag.store(true);
}

grpc::Status CallWatch::Reason(const Ticket& ticket) {
  return ticket.flag.load() ? ticket.reason : grpc::Status::OK;
}

std::unique_ptr<CallWatch::Watched> CallWatch::Watch(std::function<grpc::Status()> check) {
  auto ticket = std::make_shared<Ticket>();
  ticket->check = std::move(check);
  ticket->started = std::chrono::steady_clock::now();
  const std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) Raise(*ticket, ShuttingDown());
  tickets_.push_back(ticket);
  return std::make_unique<Watched>(std::move(ticket));
}

void CallWatch::StopAll() {
  const std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = true;
  for (const auto& weak : tickets_) {
    if (auto ticket = weak.lock()) Raise(*ticket, ShuttingDown());
  }
}

void CallWatch::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!quit_) {
    wake_.wait_for(lock, kPeriod);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = tickets_.begin(); it != tickets_.end();) {
      auto ticket = it->lock();
      if (ticket == nullptr) {
        it = tickets_.erase(it);
        continue;
      }
      ++it;
      if (ticket->flag.load()) continue;
      // Under the lock: StopAll and this loop never raise one ticket at once.
      grpc::Status status;
      {
        const std::lock_guard<std::mutex> check_lock(ticket->check_mutex);
        if (ticket->check == nullptr) continue;  // the call is over
        status = ticket->check();
      }
      if (status.ok() && max_call_seconds_ > 0 &&
          std::chrono::duration<double>(now - ticket->started).count() > max_call_seconds_) {
        std::string limit = std::to_string(max_call_seconds_);
        limit.erase(limit.find_last_not_of('0') + 1);
        if (limit.back() == '.') limit.pop_back();
        status = {grpc::StatusCode::DEADLINE_EXCEEDED,
                  "the call ran longer than the server allows (" + limit +
                      " s, --max-call-seconds); the steps already taken are kept"};
      }
      if (!status.ok()) Raise(*ticket, std::move(status));
    }
  }
}

}  // namespace alsim::server
