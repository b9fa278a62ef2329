// SPDX-License-Identifier: Apache-2.0
// Stable hashing for cache file names and payload checksums: XXH3 from xxHash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::cache {

/// XXH3-128 of `bytes` as 32 lowercase hex characters (the canonical, big-endian form);
/// identical on every platform and run, because cache file names must survive moves between hosts.
std::string digest_hex(std::string_view bytes);

/// Seeded XXH3-64 of `bytes`, to detect torn or flipped data.
std::uint64_t checksum64(std::string_view bytes);

}  // namespace kjit::cache
