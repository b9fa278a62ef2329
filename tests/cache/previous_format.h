// SPDX-License-Identifier: Apache-2.0
// Files as the previous cache format (layout v1, entry and bundle format 1, the project's own
// hash before XXH3) wrote them, so the tests can show that an upgraded runtime treats them as
// stale rather than damaged, and never reads them as entries.
#pragma once

#include <string>

namespace kjit::cache::testing {

/// The key of the previous-format entry below.
inline const std::string kPreviousKey = R"({"kernel":"reduce_scale","spec":"<half,8>","arch":"sm_80"})";
/// The previous digest of kPreviousKey: the entry's file name in the v1 tree.
inline const std::string kPreviousDigest = "cf15355e3c0a814994396d782705fee5";
/// encode_entry("cubin", kPreviousKey, {"registers": 40}, "cubin bytes") in format 1, as hex.
inline const std::string kPreviousEntryHex =
    "4b4a4954454e54520100000005000000637562696e3a0000007b226b65726e656c223a227265647563655f7363"
    "616c65222c2273706563223a223c68616c662c383e222c2261726368223a22736d5f3830227d100000007b2272"
    "6567697374657273223a34307d0b00000000000000637562696e2062797465734de8377fb6649eec";
/// An empty bundle in format 1, as hex.
inline const std::string kPreviousEmptyBundleHex =
    "4b4a4954424e444c0100000000000000000000000000000038000000000000000000000000000000bdf1d882"
    "9b17f21f738ac724f95a8434";

/// Bytes from lowercase hex text.
inline std::string from_hex(const std::string& hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    bytes.push_back(static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1])));
  return bytes;
}

}  // namespace kjit::cache::testing
