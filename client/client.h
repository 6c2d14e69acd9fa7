// C++ client of an alsim server (proto/alsim/v1/alsim.proto).
//
// Unary calls carry a deadline (`call_timeout`); the streams (StreamStates, StepStream) carry
// none and run until either side ends them. Every call returns the server's grpc::Status
// unchanged: the codes and messages the contract documents.
//
// Servers started with --tls-cert/--tls-key (and --tls-client-ca, mutual TLS) or --auth-tokens
// are reached through ClientOptions: TLS settings and the bearer token, which is sent as the
// metadata 'authorization: Bearer TOKEN' on every call, streams included.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
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

// How a Client reaches its server.
struct ClientOptions {
  // The deadline of each unary call.
  std::chrono::milliseconds call_timeout = std::chrono::seconds(5);
  // Limits messages in both directions.
  int max_message_bytes = kDefaultMaxMessageBytes;

  // TLS, on when `tls` is set or any tls_* field below is non-empty. The server's certificate is
  // verified against `tls_root_certs` (PEM contents; empty: gRPC's default roots) and must name
  // the address's host, or `tls_server_name` when that is set (e.g. a certificate issued for
  // "localhost" reached at 127.0.0.1).
  bool tls = false;
  std::string tls_root_certs;
  std::string tls_server_name;
  // Mutual TLS (a server with --tls-client-ca): this client's certificate chain and private key,
  // PEM contents, both or neither.
  std::string tls_cert_chain;
  std::string tls_private_key;

  // A server with --auth-tokens: sent on every call (health checks, which need none, included)
  // as 'authorization: Bearer TOKEN'. Printable ASCII without spaces; empty: none. Without TLS it
  // travels in clear text.
  std::string token;

  bool tls_enabled() const {
    return tls || !tls_root_certs.empty() || !tls_server_name.empty() || !tls_cert_chain.empty() ||
           !tls_private_key.empty();
  }
};

// INVALID_ARGUMENT naming the problem when `options` cannot work: a certificate chain without its
// private key (or the reverse), a token with spaces or characters that are not printable ASCII,
// PEM fields that hold no PEM block, a max_message_bytes below 1. A Client built from such options
// answers every call with this status.
grpc::Status ValidateClientOptions(const ClientOptions& options);

// The whole contents of a PEM file (a CA bundle, a certificate chain or a private key) in
// *contents. NOT_FOUND when it cannot be read, INVALID_ARGUMENT when it holds no
// "-----BEGIN ...-----" line; messages name `path`.
grpc::Status ReadPemFile(const std::string& path, std::string* contents);

// A token file: its contents without leading and trailing whitespace (a final newline). NOT_FOUND
// when it cannot be read, INVALID_ARGUMENT when it is empty or the token is not printable ASCII
// without spaces.
grpc::Status ReadTokenFile(const std::string& path, std::string* token);

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
  // A call that failed before it started: Write and Read return false, Finish returns `error`.
  explicit StepStream(grpc::Status error);
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
  grpc::Status error_;  // of a call that never started
  bool writes_done_ = false;
  bool finished_ = false;
};

// Ends a Client::StreamStates call from another thread (a viewer whose browser went away while
// no frame comes). Cancel before the call starts ends it as soon as it starts. Thread-safe.
class StreamCanceller {
 public:
  void Cancel();
  bool cancelled();

 private:
  friend class Client;
  // Called by StreamStates with its context, and with null when the call is over.
  void Attach(grpc::ClientContext* context);
  std::mutex mutex_;
  grpc::ClientContext* context_ = nullptr;
  bool cancelled_ = false;
};

class Client {
 public:
  // `address` as for alsim-server --listen: host:port or unix:PATH. `call_timeout` is the
  // deadline of each unary call; `max_message_bytes` limits messages in both directions.
  explicit Client(const std::string& address,
                  std::chrono::milliseconds call_timeout = std::chrono::seconds(5),
                  int max_message_bytes = kDefaultMaxMessageBytes);
  // With TLS and a token as `options` say. Options that ValidateClientOptions refuses make every
  // call return its INVALID_ARGUMENT (and WaitForConnection false) rather than reach the server.
  Client(const std::string& address, const ClientOptions& options);

  // Blocks until the server accepts a connection (with TLS: the handshake succeeded) or `timeout`
  // passes; false on timeout.
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
  // The geometry a viewer draws of one instance's scene (bodies, geoms, meshes).
  grpc::Status GetScene(const alsim::v1::GetSceneRequest& request,
                        alsim::v1::GetSceneResponse* response);

  // Reads StreamStates frames and hands each to `on_frame` until it returns false (the call is
  // then cancelled and OK returned), the server ends the stream (its status is returned:
  // NOT_FOUND once the instances are destroyed, UNAVAILABLE at shutdown, or an error in the
  // request) or the connection breaks. Blocks; no deadline.
  // `canceller` (may be null) ends the stream from another thread, as if on_frame returned false.
  grpc::Status StreamStates(const alsim::v1::StreamStatesRequest& request,
                            const std::function<bool(const alsim::v1::StateFrame&)>& on_frame,
                            StreamCanceller* canceller = nullptr);

  // Opens a StepStream call (no deadline).
  std::unique_ptr<StepStream> OpenStepStream();

  const std::string& address() const { return address_; }
  std::chrono::milliseconds call_timeout() const { return call_timeout_; }
  bool tls() const { return tls_; }

 private:
  // A context with the call deadline (unary calls) and the token.
  std::unique_ptr<grpc::ClientContext> MakeContext(bool deadline = true) const;

  std::string address_;
  std::chrono::milliseconds call_timeout_;
  bool tls_ = false;
  std::string authorization_;    // "Bearer TOKEN", or empty
  grpc::Status options_status_;  // ValidateClientOptions's verdict
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
