// A fingerprint of an instance's state, for determinism checks: two runs that should agree bit
// for bit (different thread counts, machines, server vs. headless runner) compare one number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/data/data.h"
#include "engine/model/model.h"

namespace alsim {

// 64-bit FNV-1a over the bytes of d.qpos (m.nq doubles), then d.qvel (m.nv doubles), then
// d.time, then, only in a model with deformables (m.nvert > 0), d.vert_xpos and d.vert_xvel
// (3 m.nvert doubles each, x y z per vertex), in memory order; a scene without deformables hashes
// exactly as before they existed. It hashes the exact IEEE-754 representation, so any change of
// one bit changes it (0.0 and -0.0 differ, as do NaN payloads), and it is the same on every
// machine with little-endian doubles. Not a cryptographic hash: it detects divergence, not
// tampering.
std::uint64_t StateHash(const Model& m, const Data& d);

// 64-bit FNV-1a: folds `size` bytes into `hash` (start from kFnvOffsetBasis). Shared by StateHash
// and the state snapshot's checksum and model fingerprint (engine/sim/state_snapshot.h).
constexpr std::uint64_t kFnvOffsetBasis = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
std::uint64_t HashBytes(std::uint64_t hash, const void* data, std::size_t size);

// The hash as 16 lowercase hexadecimal digits, zero-padded: the form the CLI and server print.
std::string FormatStateHash(std::uint64_t hash);

}  // namespace alsim
