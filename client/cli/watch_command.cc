// `alsim watch SELECTION`: StreamStates frames as text, one line each.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>

#include "client/cli/remote_commands.h"
#include "client/cli/remote_common.h"

namespace alsim::cli {
namespace {

// True when qpos [nq] (with nv velocities) starts with a free joint: 3 positions and a unit
// quaternion, and some joint has one more position than velocities. A guess (the stream does not
// say which joints there are): three hinges or slides followed by a ball joint look the same.
bool StartsWithFreeJoint(const double* qpos, std::size_t nq, std::size_t nv) {
  if (nq < 7 || nq <= nv) return false;
  const double norm =
      std::sqrt(qpos[3] * qpos[3] + qpos[4] * qpos[4] + qpos[5] * qpos[5] + qpos[6] * qpos[6]);
  return std::abs(norm - 1.0) < 1e-6;
}

// One frame as a line (without its end).
std::string FormatFrame(const alsim::v1::StateFrame& frame, std::uint64_t dropped_so_far,
                        grpc::Status* status) {
  std::vector<double> qpos, qvel, contacts, times;
  for (const auto& [name, values] : {std::pair<const char*, std::vector<double>*>{"qpos", &qpos},
                                     {"qvel", &qvel},
                                     {"contact_count", &contacts},
                                     {"time", &times}}) {
    *status = ObservationValues(frame.observations(), name, values);
    if (!status->ok()) return "";
  }
  const std::size_t batch = static_cast<std::size_t>(frame.instance_ids_size());
  if (batch == 0 || qpos.size() % batch != 0 || qvel.size() % batch != 0 ||
      contacts.size() != batch || times.size() != batch) {
    *status = {grpc::StatusCode::INTERNAL, "a frame's tensors do not match its instance count"};
    return "";
  }
  const std::size_t nq = qpos.size() / batch;
  const std::size_t nv = qvel.size() / batch;
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, "frame %llu  dropped %llu  server %.3f s",
                static_cast<unsigned long long>(frame.sequence()),
                static_cast<unsigned long long>(dropped_so_far), frame.server_time());
  std::string line = buffer;
  for (std::size_t k = 0; k < batch; ++k) {
    std::snprintf(buffer, sizeof buffer, " | %llu: t=%.4f",
                  static_cast<unsigned long long>(frame.instance_ids(static_cast<int>(k))),
                  times[k]);
    line += buffer;
    if (StartsWithFreeJoint(&qpos[k * nq], nq, nv)) {
      std::snprintf(buffer, sizeof buffer, " z=%.3f", qpos[k * nq + 2]);
      line += buffer;
    }
    std::snprintf(buffer, sizeof buffer, " c=%d", static_cast<int>(contacts[k]));
    line += buffer;
  }
  return line;
}

}  // namespace

int WatchCommand(client::Client& client, const std::vector<std::string>& args) {
  FlagParser parser("watch", args);
  SelectionFlags selection;
  double rate = 10;
  std::uint64_t frames = 0;
  while (parser.Next()) {
    if (selection.Parse(parser)) {
    } else if (parser.Is("--rate")) {
      rate = parser.NumberValue(0, 1000);
      if (rate == 0) parser.Error("--rate must be above 0");
    } else if (parser.Is("--frames")) {
      frames = parser.UnsignedValue(0, UINT64_MAX);
    } else {
      parser.Unexpected();
    }
  }
  selection.Require(parser);

  alsim::v1::StreamStatesRequest request;
  *request.mutable_instances() = selection.ToProto();
  request.set_rate_hz(rate);
  for (const auto observation :
       {alsim::v1::OBSERVATION_QPOS, alsim::v1::OBSERVATION_QVEL,
        alsim::v1::OBSERVATION_CONTACT_SUMMARY, alsim::v1::OBSERVATION_TIME}) {
    request.add_observations(observation);
  }
  const bool terminal = IsTerminal(STDOUT_FILENO);
  InstallInterruptFlag();
  std::uint64_t shown = 0;
  std::uint64_t dropped = 0;
  grpc::Status frame_status = grpc::Status::OK;
  const grpc::Status status = client.StreamStates(request, [&](const alsim::v1::StateFrame& frame) {
    if (Interrupted()) return false;
    dropped += frame.dropped();
    std::string line = FormatFrame(frame, dropped, &frame_status);
    if (!frame_status.ok()) return false;
    if (terminal) {
      const int width = TerminalWidth(STDOUT_FILENO);
      if (width > 1 && line.size() >= static_cast<std::size_t>(width)) {
        line.resize(static_cast<std::size_t>(width) - 1);  // a wrapped line cannot be redrawn
      }
      std::printf("\r%s\033[K", line.c_str());
    } else {
      std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
    ++shown;
    return !(frames > 0 && shown >= frames) && !Interrupted();
  });
  if (terminal && shown > 0) std::printf("\n");
  std::fflush(stdout);
  if (!frame_status.ok()) return ServerError("watch", frame_status);
  if (!status.ok()) return ServerError("watch", status);
  return kExitOk;
}

}  // namespace alsim::cli
