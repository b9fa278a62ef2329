// SPDX-License-Identifier: Apache-2.0
// Stable, dependency-free hashing for cache file names and payload checksums.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::cache {

/// 128-bit hash of `bytes` as 32 lowercase hex characters; identical on every platform and run,
/// because cache file names must survive upgrades and moves between hosts.
std::string digest_hex(std::string_view bytes);

/// 64-bit checksum of `bytes` (seeded apart from digest_hex) to detect torn or flipped data.
std::uint64_t checksum64(std::string_view bytes);

}  // namespace kjit::cache
