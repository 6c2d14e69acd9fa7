#include "server/step_stream.h"

#include <utility>

#include "server/simulator_service.h"

namespace alsim::server {

// gRPC operations (StartRead, StartWrite, Finish) are decided under the mutex and started after
// releasing it, so a reaction that runs inline can never find the mutex held.
struct StreamActions {
  bool read = false;
  const grpc::ByteBuffer* write = nullptr;
  bool process = false;
  bool finish = false;
  grpc::Status status;
};

StepStreamReactor::StepStreamReactor(grpc::CallbackServerContext* context,
                                     InstanceRegistry* registry, StepRunner run,
                                     const grpc::Status& status)
    : context_(context), registry_(registry), run_(std::move(run)) {
  if (!status.ok()) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
    }
    Finish(status);
    return;
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    read_in_flight_ = true;
  }
  StartRead(&reading_);
}

void StepStreamReactor::OnReadDone(bool ok) {
  StreamActions act;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    read_in_flight_ = false;
    if (!ok) {
      reads_done_ = true;  // the client half-closed (or the call broke)
    } else if (!finished_ && !failed_) {
      pending_.push_back(std::move(reading_));
      reading_.Clear();
      if (!processing_) processing_ = act.process = true;
      if (pending_.size() < kReadAhead) read_in_flight_ = act.read = true;
    }
    if (!finished_ && !failed_ && reads_done_ && !processing_ && pending_.empty() &&
        replies_.empty() && !writing_) {
      finished_ = act.finish = true;
      act.status = grpc::Status::OK;
    }
  }
  if (act.process) registry_->Enqueue([this] { ProcessQueue(); });
  if (act.read) StartRead(&reading_);
  if (act.finish) Finish(act.status);
}

void StepStreamReactor::ProcessQueue() {
  while (true) {
    grpc::ByteBuffer message;
    StreamActions act;
    bool idle = false;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (finished_ || failed_ || pending_.empty()) {
        idle = true;
        // Resume reading if the queue had filled up.
        if (!finished_ && !failed_ && !reads_done_ && !read_in_flight_) {
          read_in_flight_ = act.read = true;
        }
      } else {
        message = std::move(pending_.front());
        pending_.pop_front();
      }
    }
    if (idle) {
      if (act.read) StartRead(&reading_);
      // processing_ stays true until here, so OnDone cannot delete this object under us; a
      // request that arrived meanwhile is taken by the loop, and the stream finishes here if
      // everything is answered.
      StreamActions late;
      bool delete_now = false;
      bool more = false;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        more = !finished_ && !failed_ && !pending_.empty();
        if (!more) {
          processing_ = false;
          if (!finished_ && replies_.empty() && !writing_ && (failed_ || reads_done_)) {
            finished_ = late.finish = true;
            late.status = failed_ ? failure_ : grpc::Status::OK;
          }
          delete_now = done_;
        }
      }
      if (more) continue;
      if (late.finish) Finish(late.status);
      if (delete_now) delete this;
      return;
    }
    alsim::v1::StepRequest request;
    alsim::v1::StepResponse response;
    grpc::ByteBuffer reply;
    ++messages_read_;
    grpc::Status status =
        grpc::SerializationTraits<alsim::v1::StepRequest>::Deserialize(&message, &request);
    if (!status.ok()) {
      status = {grpc::StatusCode::INVALID_ARGUMENT,
                "message " + std::to_string(messages_read_) +
                    " of the stream is not an alsim.v1.StepRequest; it and the messages after it "
                    "were not run"};
    } else {
      status = run_(request, &response);
    }
    if (status.ok()) {
      bool own_buffer = false;
      status = grpc::SerializationTraits<alsim::v1::StepResponse>::Serialize(response, &reply,
                                                                             &own_buffer);
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (!status.ok()) {
        failed_ = true;  // the idle branch finishes once the replies before it are written
        failure_ = status;
        pending_.clear();
      } else if (!finished_) {
        replies_.push_back(std::move(reply));
        if (!writing_) {
          writing_ = true;
          act.write = &replies_.front();
        }
        if (!reads_done_ && !read_in_flight_ && pending_.size() < kReadAhead) {
          read_in_flight_ = act.read = true;
        }
      }
    }
    if (act.write != nullptr) StartWrite(act.write);
    if (act.read) StartRead(&reading_);
    if (act.finish) Finish(act.status);
  }
}

void StepStreamReactor::OnWriteDone(bool ok) {
  StreamActions act;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    writing_ = false;
    replies_.pop_front();
    if (cancel_pending_) {  // OnCancel waited for this write: finish now, write nothing more
      cancel_pending_ = false;
      act.finish = true;
      act.status = grpc::Status::CANCELLED;
    } else if (!ok) {
      if (!finished_) {
        finished_ = act.finish = true;
        act.status = grpc::Status(grpc::StatusCode::CANCELLED, "the stream broke");
      }
    } else if (!replies_.empty() && !finished_) {
      writing_ = true;
      act.write = &replies_.front();
    } else if (!finished_ && !processing_ && pending_.empty() && (failed_ || reads_done_)) {
      finished_ = act.finish = true;
      act.status = failed_ ? failure_ : grpc::Status::OK;
    }
  }
  if (act.write != nullptr) StartWrite(act.write);
  if (act.finish) Finish(act.status);
}

void StepStreamReactor::OnCancel() {
  bool finish = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!finished_) {
      finished_ = true;
      // A write in flight (or about to start: writing_ is set before StartWrite) finishes
      // first; its OnWriteDone calls Finish. No StartWrite may follow Finish.
      if (writing_) {
        cancel_pending_ = true;
      } else {
        finish = true;
      }
    }
  }
  if (finish) Finish(grpc::Status::CANCELLED);
}

void StepStreamReactor::OnDone() {
  bool delete_now = false;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    delete_now = !processing_;  // else ProcessQueue deletes it when it stops
  }
  if (delete_now) delete this;
}

}  // namespace alsim::server
