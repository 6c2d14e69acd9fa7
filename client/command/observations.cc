#include "client/command/observations.h"

#include "client/client.h"

namespace alsim::command {

grpc::Status ObservationValues(const google::protobuf::Map<std::string, alsim::v1::Tensor>& map,
                               const std::string& name, std::vector<double>* values) {
  const auto found = map.find(name);
  if (found == map.end()) {
    return {grpc::StatusCode::INTERNAL, "the server sent no '" + name + "' observation"};
  }
  grpc::Status status = client::DecodeTensor(found->second, values);
  if (!status.ok()) {
    return {grpc::StatusCode::INTERNAL,
            "the server's '" + name + "' observation: " + status.error_message()};
  }
  return status;
}

std::string InstanceStatusName(alsim::v1::InstanceStatus status) {
  switch (status) {
    case alsim::v1::INSTANCE_STATUS_OK:
      return "OK";
    case alsim::v1::INSTANCE_STATUS_DIVERGED:
      return "DIVERGED";
    default:
      return "UNSPECIFIED";
  }
}

}  // namespace alsim::command
