// What the CLI's server commands (create, step, watch, bench, list, destroy) share: instance
// selections, solver flags, error reporting and terminal helpers, on top of what every command
// shares (client/command/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "alsim/v1/alsim.pb.h"
#include "client/client.h"
#include "client/command/flags.h"
#include "client/command/observations.h"

namespace alsim::cli {

// The exit statuses, Leave, FlagParser and the reply readers are every command's
// (client/command/), the viewer's too; the CLI's code names them as its own.
using command::FlagParser;
using command::InstanceStatusName;
using command::kExitFailed;
using command::kExitOk;
using command::kExitUsage;
using command::Leave;
using command::ObservationValues;

// --group G or --ids I,J,...: exactly one of the two.
struct SelectionFlags {
  std::uint64_t group = 0;
  std::vector<std::uint64_t> ids;

  // Takes the current argument when it is --group or --ids; false otherwise.
  bool Parse(FlagParser& parser);
  // Usage error unless exactly one was given.
  void Require(const FlagParser& parser) const;
  alsim::v1::InstanceSelection ToProto() const;
};

// The solver flags shared by create and bench: every flag of `alsim run`'s option table
// (engine/solver/solver_option_table.h), sent by name in SolverConfig.parameters.
// Takes the current argument when it is one of them; false otherwise.
bool ParseSolverFlag(FlagParser& parser, alsim::v1::SolverConfig* solver);

// Prints "alsim: COMMAND: CODE: message" on stderr; returns kExitFailed.
int ServerError(const std::string& command, const grpc::Status& status);

// The ids and actuator count of a selection, asked of the server with a one-frame StreamStates
// (Step returns no specs and List no actuator counts). The ids come in batch order.
grpc::Status ProbeSelection(client::Client& client, const alsim::v1::InstanceSelection& selection,
                            std::vector<std::uint64_t>* ids, int* nu);

bool IsTerminal(int fd);
// Columns of the terminal on `fd`, or 0 when unknown.
int TerminalWidth(int fd);

// Ctrl-C handling for commands that must clean up: the first SIGINT sets the flag (and restores
// the default action, so that a second one ends the process at once).
void InstallInterruptFlag();
bool Interrupted();

}  // namespace alsim::cli
