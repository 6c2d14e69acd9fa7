// Reading a server's replies, for the commands that show them (client/cli/, client/viewer/).
#pragma once

#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "alsim/v1/alsim.pb.h"

namespace alsim::command {

// The named tensor of a response's observations as doubles, or an INTERNAL status naming what
// is missing or malformed.
grpc::Status ObservationValues(const google::protobuf::Map<std::string, alsim::v1::Tensor>& map,
                               const std::string& name, std::vector<double>* values);

// "OK" or "DIVERGED".
std::string InstanceStatusName(alsim::v1::InstanceStatus status);

}  // namespace alsim::command
