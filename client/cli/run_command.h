// `alsim run`: loads a scene and steps it in this process, without a server (headless runner for
// quick checks, benchmarks and determinism tests).
#pragma once

#include <string>
#include <vector>

namespace alsim::cli {

// The "run" part of `alsim --help`, with the defaults this build uses.
std::string RunUsage();

// Runs `alsim run ARGS...` (ARGS after the word "run") and returns the exit status: 0 done,
// 1 the simulation diverged, 2 bad arguments, an unreadable or unsupported scene, or solver
// options the engine refuses. Results go to stdout, messages and progress to stderr.
int RunCommand(const std::vector<std::string>& args);

}  // namespace alsim::cli
