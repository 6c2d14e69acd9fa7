// What was built, from which source, against which libraries.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace alsim {

struct BuildInfo {
  std::string version;       // alsim's semantic version ("0.1.0")
  std::string git_revision;  // `git describe --always --dirty` at configure time, or "unknown"
  std::string build_type;    // CMake build type
  std::string compiler;      // "GNU 12.2.0"
  std::string sanitizer;     // "", "address" or "thread"
  // (library, version) for every numerical library the engine links, versions as the
  // libraries report them at run time where they can (the loaded .so, not just the header).
  std::vector<std::pair<std::string, std::string>> dependencies;
};

// Build information of the engine library.
const BuildInfo& EngineBuildInfo();

}  // namespace alsim
