#include "client/client.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>

namespace alsim::client {
namespace {

// Little-endian byte order by construction, whatever the host's.
void AppendLittleEndian(std::uint64_t bits, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

std::uint64_t ReadLittleEndian(const char* data, int bytes) {
  std::uint64_t bits = 0;
  for (int i = 0; i < bytes; ++i) {
    bits |= static_cast<std::uint64_t>(static_cast<unsigned char>(data[i])) << (8 * i);
  }
  return bits;
}

}  // namespace

// ---- StepStream -------------------------------------------------------------------------------

StepStream::StepStream(
    std::unique_ptr<grpc::ClientContext> context,
    std::unique_ptr<grpc::ClientReaderWriter<alsim::v1::StepRequest, alsim::v1::StepResponse>>
        stream)
    : context_(std::move(context)), stream_(std::move(stream)) {}

StepStream::StepStream(grpc::Status error) : error_(std::move(error)) {}

StepStream::~StepStream() {
  if (finished_) return;
  if (context_ != nullptr) context_->TryCancel();
  (void)Finish();
}

bool StepStream::Write(const alsim::v1::StepRequest& request) {
  if (writes_done_ || finished_ || stream_ == nullptr) return false;
  return stream_->Write(request);
}

bool StepStream::Read(alsim::v1::StepResponse* response) {
  if (finished_ || stream_ == nullptr) return false;
  return stream_->Read(response);
}

bool StepStream::WritesDone() {
  if (writes_done_ || finished_) return false;
  writes_done_ = true;
  return stream_ == nullptr ? false : stream_->WritesDone();
}

grpc::Status StepStream::Finish() {
  if (finished_) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "StepStream::Finish called twice"};
  }
  if (stream_ == nullptr) {
    finished_ = true;
    return error_;
  }
  if (!writes_done_) WritesDone();
  // gRPC's Finish waits for the status, which the server sends after its last response: read
  // (and drop) what is left first.
  alsim::v1::StepResponse unread;
  while (stream_->Read(&unread)) {
  }
  finished_ = true;
  return stream_->Finish();
}

void StepStream::Cancel() {
  if (context_ != nullptr) context_->TryCancel();
}

// ---- options ----------------------------------------------------------------------------------

namespace {

constexpr char kPemBegin[] = "-----BEGIN ";

// Tokens travel as an HTTP/2 header value: printable ASCII; no spaces, as in the server's token
// file ("TOKEN TENANT" lines).
bool IsTokenText(const std::string& token) {
  for (const char c : token) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

grpc::Status ReadWholeFile(const std::string& path, std::string* contents) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    return {grpc::StatusCode::NOT_FOUND,
            "cannot read " + path + (error != 0 ? std::string(": ") + std::strerror(error) : "")};
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return {grpc::StatusCode::NOT_FOUND, "cannot read " + path};
  *contents = text.str();
  return grpc::Status::OK;
}

}  // namespace

grpc::Status ValidateClientOptions(const ClientOptions& options) {
  if (options.max_message_bytes < 1) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "max_message_bytes must be at least 1"};
  }
  if (options.tls_cert_chain.empty() != options.tls_private_key.empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "a client certificate needs its private key and a private key its certificate "
            "(mutual TLS takes both)"};
  }
  const std::pair<const char*, const std::string*> pems[] = {
      {"the root certificates", &options.tls_root_certs},
      {"the client certificate", &options.tls_cert_chain},
      {"the client's private key", &options.tls_private_key},
  };
  for (const auto& [what, pem] : pems) {
    if (!pem->empty() && pem->find(kPemBegin) == std::string::npos) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              std::string(what) + " are not PEM (no '-----BEGIN ...' line)"};
    }
  }
  if (!IsTokenText(options.token)) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "the token must be printable ASCII without spaces or control characters"};
  }
  return grpc::Status::OK;
}

grpc::Status ReadPemFile(const std::string& path, std::string* contents) {
  std::string text;
  grpc::Status status = ReadWholeFile(path, &text);
  if (!status.ok()) return status;
  if (text.find(kPemBegin) == std::string::npos) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            path + " is not a PEM file (no '-----BEGIN ...' line)"};
  }
  *contents = std::move(text);
  return grpc::Status::OK;
}

grpc::Status ReadTokenFile(const std::string& path, std::string* token) {
  std::string text;
  grpc::Status status = ReadWholeFile(path, &text);
  if (!status.ok()) return status;
  const char* const whitespace = " \t\r\n\f\v";
  const std::size_t begin = text.find_first_not_of(whitespace);
  if (begin == std::string::npos) {
    return {grpc::StatusCode::INVALID_ARGUMENT, "the token file " + path + " is empty"};
  }
  text = text.substr(begin, text.find_last_not_of(whitespace) - begin + 1);
  if (!IsTokenText(text)) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "the token file " + path +
                " must hold one token: printable ASCII without spaces or control characters"};
  }
  *token = std::move(text);
  return grpc::Status::OK;
}

// ---- Client -----------------------------------------------------------------------------------

