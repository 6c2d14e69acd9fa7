// State snapshots end with a 64-bit FNV-1a checksum of every byte before it
// (engine/sim/state_snapshot.h), which random mutations almost never keep right. The snapshot
// fuzz targets fill it in when the input leaves it zero; any other value goes as it is.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "engine/sim/state_hash.h"

namespace alsim::fuzz {

inline void FillZeroChecksum(std::string* snapshot) {
  constexpr std::size_t kBytes = sizeof(std::uint64_t);
  if (snapshot->size() < kBytes) return;
  char* const checksum = snapshot->data() + snapshot->size() - kBytes;
  static const char kZero[kBytes] = {};
  if (std::memcmp(checksum, kZero, kBytes) != 0) return;
  const std::uint64_t value =
      HashBytes(kFnvOffsetBasis, snapshot->data(), snapshot->size() - kBytes);
  std::memcpy(checksum, &value, kBytes);
}

}  // namespace alsim::fuzz
