// Confines the scene compiler process (alsim-scene-compiler) before it reads a client's scene:
// resource limits, and a seccomp filter under which it cannot open any file, start a process or
// use the network. What MuJoCo's compiler would read from disk (an <include>, a mesh path) then
// fails like a missing file, whatever the path, so a scene learns nothing of the server's disk.
#pragma once

#include <cstdint>
#include <string>

namespace alsim::server {

struct SandboxLimits {
  std::uint64_t memory_bytes = 0;  // address space (RLIMIT_AS); 0 = unlimited
  std::uint64_t cpu_seconds = 0;   // CPU time (RLIMIT_CPU); 0 = unlimited
};

// Applies `limits`, forbids core dumps and writing files (RLIMIT_FSIZE 0). Returns an error
// message, empty on success.
std::string ApplyResourceLimits(const SandboxLimits& limits);

// Installs the seccomp filter: only the system calls that computing on memory and on the file
// descriptors already open needs (read, write, memory mapping, futex, exit, signals, clocks);
// every other call fails with EACCES. Irreversible for the process. (Sanitizer builds refuse a
// list of calls that reach files, processes and the network instead: their runtimes need more.)
// Returns an error message (the kernel refused: no seccomp on this host), empty on success.
std::string ForbidFilesAndProcesses();

}  // namespace alsim::server
