// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdio>
#include <set>
#include <string>

#include "cache/digest.h"

using kjit::cache::checksum64;
using kjit::cache::digest_hex;

TEST_CASE("digest_hex matches fixed vectors") {
  // Computed once; a change here renames every cache file, so it must come with a new layout.
  CHECK(digest_hex("") == "d8fa786b1fba03b12f4da4f7efb0349f");
  CHECK(digest_hex(std::string(1, '\0')) == "96e48b2d79196231845b8dd68f76b5fe");
  CHECK(digest_hex("abc") == "143b08b042e5252b9386dd9d1df9ef57");
  CHECK(digest_hex("{\"arch\":\"sm_90\",\"kernel\":\"softmax_warp<float,4,8,32,1>\"}") ==
        "d5c0ec1ef6938524e6e9f1dd3e878c62");
  CHECK(digest_hex(std::string(1000, 'k')) == "023abb30bd8a945f8a249ce66651c9cf");
}

TEST_CASE("checksum64 matches fixed vectors") {
  CHECK(checksum64("") == 0x1ff2179b82d8f1bdull);
  CHECK(checksum64("abc") == 0x436d679f89cf3b69ull);
}

TEST_CASE("digest_hex is 32 lowercase hex characters") {
  for (const char* text : {"", "a", "cubin", "a much longer key text than sixteen bytes"}) {
    const std::string hex = digest_hex(text);
    CHECK(hex.size() == 32);
    CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
  }
}

TEST_CASE("digest_hex separates near-identical inputs") {
  std::set<std::string> seen;
  std::string text;
  // Every length from 0 to 40 crosses the 8-byte word boundary and the tail path.
  for (int length = 0; length <= 40; ++length) {
    CHECK(seen.insert(digest_hex(text)).second);
    text.push_back('\0');
  }
  const std::string base = "softmax_warp<float,4,8,32,1>|sm_90|-O3";
  for (std::size_t i = 0; i < base.size(); ++i) {
    std::string flipped = base;
    flipped[i] ^= 1;
    CHECK(digest_hex(flipped) != digest_hex(base));
    CHECK(checksum64(flipped) != checksum64(base));
  }
}

TEST_CASE("checksum64 is independent of digest_hex") {
  const std::string text = "payload";
  const std::string hex = digest_hex(text);
  char first_lane[17];
  std::snprintf(first_lane, sizeof first_lane, "%016llx",
                static_cast<unsigned long long>(checksum64(text)));
  CHECK(hex.substr(0, 16) != first_lane);
  CHECK(hex.substr(16) != first_lane);
}
