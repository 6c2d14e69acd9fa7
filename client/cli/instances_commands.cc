// `alsim list` and `alsim destroy SELECTION`.
#include <cstdio>
#include <iostream>

#include "client/cli/json_writer.h"
#include "client/cli/remote_commands.h"
#include "client/cli/remote_common.h"

namespace alsim::cli {

int ListCommand(client::Client& client, const std::vector<std::string>& args) {
  FlagParser parser("list", args);
  bool json = false;
  while (parser.Next()) {
    if (parser.Is("--json")) {
      json = true;
    } else {
      parser.Unexpected();
    }
  }
  alsim::v1::ListResponse response;
  const grpc::Status status = client.List(&response);
  if (!status.ok()) return ServerError("list", status);

  if (json) {
    std::vector<std::string> rows;
    for (const alsim::v1::InstanceInfo& info : response.instances()) {
      JsonObjectWriter row;
      row.UInt("id", info.instance_id());
      row.UInt("group", info.group_id());
      row.String("scene", info.scene());
      row.String("solver", info.solver());
      row.Double("time", info.time());
      row.UInt("steps", info.steps());
      row.String("status", InstanceStatusName(info.status()));
      rows.push_back(row.Finish());
    }
    JsonObjectWriter out;
    out.RawArray("instances", rows);
    std::cout << out.Finish() << "\n";
    return kExitOk;
  }
  if (response.instances_size() == 0) {
    std::printf("no instances\n");
    return kExitOk;
  }
  std::printf("%20s %20s  %-24s %-12s %12s %10s  %s\n", "instance", "group", "scene", "solver",
              "time (s)", "steps", "status");
  for (const alsim::v1::InstanceInfo& info : response.instances()) {
    std::printf("%20llu %20llu  %-24s %-12s %12.6f %10llu  %s\n",
                static_cast<unsigned long long>(info.instance_id()),
                static_cast<unsigned long long>(info.group_id()), info.scene().c_str(),
                info.solver().c_str(), info.time(), static_cast<unsigned long long>(info.steps()),
                InstanceStatusName(info.status()).c_str());
  }
  return kExitOk;
}

int DestroyCommand(client::Client& client, const std::vector<std::string>& args) {
  FlagParser parser("destroy", args);
  SelectionFlags selection;
  while (parser.Next()) {
    if (!selection.Parse(parser)) parser.Unexpected();
  }
  selection.Require(parser);
  alsim::v1::DestroyRequest request;
  *request.mutable_instances() = selection.ToProto();
  alsim::v1::DestroyResponse response;
  const grpc::Status status = client.Destroy(request, &response);
  if (!status.ok()) return ServerError("destroy", status);
  std::printf("destroyed %u instance%s\n", response.destroyed(),
              response.destroyed() == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace alsim::cli
