// `alsim view`: a live 3D viewer of a server's instances in the browser.
//
// A separate process, a gRPC client of the server like the CLI's other commands (so it reaches
// the server with their --tls-* and --token options), that serves HTTP on loopback by default:
// the page (client/viewer/web, with three.js from npm), a JSON list of the live instances, each
// scene's geometry (GetScene) and a server-sent-events stream of body poses per viewed scene, fed
// from StreamStates. The simulation server itself speaks no HTTP beyond its metrics.
#pragma once

#include <string>
#include <vector>

#include "client/client.h"

namespace alsim::viewer {

// Runs the viewer (its help is in client/cli/remote_usage.cc) until Ctrl-C or SIGTERM; the exit
// status (0, or 1 when it cannot listen or find its page, 2 for bad arguments).
int ViewCommand(client::Client& client, const std::vector<std::string>& args);

}  // namespace alsim::viewer
