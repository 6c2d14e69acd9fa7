#include "server/scene_compiler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

extern char** environ;

namespace alsim::server {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPollMilliseconds = 5;

// The child's resident memory in bytes (from /proc/PID/statm), or 0 when unreadable.
std::uint64_t ResidentBytes(pid_t pid) {
  const std::string path = "/proc/" + std::to_string(pid) + "/statm";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[128] = {};
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(text, "%llu %llu", &size, &resident) != 2) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Closes a descriptor when it goes out of scope.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) close(fd);
  }
};

// Kills and reaps the child unless it was reaped already.
struct Child {
  pid_t pid = -1;
  int wait_status = 0;
  bool reaped = false;
  ~Child() { Kill(); }
  void Kill() {
    if (pid <= 0 || reaped) return;
    kill(pid, SIGKILL);
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    reaped = true;
  }
  // Waits up to `grace` for the child to exit by itself, then kills it.
  void Reap(std::chrono::milliseconds grace) {
    const auto until = Clock::now() + grace;
    while (!reaped) {
      const pid_t done = waitpid(pid, &wait_status, WNOHANG);
      if (done == pid) {
        reaped = true;
      } else if (Clock::now() > until) {
        Kill();
      } else {
        usleep(1000);
      }
    }
  }
};

std::string Seconds(double s) {
  std::string text = std::to_string(s);
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

std::string ExecutableDirectory() {
  std::vector<char> path(4096);
  const ssize_t n = readlink("/proc/self/exe", path.data(), path.size() - 1);
  if (n <= 0) return "./";
  std::string exe(path.data(), static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/') + 1);
}

SceneCompiler::SceneCompiler(const SceneCompilerLimits& limits) : limits_(limits) {
  if (limits_.program.empty()) limits_.program = ExecutableDirectory() + "alsim-scene-compiler";
  if (limits_.concurrent < 1) limits_.concurrent = 1;
}

grpc::Status SceneCompiler::Compile(const SceneCompileRequest& request,
                                    const std::function<grpc::Status()>& should_stop,
                                    SceneCompileReply* reply) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (running_ >= limits_.concurrent) {
      slot_freed_.wait_for(lock, std::chrono::milliseconds(kPollMilliseconds));
      if (running_ < limits_.concurrent) break;
      lock.unlock();
      grpc::Status stop = should_stop();
      lock.lock();
      if (!stop.ok()) return stop;
    }
    ++running_;
  }
  grpc::Status status;
  try {
    status = RunProcess(request, should_stop, reply);
  } catch (const std::bad_alloc&) {
    status = {grpc::StatusCode::RESOURCE_EXHAUSTED, "the server ran out of memory compiling"};
  }
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    --running_;
  }
  slot_freed_.notify_one();
  return status;
}

