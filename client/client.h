// C++ client of an alsim server (proto/alsim/v1/alsim.proto).
//
// Unary calls carry a deadline (`call_timeout`); the streams (StreamStates, StepStream) carry
// none and run until either side ends them. Every call returns the server's grpc::Status
// unchanged: the codes and messages the contract documents.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/support/sync_stream.h>

#include "alsim/v1/alsim.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace alsim::client {

using HealthStatus = grpc::health::v1::HealthCheckResponse::ServingStatus;

// The largest message the client sends or accepts by default: the server's default limit
// (alsim-server --max-message-bytes). gRPC's own default receive limit, 4 MiB, is too small for
// batched observations of many instances.
inline constexpr int kDefaultMaxMessageBytes = 64 << 20;

// One pipelined StepStream call: any number of requests may be written before their responses
// are read; responses come one per request, in request order. The first failing request ends the
// stream with its status (Read returns false, Finish returns the status). Not thread-safe, except
// that one thread may Write while another Reads.
class StepStream {
 public:
  StepStream(
      std::unique_ptr<grpc::ClientContext> context,
      std::unique_ptr<grpc::ClientReaderWriter<alsim::v1::StepRequest, alsim::v1::StepResponse>>
          stream);
  ~StepStream();  // cancels the call if Finish was not called
  StepStream(const StepStream&) = delete;
  StepStream& operator=(const StepStream&) = delete;

  // False once the stream is broken or ended (then Finish tells why).
  bool Write(const alsim::v1::StepRequest& request);
  // The next response, in request order; false when the server ended the stream.
  bool Read(alsim::v1::StepResponse* response);
  // Half-closes: no more requests. Finish does it when it was not done.
  bool WritesDone();
  // Half-closes if needed, discards the responses not read yet, and returns the call's status:
  // OK when every request succeeded, else the first failing request's status.
  grpc::Status Finish();
  // Ends the call from any thread; Read and Write then fail and Finish returns CANCELLED.
  void Cancel();

 private:
  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<grpc::ClientReaderWriter<alsim::v1::StepRequest, alsim::v1::StepResponse>>
      stream_;
  bool writes_done_ = false;
  bool finished_ = false;
};

class Client {
 public:
  // `address` as for alsim-server --listen: host:port or unix:PATH. `call_timeout` is the
  // deadline of each unary call; `max_message_bytes` limits messages in both directions.
  explicit Client(const std::string& address,
                  std::chrono::milliseconds call_timeout = std::chrono::seconds(5),
                  int max_message_bytes = kDefaultMaxMessageBytes);

  // Blocks until the server accepts a connection or `timeout` passes; false on timeout.
  bool WaitForConnection(std::chrono::milliseconds timeout);

  // grpc.health.v1 Check of `service` ("" is the server as a whole).
  grpc::Status CheckHealth(const std::string& service, HealthStatus* status);

  grpc::Status ServerInfo(alsim::v1::ServerInfoResponse* info);
  grpc::Status Create(const alsim::v1::CreateRequest& request, alsim::v1::CreateResponse* response);
  grpc::Status Step(const alsim::v1::StepRequest& request, alsim::v1::StepResponse* response);
  grpc::Status Reset(const alsim::v1::ResetRequest& request, alsim::v1::ResetResponse* response);
  grpc::Status GetState(const alsim::v1::GetStateRequest& request,
                        alsim::v1::GetStateResponse* response);
  grpc::Status SetState(const alsim::v1::SetStateRequest& request,
                        alsim::v1::SetStateResponse* response);
  grpc::Status Destroy(const alsim::v1::DestroyRequest& request,
                       alsim::v1::DestroyResponse* response);
  grpc::Status List(alsim::v1::ListResponse* response);

  // Reads StreamStates frames and hands each to `on_frame` until it returns false (the call is
  // then cancelled and OK returned), the server ends the stream (its status is returned:
  // NOT_FOUND once the instances are destroyed, UNAVAILABLE at shutdown, or an error in the
  // request) or the connection breaks. Blocks; no deadline.
  grpc::Status StreamStates(const alsim::v1::StreamStatesRequest& request,
                            const std::function<bool(const alsim::v1::StateFrame&)>& on_frame);

  // Opens a StepStream call (no deadline).
  std::unique_ptr<StepStream> OpenStepStream();

  const std::string& address() const { return address_; }
  std::chrono::milliseconds call_timeout() const { return call_timeout_; }

 private:
  std::unique_ptr<grpc::ClientContext> MakeContext() const;

  std::string address_;
  std::chrono::milliseconds call_timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<alsim::v1::Simulator::Stub> simulator_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
  std::unique_ptr<alsim::v1::Simulator::Stub> viewer_;  // StreamStates, its own channel
};

// "SERVING", "NOT_SERVING", ...
std::string HealthStatusName(HealthStatus status);

// "OK", "NOT_FOUND", ...: the name of a gRPC status code as the gRPC documentation spells it.
std::string StatusCodeName(grpc::StatusCode code);

// An actions tensor for Step: float64 [instances, nu] from `values` (instances * nu numbers,
// row-major: instance 0's controls first), little-endian. values.size() must be instances * nu.
alsim::v1::Tensor MakeActionsTensor(const std::vector<double>& values, std::int64_t instances,
                                    std::int64_t nu);

// The elements of a float64, float32 or int32 tensor as doubles, row-major. INVALID_ARGUMENT when
// the dtype is none of these, a dimension is negative, or the bytes do not match the shape.
grpc::Status DecodeTensor(const alsim::v1::Tensor& tensor, std::vector<double>* values);

}  // namespace alsim::client
