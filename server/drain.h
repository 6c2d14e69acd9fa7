// Drain and resume (--state-dir): a server that stops saves every instance, and the next server
// started with the same directory restores them with their ids, groups, tenants, solver options,
// reset generators and bit-exact states (engine/sim/state_snapshot.h), so a rolling update loses
// no simulation: stepping on after the restart gives the bits an uninterrupted run would have.
//
// The file is DIR/instances.pb (alsim.server.v1.DrainedServer), written to a temporary name and
// renamed, so a crash while saving leaves the previous file or none, never half of one.
#pragma once

#include <string>

#include "server/simulator_service.h"

namespace alsim::server {

// Saves every instance of `service` (call it once no call runs any more). Returns an error
// message, empty on success; `saved` is the number of instances written.
std::string SaveInstances(SimulatorService& service, const std::string& state_dir, int* saved);

// Restores what SaveInstances wrote in `state_dir` (nothing when there is no file) and removes
// the file, so that instances are restored once. Scenes are compiled again in the sandbox; an
// instance whose scene or state no longer loads is skipped and named in *skipped.
std::string RestoreInstances(SimulatorService& service, const std::string& state_dir, int* restored,
                             std::string* skipped);

}  // namespace alsim::server
