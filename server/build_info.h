// Build information of the whole server: the engine's plus the RPC libraries'.
#pragma once

#include "engine/core/build_info.h"

namespace alsim::server {

// EngineBuildInfo() with "grpc" and "protobuf" added to the dependencies.
const BuildInfo& ServerBuildInfo();

}  // namespace alsim::server
