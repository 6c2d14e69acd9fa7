// Compiles scenes in alsim-scene-compiler processes (server/scene_compiler_main.cc): MuJoCo's
// parser runs where it can read no file, is held to a memory and a time limit (its resident
// memory is watched every few milliseconds and it is killed past the limit), and can be
// abandoned (killed) when the client cancels, the deadline passes or the server stops. Only the
// binary model comes back; the caller converts it (ImportCompiledScene).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include <grpcpp/support/status.h>

#include "server/scene_compiler_protocol.h"

namespace alsim::server {

struct SceneCompilerLimits {
  // The alsim-scene-compiler program; empty: the one next to the running executable.
  std::string program;
  std::uint64_t memory_bytes = 4ull << 30;  // resident memory of one compile
  double seconds = 60;                      // wall time of one compile
  int concurrent = 4;                       // compiles at once; more wait for a slot
};

class SceneCompiler {
 public:
  explicit SceneCompiler(const SceneCompilerLimits& limits);

  // Compiles `request` in a new process. `should_stop` is polled about every 20 ms, also while
  // waiting for a slot: once it returns a non-OK status the process is killed and that status is
  // returned. INVALID_ARGUMENT for a scene MuJoCo or alsim refuses (MuJoCo's message, which names
  // no server path), RESOURCE_EXHAUSTED past the memory or time limit, INTERNAL when the compiler
  // cannot be started. The reply is filled on OK only.
  grpc::Status Compile(const SceneCompileRequest& request,
                       const std::function<grpc::Status()>& should_stop, SceneCompileReply* reply);

  const SceneCompilerLimits& limits() const { return limits_; }

 private:
  grpc::Status RunProcess(const SceneCompileRequest& request,
                          const std::function<grpc::Status()>& should_stop,
                          SceneCompileReply* reply);

  SceneCompilerLimits limits_;
  std::mutex mutex_;
  std::condition_variable slot_freed_;
  int running_ = 0;
};

// The directory of the running executable (from /proc/self/exe), with a trailing '/'.
std::string ExecutableDirectory();

}  // namespace alsim::server
