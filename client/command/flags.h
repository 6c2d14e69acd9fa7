// What every command of the `alsim` binary shares, the CLI's (client/cli/) and the viewer's
// (client/viewer/): the exit statuses, leaving the process, and flag parsing with them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace alsim::command {

// Exit statuses of the commands.
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

}  // namespace alsim::command
