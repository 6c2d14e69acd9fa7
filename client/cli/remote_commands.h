// The CLI's commands that work on a server's instances: create, step, watch, bench, list and
// destroy. Each takes the arguments after its name and returns the exit status: 0 done, 1 the
// server refused a call (printed as "alsim: COMMAND: CODE: message") or a simulation diverged,
// 2 bad arguments (these exit at once, before any call).
#pragma once

#include <string>
#include <vector>

#include "client/client.h"

namespace alsim::cli {

// The part of `alsim --help` about these commands.
std::string RemoteUsage();
// One command's part (for `alsim COMMAND --help`), or "" when `command` is none of them.
std::string RemoteCommandUsage(const std::string& command);

int CreateCommand(client::Client& client, const std::vector<std::string>& args);
int StepCommand(client::Client& client, const std::vector<std::string>& args);
int WatchCommand(client::Client& client, const std::vector<std::string>& args);
int BenchCommand(client::Client& client, const std::vector<std::string>& args);
int ListCommand(client::Client& client, const std::vector<std::string>& args);
int DestroyCommand(client::Client& client, const std::vector<std::string>& args);

}  // namespace alsim::cli
