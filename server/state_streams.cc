#include "server/state_streams.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "server/metrics.h"
#include "server/tensors.h"

namespace alsim::server {

using Clock = std::chrono::steady_clock;

// What a stream's frames carry besides the observations (StreamStatesRequest): per-instance
// details (step count, status, diagnostics), with contact points when asked for.
struct FrameExtras {
  bool details = false;
  bool contacts = false;
};

// Contact points per instance in a frame at most: a bound on the frame's size that Open can
// check against the message limit (the first ones are sent; viewers show them, nothing more).
constexpr int kMaxFrameContacts = 1000;

// The details of one instance (under its lock).
void FillDetails(const Instance& instance, bool contacts, alsim::v1::InstanceFrameDetails* out) {
  out->set_steps(instance.steps);
  out->set_status(instance.diverged ? alsim::v1::INSTANCE_STATUS_DIVERGED
                                    : alsim::v1::INSTANCE_STATUS_OK);
  FillDiagnostics(instance.data->solver_statistics, out->mutable_diagnostics());
  if (!contacts) return;
  alsim::v1::ContactPoints* points = out->mutable_contacts();
  const int n = std::min<int>(static_cast<int>(instance.data->contact.size()), kMaxFrameContacts);
  points->mutable_position()->Reserve(3 * n);
  points->mutable_normal()->Reserve(3 * n);
  points->mutable_distance()->Reserve(n);
  for (int i = 0; i < n; ++i) {
    const Contact& c = instance.data->contact[i];
    for (int j = 0; j < 3; ++j) points->add_position(c.pos[j]);
    for (int j = 0; j < 3; ++j) points->add_normal(c.normal[j]);
    points->add_distance(c.dist);
  }
}

class StateStream final : public grpc::ServerWriteReactor<alsim::v1::StateFrame> {
 public:
  StateStream(StatePump* pump, std::string tenant, std::vector<std::uint64_t> ids,
              std::uint64_t group, std::vector<alsim::v1::Observation> kinds,
              Clock::duration period, FrameExtras extras)
      : pump_(pump),
        tenant_(std::move(tenant)),
        ids_(std::move(ids)),
        group_(group),
        kinds_(std::move(kinds)),
        period_(period),
        extras_(extras),
        started_(Clock::now()),
        next_due_(started_) {}

  // On the pump thread: sends a frame if one is due and the previous one is written, counts a
  // drop if one is due but the client has not taken the previous one yet.
  void Tick(Clock::time_point now, InstanceRegistry& registry, ServerMetrics* metrics) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (finishing_ || now < next_due_) return;
      next_due_ += period_;
      if (next_due_ < now) next_due_ = now + period_;  // no bursts to catch up
      if (writing_) {
        ++dropped_;
        if (metrics != nullptr) metrics->AddDroppedFrames(1);
        return;
      }
    }
    // Only this thread writes frame_ and only while no write is in flight.
    frame_.Clear();
    bool busy = false;
    const grpc::Status status = registry.TryWithInstances(
        tenant_, ids_, group_,
        [&](auto& instances) {
          for (const Instance* instance : instances) {
            if (instance->model != instances.front()->model) {
              return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                  "a stream shows instances of one scene");
            }
            frame_.add_instance_ids(instance->id);
          }
          PackObservations(instances, kinds_, frame_.mutable_observations(), PackMode::kSerial);
          if (extras_.details) {
            for (const Instance* instance : instances) {
              FillDetails(*instance, extras_.contacts, frame_.add_details());
            }
          }
          return grpc::Status::OK;
        },
        &busy);
    if (!status.ok()) {
      End(status);
      return;
    }
    if (busy) {  // a step holds an instance: this frame is skipped, never waited for
      const std::lock_guard<std::mutex> lock(mutex_);
      ++dropped_;
      if (metrics != nullptr) metrics->AddDroppedFrames(1);
      return;
    }
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (finishing_) return;
      frame_.set_sequence(++sequence_);
      frame_.set_dropped(dropped_);
      dropped_ = 0;
      frame_.set_server_time(std::chrono::duration<double>(now - started_).count());
      writing_ = true;
    }
    StartWrite(&frame_);
  }

  // Finishes the call once, whoever asks first. A write in flight (or about to start: Tick
  // marks it before StartWrite) finishes first: Finish is deferred to its OnWriteDone, so no
  // StartWrite can follow Finish, after which gRPC may already have called OnDone and the pump
  // deleted this object.
  void End(const grpc::Status& status) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (finishing_) return;
      finishing_ = true;
      if (writing_) {
        deferred_ = status;
        return;
      }
    }
    Finish(status);
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> finish;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      writing_ = false;
      finish.swap(deferred_);
    }
    if (finish) {
      Finish(*finish);
    } else if (!ok) {
      End(grpc::Status(grpc::StatusCode::CANCELLED, "the stream broke"));
    }
  }
  void OnCancel() override { End(grpc::Status::CANCELLED); }
  void OnDone() override { pump_->Forget(this); }

 private:
  StatePump* pump_;
  const std::string tenant_;
  const std::vector<std::uint64_t> ids_;
  const std::uint64_t group_;
  const std::vector<alsim::v1::Observation> kinds_;
  const Clock::duration period_;
  const FrameExtras extras_;
  const Clock::time_point started_;
  alsim::v1::StateFrame frame_;
  std::mutex mutex_;  // guards the fields below
  Clock::time_point next_due_;
  bool writing_ = false;
  bool finishing_ = false;
  std::optional<grpc::Status> deferred_;  // End's status while a write was in flight
  std::uint64_t sequence_ = 0;
  std::uint64_t dropped_ = 0;
};