namespace {

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const ClientOptions& options) {
  if (!options.tls_enabled()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = options.tls_root_certs;
  ssl.pem_cert_chain = options.tls_cert_chain;
  ssl.pem_private_key = options.tls_private_key;
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address, const ClientOptions& options,
                                           bool viewer) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxSendMessageSize(options.max_message_bytes);
  arguments.SetMaxReceiveMessageSize(options.max_message_bytes);
  if (options.tls_enabled() && !options.tls_server_name.empty()) {
    arguments.SetSslTargetNameOverride(options.tls_server_name);
  }
  if (viewer) {
    // StreamStates: the transport should hold a few frames, not megabytes of stale ones (the
    // server drops frames only while the transport pushes back; see the proto).
    arguments.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    arguments.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 65536);
  }
  return grpc::CreateCustomChannel(address, ChannelCredentials(options), arguments);
}

ClientOptions PlainOptions(std::chrono::milliseconds call_timeout, int max_message_bytes) {
  ClientOptions options;
  options.call_timeout = call_timeout;
  options.max_message_bytes = max_message_bytes;
  return options;
}

// What the channels are built from: `options`, or when they are refused, options without what
// could break gRPC (an unusable token or message limit) -- no call is made through them then.
ClientOptions UsableOptions(const ClientOptions& options, const grpc::Status& verdict) {
  if (verdict.ok()) return options;
  ClientOptions usable = options;
  usable.token.clear();
  if (usable.max_message_bytes < 1) usable.max_message_bytes = kDefaultMaxMessageBytes;
  return usable;
}

}  // namespace

Client::Client(const std::string& address, std::chrono::milliseconds call_timeout,
               int max_message_bytes)
    : Client(address, PlainOptions(call_timeout, max_message_bytes)) {}

Client::Client(const std::string& address, const ClientOptions& options)
    : address_(address),
      call_timeout_(options.call_timeout),
      tls_(options.tls_enabled()),
      options_status_(ValidateClientOptions(options)) {
  const ClientOptions usable = UsableOptions(options, options_status_);
  if (!usable.token.empty()) authorization_ = "Bearer " + usable.token;
  channel_ = MakeChannel(address, usable, false);
  simulator_ = alsim::v1::Simulator::NewStub(channel_);
  health_ = grpc::health::v1::Health::NewStub(channel_);
  viewer_ = alsim::v1::Simulator::NewStub(MakeChannel(address, usable, true));
}

std::unique_ptr<grpc::ClientContext> Client::MakeContext(bool deadline) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (deadline) context->set_deadline(std::chrono::system_clock::now() + call_timeout_);
  // Metadata rather than call credentials: gRPC sends those over TLS only, and a token server
  // may serve plain HTTP/2 (on loopback, or behind a TLS-terminating proxy).
  if (!authorization_.empty()) context->AddMetadata("authorization", authorization_);
  return context;
}

bool Client::WaitForConnection(std::chrono::milliseconds timeout) {
  if (!options_status_.ok()) return false;
  return channel_->WaitForConnected(std::chrono::system_clock::now() + timeout);
}

grpc::Status Client::CheckHealth(const std::string& service, HealthStatus* status) {
  if (!options_status_.ok()) return options_status_;
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const auto context = MakeContext();
  grpc::Status rpc_status = health_->Check(context.get(), request, &response);
  if (rpc_status.ok()) *status = response.status();
  return rpc_status;
}

grpc::Status Client::ServerInfo(alsim::v1::ServerInfoResponse* info) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->ServerInfo(context.get(), alsim::v1::ServerInfoRequest(), info);
}

grpc::Status Client::Create(const alsim::v1::CreateRequest& request,
                            alsim::v1::CreateResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->Create(context.get(), request, response);
}

grpc::Status Client::Step(const alsim::v1::StepRequest& request,
                          alsim::v1::StepResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->Step(context.get(), request, response);
}

grpc::Status Client::Reset(const alsim::v1::ResetRequest& request,
                           alsim::v1::ResetResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->Reset(context.get(), request, response);
}

grpc::Status Client::GetState(const alsim::v1::GetStateRequest& request,
                              alsim::v1::GetStateResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->GetState(context.get(), request, response);
}

grpc::Status Client::SetState(const alsim::v1::SetStateRequest& request,
                              alsim::v1::SetStateResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->SetState(context.get(), request, response);
}

grpc::Status Client::Destroy(const alsim::v1::DestroyRequest& request,
                             alsim::v1::DestroyResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->Destroy(context.get(), request, response);
}

grpc::Status Client::List(alsim::v1::ListResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->List(context.get(), alsim::v1::ListRequest(), response);
}

grpc::Status Client::GetScene(const alsim::v1::GetSceneRequest& request,
                              alsim::v1::GetSceneResponse* response) {
  if (!options_status_.ok()) return options_status_;
  const auto context = MakeContext();
  return simulator_->GetScene(context.get(), request, response);
}

void StreamCanceller::Cancel() {
  const std::lock_guard<std::mutex> lock(mutex_);
  cancelled_ = true;
  if (context_ != nullptr) context_->TryCancel();
}

