#include "engine/sim/state_hash.h"

#include <cstddef>
#include <cstdio>

namespace alsim {

// FNV-1a with the 64-bit parameters of Fowler, Noll and Vo.
std::uint64_t HashBytes(std::uint64_t hash, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= kFnvPrime;
  }
  return hash;
}

std::uint64_t StateHash(const Model& m, const Data& d) {
  std::uint64_t hash = kFnvOffsetBasis;
  // The Model's sizes, not the vectors', bound the read: they are what defines the state.
  hash = HashBytes(hash, d.qpos.data(), sizeof(double) * static_cast<std::size_t>(m.nq));
  hash = HashBytes(hash, d.qvel.data(), sizeof(double) * static_cast<std::size_t>(m.nv));
  hash = HashBytes(hash, &d.time, sizeof(d.time));
  // The deformables' vertex state only where there is some: scenes without deformables hash as
  // they did before it existed, so recorded hashes stay valid.
  if (m.nvert > 0) {
    static_assert(sizeof(Vec3) == 3 * sizeof(double), "Vec3 must be three packed doubles");
    const std::size_t bytes = sizeof(Vec3) * static_cast<std::size_t>(m.nvert);
    hash = HashBytes(hash, d.vert_xpos.data(), bytes);
    hash = HashBytes(hash, d.vert_xvel.data(), bytes);
  }
  return hash;
}

std::string FormatStateHash(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace alsim
