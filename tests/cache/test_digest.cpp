// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <cstdio>
#include <set>
#include <string>

#include "cache/digest.h"

using kjit::cache::checksum64;
using kjit::cache::digest_hex;

// Reference values from xxHash itself (its Python binding and libxxhash agree): a change here
// renames every cache file, so it must come with a new layout version. The lengths cover each
// of XXH3's input-size paths (0, 1-3, 4-8, 9-16, 17-128, 129-240, longer).
TEST_CASE("digest_hex is XXH3-128 in canonical hex") {
  CHECK(digest_hex("") == "99aa06d3014798d86001c324468d497f");
  CHECK(digest_hex(std::string(1, '\0')) == "a6cd5e9392000f6ac44bdff4074eecdb");
  CHECK(digest_hex("abc") == "06b05ab6733a618578af5f94892f3950");
  CHECK(digest_hex("softmax!") == "fa30c6484159505d7e4ada0e91e06139");
  CHECK(digest_hex("log_softmax<f32>") == "b561762571e18412b6def8bab777c926");
  CHECK(digest_hex("{\"arch\":\"sm_90\",\"kernel\":\"softmax_warp<float,4,8,32,1>\"}") ==
        "33fc4edf0fc163b886effd950ec52915");
  CHECK(digest_hex(std::string(200, 'r')) == "07842d97b807cc115e5760881b719a2d");
  CHECK(digest_hex(std::string(241, 'x')) == "586c2f1b13edf30f14da9e5c301a6a1d");
  CHECK(digest_hex(std::string(1000, 'k')) == "d4f479e6ec6dd1f6308ce2f421066779");
}

TEST_CASE("checksum64 is XXH3-64 with the checksum seed") {
  CHECK(checksum64("") == 0xae54afbeccb7295aull);
  CHECK(checksum64("abc") == 0xc5381659c5dd5042ull);
  CHECK(checksum64(std::string(1000, 'k')) == 0x82b27214256646f8ull);
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
  // Inputs that differ only in length (trailing zero bytes) must not collide.
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
