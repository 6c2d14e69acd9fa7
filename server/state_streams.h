// StreamStates: server-pushed observations of chosen instances at a requested rate.
//
// One pump thread serves every open stream. When a stream's next frame is due, the pump either
// captures the instances' current observations and starts the write, or, if the previous frame
// is still being written (the client or network is slower than the rate), skips this frame and
// counts it as dropped. So a stream holds at most one frame, a slow consumer always gets the
// newest state when it is ready again, and memory never grows with the backlog.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "alsim/v1/alsim.pb.h"
#include "server/instance_registry.h"

namespace alsim::server {

class ServerMetrics;
class StateStream;

class StatePump {
 public:
  // Frames larger than `max_message_bytes` (the server's gRPC limit) are refused at Open.
  StatePump(InstanceRegistry* registry, ServerMetrics* metrics, std::size_t max_message_bytes);
  // Ends every open stream (UNAVAILABLE) and stops the thread.
  ~StatePump();

  // A reactor for a new StreamStates call of `tenant` (validated first: bad requests, and a
  // non-OK `status` such as a failed authentication, finish at once).
  grpc::ServerWriteReactor<alsim::v1::StateFrame>* Open(
      grpc::CallbackServerContext* context, const alsim::v1::StreamStatesRequest* request,
      const std::string& tenant, grpc::Status status);

  // Ends every open stream with UNAVAILABLE ("server shutting down"); new ones are refused.
  void Close();

  // Called by a stream once gRPC is done with it (it is deleted right after).
  void Forget(StateStream* stream);

 private:
  void Run();

  InstanceRegistry* registry_;
  ServerMetrics* metrics_;
  std::size_t max_message_bytes_;
  std::mutex mutex_;  // guards streams_, closed_, stop_; held while the pump ticks
  std::condition_variable wake_;
  std::list<StateStream*> streams_;
  bool closed_ = false;
  bool stop_ = false;
  // Streams gRPC is done with, deleted by the pump thread (never inside a reaction, never while
  // it ticks them). A lock of their own, so OnDone may run inline inside a Finish the pump calls.
  std::mutex done_mutex_;
  std::vector<StateStream*> done_;
  std::thread thread_;  // last: starts after the fields above exist
};

}  // namespace alsim::server
