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
  return HashBytes(hash, &d.time, sizeof(d.time));
}

std::string FormatStateHash(std::uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace alsim
