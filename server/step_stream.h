// StepStream: pipelined stepping over one bidirectional stream.
//
// Requests are read ahead (up to kReadAhead queued), stepped one after another on the registry's
// arena, and answered in request order. The first failing request ends the stream with its status
// (the requests after it are not run; the replies before it are still delivered). The client
// half-closing ends the stream with OK once every request read has been answered. Messages are
// read as raw bytes and parsed here, so a message that does not parse ends the stream with
// INVALID_ARGUMENT (gRPC's own parsing would report it as the client's half-close).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>

#include <grpcpp/grpcpp.h>

#include "alsim/v1/alsim.pb.h"
#include "server/instance_registry.h"

namespace alsim::server {

using StepRunner =
    std::function<grpc::Status(const alsim::v1::StepRequest&, alsim::v1::StepResponse*)>;

class StepStreamReactor final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  static constexpr std::size_t kReadAhead = 8;

  // `status`: a non-OK status (a failed authentication) ends the stream at once.
  StepStreamReactor(grpc::CallbackServerContext* context, InstanceRegistry* registry,
                    StepRunner run, const grpc::Status& status);

  void OnReadDone(bool ok) override;
  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  void StartReadLocked();
  void ProcessQueue();  // on the arena: steps queued requests in order
  void MaybeFinishLocked();
  void FinishOnce(const grpc::Status& status);

  grpc::CallbackServerContext* context_;
  InstanceRegistry* registry_;
  StepRunner run_;
  std::mutex mutex_;
  grpc::ByteBuffer reading_;              // target of the read in flight
  std::deque<grpc::ByteBuffer> pending_;  // read, not yet stepped
  std::deque<grpc::ByteBuffer> replies_;  // stepped, not yet written (front in flight)
  std::uint64_t messages_read_ = 0;
  bool read_in_flight_ = false;
  bool reads_done_ = false;
  bool processing_ = false;
  bool writing_ = false;
  bool finished_ = false;
  bool cancel_pending_ = false;  // cancelled while writing: Finish once the write is done
  bool failed_ = false;  // a request failed: finish with failure_ once earlier replies are out
  grpc::Status failure_;
  bool done_ = false;
};

}  // namespace alsim::server