grpc::Status SceneCompiler::RunProcess(const SceneCompileRequest& request,
                                       const std::function<grpc::Status()>& should_stop,
                                       SceneCompileReply* reply) {
  const std::string message = Frame(EncodeRequest(request));
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return {grpc::StatusCode::INTERNAL,
            std::string("cannot start the scene compiler: socketpair: ") + std::strerror(errno)};
  }
  Descriptor ours{sockets[0]}, theirs{sockets[1]};

  // RLIMIT_CPU is a backstop behind the wall-time limit below. Memory is limited by watching the
  // compiler's resident memory, not by RLIMIT_AS: MuJoCo reserves address space far beyond what
  // it touches (gigabytes for a few thousand bodies).
  const std::string cpu = std::to_string(static_cast<long long>(limits_.seconds) + 2);
  const std::string max_request = std::to_string(message.size());
  std::vector<const char*> argv = {limits_.program.c_str(), "--serve",
                                   "--cpu-seconds",         cpu.c_str(),
                                   "--max-request-bytes",   max_request.c_str()};
  if (!request.path.empty()) argv.push_back("--allow-files");
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, theirs.fd, 3);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The server blocks SIGTERM/SIGINT in every thread (main.cc); the compiler gets a clean slate.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  Child child;
  const int spawned = posix_spawn(&child.pid, limits_.program.c_str(), &actions, &attributes,
                                  const_cast<char* const*>(argv.data()), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) {
    child.pid = -1;
    return {grpc::StatusCode::INTERNAL,
            "cannot start the scene compiler '" + limits_.program + "': " + std::strerror(spawned)};
  }
  close(theirs.fd);
  theirs.fd = -1;
  fcntl(ours.fd, F_SETFL, fcntl(ours.fd, F_GETFL) | O_NONBLOCK);

  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(limits_.seconds));
  // A reply holds the binary model, which the compile's memory limit bounds.
  const std::uint64_t max_reply = limits_.memory_bytes + (1u << 20);
  std::size_t sent = 0;
  std::string received;
  bool eof = false;
  while (!eof) {
    pollfd fd{ours.fd, static_cast<short>(POLLIN | (sent < message.size() ? POLLOUT : 0)), 0};
    const int ready = poll(&fd, 1, kPollMilliseconds);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0 && (fd.revents & POLLOUT) && sent < message.size()) {
      const ssize_t put = send(ours.fd, message.data() + sent, message.size() - sent, MSG_NOSIGNAL);
      if (put > 0) sent += static_cast<std::size_t>(put);
      if (put < 0 && errno != EAGAIN && errno != EINTR) sent = message.size();  // child is gone
    }
    if (ready > 0 && (fd.revents & (POLLIN | POLLHUP | POLLERR))) {
      char buffer[1 << 16];
      const ssize_t got = recv(ours.fd, buffer, sizeof buffer, 0);
      if (got > 0) {
        received.append(buffer, static_cast<std::size_t>(got));
        if (received.size() > max_reply) break;
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        eof = true;
      }
    }
    if (received.size() >= kFrameHeaderBytes &&
        received.size() - kFrameHeaderBytes >= FrameLength(received.data())) {
      break;  // the whole reply is in
    }
    if (ResidentBytes(child.pid) > limits_.memory_bytes) {
      child.Kill();
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "compiling the scene needs more memory than the server allows a compile (" +
                  std::to_string(limits_.memory_bytes >> 20) + " MiB, --max-compile-memory)"};
    }
    if (Clock::now() > give_up) {
      child.Kill();
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "compiling the scene took longer than the server allows (" +
                  Seconds(limits_.seconds) + " s, --max-compile-seconds)"};
    }
    if (grpc::Status stop = should_stop(); !stop.ok()) {
      child.Kill();
      return stop;
    }
  }
  child.Reap(std::chrono::milliseconds(1000));
  const bool complete = received.size() >= kFrameHeaderBytes &&
                        received.size() - kFrameHeaderBytes == FrameLength(received.data());
  if (!complete) {
    if (WIFSIGNALED(child.wait_status)) {
      const int signal = WTERMSIG(child.wait_status);
      if (signal == SIGXCPU) {
        return {grpc::StatusCode::RESOURCE_EXHAUSTED,
                "compiling the scene took longer than the server allows (--max-compile-seconds)"};
      }
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "the scene compiler stopped on this scene (signal " + std::to_string(signal) + ", " +
                  strsignal(signal) + ")"};
    }
    return {grpc::StatusCode::INTERNAL, "the scene compiler ended without an answer (exit status " +
                                            std::to_string(WEXITSTATUS(child.wait_status)) + ")"};
  }
  std::string error;
  if (!DecodeReply(received.substr(kFrameHeaderBytes), reply, &error)) {
    return {grpc::StatusCode::INTERNAL, "the scene compiler's answer is malformed: " + error};
  }
  if (!reply->scene.error.empty()) {
    if (reply->out_of_memory) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              reply->scene.error + " (the server allows a compile " +
                  std::to_string(limits_.memory_bytes >> 20) + " MiB, --max-compile-memory)"};
    }
    return {grpc::StatusCode::INVALID_ARGUMENT, reply->scene.error};
  }
  return grpc::Status::OK;
}

}  // namespace alsim::server
