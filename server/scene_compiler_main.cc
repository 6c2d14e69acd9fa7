// alsim-scene-compiler: compiles one scene for alsim-server in a process of its own, so that
// MuJoCo's parser and compiler run under limits (memory, CPU time), in a sandbox that opens no
// file, and where a crash or a runaway compile costs only this process.
//
// Started by the server (server/scene_compiler.h) with the socket on file descriptor 3: reads one
// framed request (server/scene_compiler_protocol.h), writes one framed reply, exits. Not meant to
// be run by hand.
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <string>

#include "engine/data/data.h"
#include "engine/model/model_import.h"
#include "engine/solver/solver.h"
#include "server/sandbox.h"
#include "server/scene_compiler_protocol.h"

#ifdef ALSIM_SANITIZED
// The sanitizer runtimes' allocator statistics (clang ships a header for it, GCC does not).
extern "C" std::size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace {

constexpr int kSocket = 3;

// Heap bytes in use: glibc's counters (this process is single-threaded, so the main arena is
// all of it), or the sanitizer's allocator, which replaces malloc in sanitizer builds.
std::uint64_t HeapInUse() {
#ifdef ALSIM_SANITIZED
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

bool ReadExactly(int fd, char* out, std::size_t n) {
  while (n > 0) {
    const ssize_t got = read(fd, out, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

bool WriteAll(int fd, const std::string& bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t put = write(fd, bytes.data() + at, bytes.size() - at);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    at += static_cast<std::size_t>(put);
  }
  return true;
}

[[noreturn]] void Reply(const alsim::server::SceneCompileReply& reply) {
  WriteAll(kSocket, alsim::server::Frame(alsim::server::EncodeReply(reply)));
  _exit(0);
}

[[noreturn]] void Fail(const std::string& error, bool out_of_memory = false) {
  alsim::server::SceneCompileReply reply;
  reply.scene.error = error;
  reply.out_of_memory = out_of_memory;
  Reply(reply);
}

std::uint64_t Flag(int argc, char** argv, const std::string& name) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (name == argv[i]) return std::strtoull(argv[i + 1], nullptr, 10);
  }
  return 0;
}

bool Has(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i) {
    if (name == argv[i]) return true;
  }
  return false;
}

void Compile(const alsim::server::SceneCompileRequest& request) {
  alsim::server::SceneCompileReply reply;
  reply.scene = request.path.empty()
                    ? alsim::CompileSceneText(request.text, request.assets, request.name)
                    : alsim::CompileSceneFile(request.path);
  if (!reply.scene.error.empty()) {
    reply.out_of_memory = reply.scene.error.find("allocate memory") != std::string::npos ||
                          reply.scene.error.find("allocate mjModel") != std::string::npos;
    Reply(reply);
  }
  // Convert here too, as the server will, to report what the model and an instance cost.
  const std::uint64_t before_model = HeapInUse();
  const alsim::ModelImport imported = alsim::ImportCompiledScene(reply.scene, request.name);
  if (!imported) Fail(imported.error);
  const std::uint64_t before_instance = HeapInUse();
  {
    alsim::Data data(*imported.model);
    alsim::EnsureSolver(*imported.model, data, alsim::SolverType::kSubAdmm);
    reply.instance_bytes = HeapInUse() - before_instance;
  }
  reply.model_bytes = before_instance - before_model;
  Reply(reply);
}

}  // namespace

int main(int argc, char** argv) {
  if (Has(argc, argv, "--help") || !Has(argc, argv, "--serve")) {
    std::cerr << "alsim-scene-compiler: compiles one scene for alsim-server, which starts it with "
                 "--serve and a socket on descriptor 3; not meant to be run by hand.\n"
                 "  --memory BYTES  address-space limit   --cpu-seconds N  CPU-time limit\n"
                 "  --allow-files   do not sandbox file access (built-in scenes only)\n";
    return Has(argc, argv, "--help") ? 0 : 2;
  }
  alsim::server::SandboxLimits limits;
  limits.memory_bytes = Flag(argc, argv, "--memory");
  limits.cpu_seconds = Flag(argc, argv, "--cpu-seconds");
  const std::uint64_t max_request = Flag(argc, argv, "--max-request-bytes");
  if (const std::string error = alsim::server::ApplyResourceLimits(limits); !error.empty()) {
    Fail("the scene compiler could not limit itself: " + error);
  }
  alsim::InstallMujocoHandlers();
  if (!Has(argc, argv, "--allow-files")) {
    if (const std::string error = alsim::server::ForbidFilesAndProcesses(); !error.empty()) {
      Fail("the scene compiler could not sandbox itself (" + error +
           "); client scenes are refused on this host");
    }
  }
  try {
    char header[alsim::server::kFrameHeaderBytes];
    if (!ReadExactly(kSocket, header, sizeof header)) _exit(3);
    const std::uint64_t length = alsim::server::FrameLength(header);
    if (max_request > 0 && length > max_request) Fail("the request is larger than allowed");
    std::string bytes(length, '\0');
    if (!ReadExactly(kSocket, bytes.data(), bytes.size())) _exit(3);
    alsim::server::SceneCompileRequest request;
    std::string error;
    if (!alsim::server::DecodeRequest(bytes, &request, &error)) Fail(error);
    bytes = std::string();
    Compile(request);
  } catch (const std::bad_alloc&) {
    Fail("the scene needs more memory than the server allows a compile", true);
  } catch (const std::exception& e) {
    Fail(std::string("the scene compiler failed: ") + e.what());
  }
  return 0;
}
