// The server's Prometheus registry and the metrics every server exports.
//
// Conventions (DESIGN.md): base units, `_total` counters, no per-instance labels.
#pragma once

#include <memory>

#include <prometheus/registry.h>

namespace alsim::server {

class ServerMetrics {
 public:
  // Registers `alsim_build_info` (a gauge fixed at 1 whose labels carry the version, git
  // revision, build type and the gRPC and MuJoCo versions: the Prometheus `_info` idiom).
  ServerMetrics();

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
};

}  // namespace alsim::server