StatePump::StatePump(InstanceRegistry* registry, ServerMetrics* metrics,
                     std::size_t max_message_bytes)
    : registry_(registry),
      metrics_(metrics),
      max_message_bytes_(max_message_bytes),
      thread_([this] { Run(); }) {}

StatePump::~StatePump() {
  Close();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

grpc::ServerWriteReactor<alsim::v1::StateFrame>* StatePump::Open(
    grpc::CallbackServerContext* /*context*/, const alsim::v1::StreamStatesRequest* request,
    const std::string& tenant, grpc::Status status) {
  std::vector<alsim::v1::Observation> kinds;
  if (status.ok()) status = ParseObservations(request->observations(), true, &kinds);
  double rate = request->rate_hz() == 0 ? 30.0 : request->rate_hz();
  // From 1 frame in 1000 s (the period must fit a steady_clock duration; found by fuzzing) to
  // the pump's 1 kHz.
  if (status.ok() && !(rate >= 1e-3 && rate <= 1000)) {
    status = {grpc::StatusCode::INVALID_ARGUMENT, "rate_hz must be in [0.001, 1000]"};
  }
  if (!(rate >= 1e-3 && rate <= 1000)) rate = 30.0;  // a refused stream still needs a period
  std::vector<std::uint64_t> ids(request->instances().instance_ids().begin(),
                                 request->instances().instance_ids().end());
  const FrameExtras extras{request->include_diagnostics() || request->include_contacts(),
                           request->include_contacts()};
  if (status.ok()) {  // the selection must exist now; later disappearance ends the stream
    std::vector<std::shared_ptr<const Model>> models;
    status = registry_->Check(tenant, ids, request->instances().group_id(), &models);
    // A frame the transport could not send would end the stream later; refuse it now.
    std::size_t frame_bytes = 0;
    // Details: a step count, a status and diagnostics (a few dozen bytes and the solver's
    // figures), and with contacts 7 doubles per contact point.
    const std::size_t details =
        extras.details ? 512 + (extras.contacts ? 7 * 8 * kMaxFrameContacts : 0) : 0;
    for (const auto& model : models) {
      frame_bytes += EstimateObservationBytes(*model, 1, kinds) + 8 + details;
    }
    if (status.ok()) {
      status = CheckMessageSize("frame", frame_bytes, max_message_bytes_,
                                "ask for fewer observations or instances");
    }
  }
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  auto* stream =
      new StateStream(this, tenant, ids, request->instances().group_id(), kinds, period, extras);
  const std::lock_guard<std::mutex> lock(mutex_);
  if (status.ok() && closed_) {
    status = {grpc::StatusCode::UNAVAILABLE, "the server is shutting down"};
  }
  streams_.push_back(stream);
  if (!status.ok()) {
    stream->End(status);
  } else {
    wake_.notify_all();
  }
  return stream;
}

void StatePump::Forget(StateStream* stream) {
  {
    const std::lock_guard<std::mutex> lock(done_mutex_);
    done_.push_back(stream);
  }
  wake_.notify_all();
}

void StatePump::Close() {
  const std::lock_guard<std::mutex> lock(mutex_);
  closed_ = true;
  for (StateStream* stream : streams_) {
    stream->End(grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down"));
  }
}

void StatePump::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    // Delete the streams gRPC is done with.
    std::vector<StateStream*> done;
    {
      const std::lock_guard<std::mutex> done_lock(done_mutex_);
      done.swap(done_);
    }
    for (StateStream* stream : done) {
      streams_.remove(stream);
      delete stream;
    }
    if (stop_ && streams_.empty()) return;
    const Clock::time_point now = Clock::now();
    for (StateStream* stream : streams_) stream->Tick(now, *registry_, metrics_);
    // 1 ms resolution while streams are open (rates up to 1 kHz); asleep otherwise.
    if (streams_.empty()) {
      wake_.wait(lock);
    } else {
      wake_.wait_for(lock, std::chrono::milliseconds(1));
    }
  }
}

}  // namespace alsim::server
