// Random actions without generator state: each control is a pure function of (seed, instance,
// step, actuator), so any split of the instances over threads, processes or servers, and any
// replay, draws the same numbers. `alsim run --actions random` (client/cli/run_command.cc),
// bench/cluster_bench.cc and solver_bench's `random` mode all draw from here.
//
// Header-only and free of the engine and of gRPC, so that the CLI and the benchmarks can both
// include it.
#pragma once

#include <cstdint>

namespace alsim::cli {

// splitmix64's finalizer: a well-mixed 64-bit hash, so that actions need no generator state.
inline std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Action of `actuator` of `instance` at `step`, uniform in [lower, upper]: lower + (upper -
// lower) u with u one of the 2^53 doubles k 2^-53 in [0, 1) (rounding may reach upper). For
// [-1, 1] this is 2u - 1 exactly (the products are exact and addition commutes), the draw
// cluster_bench has always made.
inline double Action(std::uint64_t seed, std::uint64_t instance, std::uint64_t step, int actuator,
                     double lower = -1.0, double upper = 1.0) {
  const std::uint64_t bits =
      Mix(seed ^ Mix(instance ^ Mix(step ^ Mix(static_cast<std::uint64_t>(actuator)))));
  const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;
  return lower + (upper - lower) * unit;
}

// The range an actuator's random control is drawn from: its ctrlrange when it is limited,
// [-1, 1] otherwise.
struct ActionRange {
  double lower = -1.0;
  double upper = 1.0;
};

inline ActionRange ActuatorActionRange(bool ctrl_limited, double ctrl_lower, double ctrl_upper) {
  return ctrl_limited ? ActionRange{ctrl_lower, ctrl_upper} : ActionRange{};
}

}  // namespace alsim::cli
