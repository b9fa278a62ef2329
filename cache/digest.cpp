// SPDX-License-Identifier: Apache-2.0
#include "cache/digest.h"

// Compiled into this file alone: no library to link, and no xxhash symbols leave kjit.
#define XXH_INLINE_ALL
#include <xxhash.h>

// XXH3's output is fixed from xxHash 0.8.0 on; an older header would name files differently.
static_assert(XXH_VERSION_NUMBER >= 800, "xxhash.h from xxHash 0.8.0 or newer is required");

namespace kjit::cache {
namespace {

// Any change here, or to the hash functions, renames every cache file or refuses every entry,
// so kLayoutVersion and the entry and bundle format versions must move with it.
constexpr XXH64_hash_t kChecksumSeed = 0x6B6A69742D636B73ull;

void append_hex(std::string& out, const unsigned char* bytes, std::size_t count) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xF]);
  }
}

}  // namespace

std::string digest_hex(std::string_view bytes) {
  // The canonical form (big-endian, high half first) is what xxhsum -H2 prints.
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(bytes.data(), bytes.size()));
  std::string hex;
  hex.reserve(2 * sizeof canonical.digest);
  append_hex(hex, canonical.digest, sizeof canonical.digest);
  return hex;
}

std::uint64_t checksum64(std::string_view bytes) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), kChecksumSeed);
}

}  // namespace kjit::cache
