#include "client/client.h"

#include <cstring>

#include <grpcpp/grpcpp.h>

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

StepStream::~StepStream() {
  if (finished_) return;
  context_->TryCancel();
  (void)Finish();
}

bool StepStream::Write(const alsim::v1::StepRequest& request) {
  if (writes_done_ || finished_) return false;
  return stream_->Write(request);
}

bool StepStream::Read(alsim::v1::StepResponse* response) {
  if (finished_) return false;
  return stream_->Read(response);
}

bool StepStream::WritesDone() {
  if (writes_done_ || finished_) return false;
  writes_done_ = true;
  return stream_->WritesDone();
}

grpc::Status StepStream::Finish() {
  if (finished_) {
    return {grpc::StatusCode::FAILED_PRECONDITION, "StepStream::Finish called twice"};
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

void StepStream::Cancel() { context_->TryCancel(); }

// ---- Client -----------------------------------------------------------------------------------

namespace {

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address, int max_message_bytes,
                                           bool viewer) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxSendMessageSize(max_message_bytes);
  arguments.SetMaxReceiveMessageSize(max_message_bytes);
  if (viewer) {
    // StreamStates: the transport should hold a few frames, not megabytes of stale ones (the
    // server drops frames only while the transport pushes back; see the proto).
    arguments.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    arguments.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES, 65536);
  }
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), arguments);
}

}  // namespace

Client::Client(const std::string& address, std::chrono::milliseconds call_timeout,
               int max_message_bytes)
    : address_(address),
      call_timeout_(call_timeout),
      channel_(MakeChannel(address, max_message_bytes, false)),
      simulator_(alsim::v1::Simulator::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)),
      viewer_(alsim::v1::Simulator::NewStub(MakeChannel(address, max_message_bytes, true))) {}

std::unique_ptr<grpc::ClientContext> Client::MakeContext() const {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + call_timeout_);
  return context;
}

bool Client::WaitForConnection(std::chrono::milliseconds timeout) {
  return channel_->WaitForConnected(std::chrono::system_clock::now() + timeout);
}

grpc::Status Client::CheckHealth(const std::string& service, HealthStatus* status) {
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  const auto context = MakeContext();
  grpc::Status rpc_status = health_->Check(context.get(), request, &response);
  if (rpc_status.ok()) *status = response.status();
  return rpc_status;
}

grpc::Status Client::ServerInfo(alsim::v1::ServerInfoResponse* info) {
  const auto context = MakeContext();
  return simulator_->ServerInfo(context.get(), alsim::v1::ServerInfoRequest(), info);
}

grpc::Status Client::Create(const alsim::v1::CreateRequest& request,
                            alsim::v1::CreateResponse* response) {
  const auto context = MakeContext();
  return simulator_->Create(context.get(), request, response);
}

grpc::Status Client::Step(const alsim::v1::StepRequest& request,
                          alsim::v1::StepResponse* response) {
  const auto context = MakeContext();
  return simulator_->Step(context.get(), request, response);
}

grpc::Status Client::Reset(const alsim::v1::ResetRequest& request,
                           alsim::v1::ResetResponse* response) {
  const auto context = MakeContext();
  return simulator_->Reset(context.get(), request, response);
}

grpc::Status Client::GetState(const alsim::v1::GetStateRequest& request,
                              alsim::v1::GetStateResponse* response) {
  const auto context = MakeContext();
  return simulator_->GetState(context.get(), request, response);
}

grpc::Status Client::SetState(const alsim::v1::SetStateRequest& request,
                              alsim::v1::SetStateResponse* response) {
  const auto context = MakeContext();
  return simulator_->SetState(context.get(), request, response);
}

grpc::Status Client::Destroy(const alsim::v1::DestroyRequest& request,
                             alsim::v1::DestroyResponse* response) {
  const auto context = MakeContext();
  return simulator_->Destroy(context.get(), request, response);
}

grpc::Status Client::List(alsim::v1::ListResponse* response) {
  const auto context = MakeContext();
  return simulator_->List(context.get(), alsim::v1::ListRequest(), response);
}

grpc::Status Client::StreamStates(
    const alsim::v1::StreamStatesRequest& request,
    const std::function<bool(const alsim::v1::StateFrame&)>& on_frame) {
  grpc::ClientContext context;  // no deadline: the stream runs until someone ends it
  const std::unique_ptr<grpc::ClientReader<alsim::v1::StateFrame>> reader =
      viewer_->StreamStates(&context, request);
  alsim::v1::StateFrame frame;
  bool stopped = false;
  while (reader->Read(&frame)) {
    if (!on_frame(frame)) {
      stopped = true;
      context.TryCancel();
      while (reader->Read(&frame)) {
      }
      break;
    }
  }
  const grpc::Status status = reader->Finish();
  // Our own cancellation is how a stream is meant to stop, not an error (whatever the server
  // may have sent after the frame that stopped it).
  return stopped ? grpc::Status::OK : status;
}

std::unique_ptr<StepStream> Client::OpenStepStream() {
  auto context = std::make_unique<grpc::ClientContext>();
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
