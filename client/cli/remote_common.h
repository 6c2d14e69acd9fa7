// What the CLI's server commands (create, step, watch, bench, list, destroy) share: flag parsing
// with the CLI's exit statuses, instance selections, error reporting and terminal helpers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "alsim/v1/alsim.pb.h"
#include "client/client.h"

namespace alsim::cli {

// Exit statuses of the server commands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // the server refused a call, or the simulation diverged
inline constexpr int kExitUsage = 2;   // bad arguments

// Leaves the process with `code` once the output is flushed, without exit handlers: a channel's
// subchannels outlive it on gRPC's threads (a connection attempt backing off starts a new TLS
// handshake when its timer fires), and OpenSSL's exit cleanup under such a handshake crashed the
// CLI now and then (exit -11 after a failed handshake). Nothing else in the CLI is left for exit
// handlers. Sanitizer builds exit normally, so that their leak check runs.
[[noreturn]] void Leave(int code);

// Walks one command's arguments. Usage errors print "alsim: COMMAND: message" and exit 2.
class FlagParser {
 public:
  FlagParser(std::string command, std::vector<std::string> args);

  // Moves to the next argument; false when there is none.
  bool Next();
  const std::string& arg() const { return args_[index_]; }
  bool Is(const char* flag) const { return arg() == flag; }
  // Starts with '-' (and is not just "-").
  bool IsFlag() const { return arg().size() > 1 && arg()[0] == '-'; }

  // The current flag's value (the next argument), parsed. Out of range is a usage error.
  std::string Value();
  std::uint64_t UnsignedValue(std::uint64_t min, std::uint64_t max);
  double NumberValue(double min, double max);  // finite, in [min, max]

  // The current argument is not one this command takes.
  [[noreturn]] void Unexpected() const;
  [[noreturn]] void Error(const std::string& message) const;
  const std::string& command() const { return command_; }

 private:
  std::string command_;
  std::vector<std::string> args_;
  std::size_t index_ = 0;
  bool started_ = false;
};

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

// The named tensor of a response's observations as doubles, or an INTERNAL status naming what
// is missing or malformed.
grpc::Status ObservationValues(const google::protobuf::Map<std::string, alsim::v1::Tensor>& map,
                               const std::string& name, std::vector<double>* values);

bool IsTerminal(int fd);
// Columns of the terminal on `fd`, or 0 when unknown.
int TerminalWidth(int fd);

// Ctrl-C handling for commands that must clean up: the first SIGINT sets the flag (and restores
// the default action, so that a second one ends the process at once).
void InstallInterruptFlag();
bool Interrupted();

// "OK" or "DIVERGED".
std::string InstanceStatusName(alsim::v1::InstanceStatus status);

}  // namespace alsim::cli
