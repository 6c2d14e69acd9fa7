#include "client/cli/remote_common.h"
#include "engine/solver/solver_option_table.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <utility>

namespace alsim::cli {

// ---- selections and solver flags ------------------------------------------------------------

bool SelectionFlags::Parse(FlagParser& parser) {
  if (parser.Is("--group")) {
    if (group != 0) parser.Error("--group given twice");
    group = parser.UnsignedValue(1, UINT64_MAX);
    return true;
  }
  if (parser.Is("--ids")) {
    if (!ids.empty()) parser.Error("--ids given twice");
    const std::string list = parser.Value();
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      const std::string item = list.substr(start, comma - start);
      char* end = nullptr;
      errno = 0;
      const unsigned long long id = std::strtoull(item.c_str(), &end, 10);
      if (item.empty() || std::isdigit(static_cast<unsigned char>(item[0])) == 0 || *end != '\0' ||
          errno == ERANGE || id == 0) {
        parser.Error("--ids '" + list + "' is not a comma-separated list of instance ids (> 0)");
      }
      ids.push_back(id);
      start = comma + 1;
    }
    return true;
  }
  return false;
}

void SelectionFlags::Require(const FlagParser& parser) const {
  if (group == 0 && ids.empty()) parser.Error("select instances with --group G or --ids I,J,...");
  if (group != 0 && !ids.empty()) parser.Error("give --group or --ids, not both");
}

alsim::v1::InstanceSelection SelectionFlags::ToProto() const {
  alsim::v1::InstanceSelection selection;
  selection.set_group_id(group);
  for (const std::uint64_t id : ids) selection.add_instance_ids(id);
  return selection;
}

bool ParseSolverFlag(FlagParser& parser, alsim::v1::SolverConfig* solver) {
  const SolverOptionSpec* spec = parser.IsFlag() ? FindSolverOption(parser.arg()) : nullptr;
  if (spec == nullptr || parser.arg() != spec->flag) return false;
  // The server checks the value against its own table (it may be newer than this client's) and
  // names the range when refusing.
  (*solver->mutable_parameters())[spec->name] = parser.Value();
  return true;
}

// ---- server answers ---------------------------------------------------------------------------

int ServerError(const std::string& command, const grpc::Status& status) {
  std::cerr << "alsim: " << command << ": " << client::StatusCodeName(status.error_code()) << ": "
            << status.error_message() << "\n";
  return kExitFailed;
}

grpc::Status ProbeSelection(client::Client& client, const alsim::v1::InstanceSelection& selection,
                            std::vector<std::uint64_t>* ids, int* nu) {
  alsim::v1::StreamStatesRequest request;
  *request.mutable_instances() = selection;
  request.set_rate_hz(1000);
  request.add_observations(alsim::v1::OBSERVATION_ACTUATOR_STATE);
  bool got_frame = false;
  grpc::Status status = client.StreamStates(request, [&](const alsim::v1::StateFrame& frame) {
    ids->assign(frame.instance_ids().begin(), frame.instance_ids().end());
    const auto ctrl = frame.observations().find("ctrl");
    if (ctrl != frame.observations().end() && ctrl->second.shape_size() == 2) {
      *nu = static_cast<int>(ctrl->second.shape(1));
      got_frame = true;
    }
    return false;
  });
  if (status.ok() && !got_frame) {
    status = {grpc::StatusCode::INTERNAL,
              "the server's state stream sent no [K, nu] ctrl tensor for the selection"};
  }
  return status;
}

// ---- terminal ---------------------------------------------------------------------------------

bool IsTerminal(int fd) { return isatty(fd) != 0; }

int TerminalWidth(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

namespace {

std::atomic<bool> interrupted{false};  // lock-free: safe to set in a signal handler

void OnInterrupt(int /*signal*/) { interrupted.store(true); }

}  // namespace

void InstallInterruptFlag() {
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_RESETHAND;  // the next SIGINT gets the default action
  sigaction(SIGINT, &action, nullptr);
}

bool Interrupted() { return interrupted.load(); }

}  // namespace alsim::cli
