// A fingerprint of an instance's state, for determinism checks: two runs that should agree bit
// for bit (different thread counts, machines, server vs. headless runner) compare one number.
#pragma once

#include <cstdint>
#include <string>

#include "engine/model/model.h"
#include "engine/sim/data.h"

namespace alsim {

// 64-bit FNV-1a over the bytes of d.qpos (m.nq doubles), then d.qvel (m.nv doubles), then
// d.time, in memory order. It hashes the exact IEEE-754 representation, so any change of one bit
// changes it (0.0 and -0.0 differ, as do NaN payloads), and it is the same on every machine with
// little-endian doubles. Not a cryptographic hash: it detects divergence, not tampering.
std::uint64_t StateHash(const Model& m, const Data& d);

// The hash as 16 lowercase hexadecimal digits, zero-padded: the form the CLI and server print.
std::string FormatStateHash(std::uint64_t hash);

}  // namespace alsim
