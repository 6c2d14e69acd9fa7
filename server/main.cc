// alsim-server: serves simulations over gRPC until SIGTERM or SIGINT.
#include <csignal>
#include <cstdio>
#include <iostream>

#include "engine/core/build_info.h"
#include "server/server.h"

int main(int argc, char** argv) {
  // Block the stop signals before any thread exists, so that every gRPC and civetweb thread
  // inherits the mask and only the sigwait below receives them. A shell starts background jobs
  // with SIGINT ignored; restore the default so Ctrl-C still reaches us.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  // A scene compiler that dies mid-reply must not take the server with it (sockets are written
  // with MSG_NOSIGNAL too).
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const auto parsed =
      alsim::server::ParseServerConfig(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.config) {
    (parsed.exit_code == 0 ? std::cout : std::cerr) << parsed.message;
    return parsed.exit_code;
  }
  const auto& config = *parsed.config;

  std::string error;
  auto server = alsim::server::Server::Start(config, &error);
  if (server == nullptr) {
    std::cerr << "alsim-server: " << error << "\n";
    return 1;
  }
  // Tests and scripts wait for this line (and parse the addresses from it).
  std::cout << "alsim-server " << alsim::EngineBuildInfo().version << " serving gRPC on "
            << server->grpc_address() << ", metrics on "
            << (server->metrics_url().empty() ? "(disabled)" : server->metrics_url()) << std::endl;

  int received = 0;
  sigwait(&stop_signals, &received);
  std::cout << "alsim-server: " << (received == SIGINT ? "SIGINT" : "SIGTERM")
            << ", shutting down (grace " << config.shutdown_grace_seconds << " s)" << std::endl;
  server->Shutdown(
      std::chrono::milliseconds(static_cast<long long>(config.shutdown_grace_seconds * 1000.0)));
  std::cout << "alsim-server: stopped" << std::endl;
  return 0;
}
