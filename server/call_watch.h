// Watches the calls that run physics (Step, StepStream messages) from one thread, and raises a
// call's interrupt flag once its client cancels, its deadline passes, it has run longer than the
// server allows (--max-call-seconds) or the server shuts down. The engine's solvers read the flag
// between iterations (SolverOptions::interrupt), so even one long solve ends promptly; reading an
// atomic costs the solve nothing measurable, where asking gRPC about the call at every iteration
// would.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include <grpcpp/support/status.h>

namespace alsim::server {

class CallWatch {
 public:
  // One watched call. `flag` rises once; `reason` (valid once it has) says why.
  struct Ticket {
    std::atomic<bool> flag{false};
    grpc::Status reason;  // written before `flag` rises
    std::chrono::steady_clock::time_point started;
    // The call's check, cleared (under `check_mutex`) when the call stops being watched: the
    // check reads the call's context, which gRPC frees once the call is finished.
    std::mutex check_mutex;
    std::function<grpc::Status()> check;
  };

  // A watched call: stops the watching when it goes out of scope, which must happen before the
  // call is finished (so before the context that `check` reads can be freed).
  class Watched {
   public:
    explicit Watched(std::shared_ptr<Ticket> ticket) : ticket_(std::move(ticket)) {}
    ~Watched() {
      const std::lock_guard<std::mutex> lock(ticket_->check_mutex);
      ticket_->check = nullptr;
    }
    Watched(const Watched&) = delete;
    Watched& operator=(const Watched&) = delete;
    Ticket& ticket() { return *ticket_; }

   private:
    std::shared_ptr<Ticket> ticket_;
  };

  // `max_call_seconds`: 0 = no server-side limit.
  explicit CallWatch(double max_call_seconds);
  ~CallWatch();
  CallWatch(const CallWatch&) = delete;
  CallWatch& operator=(const CallWatch&) = delete;

  // Watches a call until the returned object goes out of scope; `check` (run on the watch's
  // thread, every few milliseconds) returns non-OK once the call should stop.
  std::unique_ptr<Watched> Watch(std::function<grpc::Status()> check);

  // The status of a ticket whose flag is up (OK while it is not).
  static grpc::Status Reason(const Ticket& ticket);

  // Raises every flag, present and future, with UNAVAILABLE (the server is shutting down).
  void StopAll();
  bool stopping() const { return stopping_.load(); }

 private:
  void Run();
  static void Raise(Ticket& ticket, grpc::Status reason);

  const double max_call_seconds_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::list<std::weak_ptr<Ticket>> tickets_;
  std::atomic<bool> stopping_{false};
  bool quit_ = false;
  std::thread thread_;
};

}  // namespace alsim::server