bool StreamCanceller::cancelled() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return cancelled_;
}

void StreamCanceller::Attach(grpc::ClientContext* context) {
  const std::lock_guard<std::mutex> lock(mutex_);
  context_ = context;
  if (context_ != nullptr && cancelled_) context_->TryCancel();
}

grpc::Status Client::StreamStates(const alsim::v1::StreamStatesRequest& request,
                                  const std::function<bool(const alsim::v1::StateFrame&)>& on_frame,
                                  StreamCanceller* canceller) {
  if (!options_status_.ok()) return options_status_;
  // No deadline: the stream runs until someone ends it.
  const std::unique_ptr<grpc::ClientContext> context = MakeContext(false);
  if (canceller != nullptr) canceller->Attach(context.get());
  struct Detach {  // the canceller must not touch the context once it is gone
    StreamCanceller* canceller;
    ~Detach() {
      if (canceller != nullptr) canceller->Attach(nullptr);
    }
  } detach{canceller};
  const std::unique_ptr<grpc::ClientReader<alsim::v1::StateFrame>> reader =
      viewer_->StreamStates(context.get(), request);
  alsim::v1::StateFrame frame;
  bool stopped = false;
  while (reader->Read(&frame)) {
    if (!on_frame(frame)) {
      stopped = true;
      context->TryCancel();
      while (reader->Read(&frame)) {
      }
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  // Our own cancellation is how a stream is meant to stop, not an error (whatever the server
  // may have sent after the frame that stopped it).
  if (canceller != nullptr && canceller->cancelled()) stopped = true;
  return stopped ? grpc::Status::OK : status;
}

std::unique_ptr<StepStream> Client::OpenStepStream() {
  if (!options_status_.ok()) return std::make_unique<StepStream>(options_status_);
  auto context = MakeContext(false);
  auto stream = simulator_->StepStream(context.get());
  return std::make_unique<StepStream>(std::move(context), std::move(stream));
}

// ---- free functions ---------------------------------------------------------------------------

std::string HealthStatusName(HealthStatus status) {
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(status);
}

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "CODE_" + std::to_string(static_cast<int>(code));
  }
}

alsim::v1::Tensor MakeActionsTensor(const std::vector<double>& values, std::int64_t instances,
                                    std::int64_t nu) {
  alsim::v1::Tensor tensor;
  tensor.set_dtype(alsim::v1::DTYPE_FLOAT64);
  tensor.add_shape(instances);
  tensor.add_shape(nu);
  std::string* data = tensor.mutable_data();
  data->reserve(values.size() * sizeof(double));
  for (const double value : values) {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    AppendLittleEndian(bits, sizeof bits, data);
  }
  return tensor;
}

grpc::Status DecodeTensor(const alsim::v1::Tensor& tensor, std::vector<double>* values) {
  int element = 0;
  switch (tensor.dtype()) {
    case alsim::v1::DTYPE_FLOAT64:
      element = 8;
      break;
    case alsim::v1::DTYPE_FLOAT32:
    case alsim::v1::DTYPE_INT32:
      element = 4;
      break;
    default:
      return {grpc::StatusCode::INVALID_ARGUMENT, "tensor dtype " +
                                                      alsim::v1::DType_Name(tensor.dtype()) +
                                                      " is not float64, float32 or int32"};
  }
  std::uint64_t count = 1;
  for (const std::int64_t n : tensor.shape()) {
    if (n < 0) return {grpc::StatusCode::INVALID_ARGUMENT, "tensor has a negative dimension"};
    // Bounded by the bytes there are, so that the product cannot overflow.
    if (n != 0 && count > tensor.data().size() / static_cast<std::uint64_t>(n)) {
      count = tensor.data().size() + 1;
    } else {
      count *= static_cast<std::uint64_t>(n);
    }
  }
  if (tensor.data().size() != count * static_cast<std::uint64_t>(element)) {
    std::string shape;
    for (const std::int64_t n : tensor.shape())
      shape += (shape.empty() ? "" : ", ") + std::to_string(n);
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "tensor holds " + std::to_string(tensor.data().size()) + " bytes, not " +
                std::to_string(element) + " per element of shape [" + shape + "]"};
  }
  values->resize(count);
  const char* data = tensor.data().data();
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t bits = ReadLittleEndian(data + i * element, element);
    switch (tensor.dtype()) {
      case alsim::v1::DTYPE_FLOAT64: {
        double value;
        std::memcpy(&value, &bits, sizeof value);
        (*values)[i] = value;
        break;
      }
      case alsim::v1::DTYPE_FLOAT32: {
        const auto narrow = static_cast<std::uint32_t>(bits);
        float value;
        std::memcpy(&value, &narrow, sizeof value);
        (*values)[i] = value;
        break;
      }
      default: {
        const auto narrow = static_cast<std::uint32_t>(bits);
        std::int32_t value;
        std::memcpy(&value, &narrow, sizeof value);
        (*values)[i] = value;
        break;
      }
    }
  }
  return grpc::Status::OK;
}

}  // namespace alsim::client
