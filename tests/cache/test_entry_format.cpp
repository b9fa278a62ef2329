// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <string>

#include "cache/entry_format.h"
#include "tests/cache/previous_format.h"

using namespace kjit::cache;

namespace {

const std::string kKey = R"({"kernel":"softmax_warp","spec":"<float,4,8,32,1>","arch":"sm_90"})";

std::string binary_payload() {
  std::string payload;
  for (int i = 0; i < 3000; ++i) payload.push_back(static_cast<char>(i * 7));
  return payload;  // includes NULs and high bytes
}

std::string sample() {
  return encode_entry("cubin", kKey, {{"registers", 32}, {"compile_ms", 12.5}}, binary_payload());
}

// The version field sits right after the 8-byte magic.
constexpr std::size_t kVersionOffset = 8;

}  // namespace

TEST_CASE("entry round trip keeps every field") {
  DecodeResult decoded = decode_entry(sample(), std::string_view(kKey));
  REQUIRE(decoded);
  CHECK(decoded.problem == EntryProblem::kNone);
  CHECK(decoded.reason.empty());
  CHECK(decoded.entry->kind == "cubin");
  CHECK(decoded.entry->key_text == kKey);
  CHECK(decoded.entry->metadata["registers"] == 32);
  CHECK(decoded.entry->metadata["compile_ms"] == 12.5);
  CHECK(decoded.entry->payload == binary_payload());
}

TEST_CASE("Entry overload and empty fields") {
  Entry entry{"tune", "k", nullptr, ""};
  DecodeResult decoded = decode_entry(encode_entry(entry));
  REQUIRE(decoded);
  CHECK(decoded.entry->metadata == nlohmann::json::object());  // null metadata is stored as {}
  CHECK(decoded.entry->payload.empty());
}

TEST_CASE("every truncation is refused as truncated") {
  const std::string bytes = sample();
  for (std::size_t length = 0; length < bytes.size(); length += (length < 200 ? 1 : 97)) {
    DecodeResult decoded = decode_entry(std::string_view(bytes).substr(0, length));
    CHECK_FALSE(decoded);
    CHECK(decoded.problem == EntryProblem::kTruncated);
  }
}

TEST_CASE("wrong magic is refused") {
  std::string bytes = sample();
  bytes[0] = 'X';
  CHECK(decode_entry(bytes).problem == EntryProblem::kBadMagic);
  CHECK(decode_entry("definitely not an entry").problem == EntryProblem::kBadMagic);
}

TEST_CASE("another format version reads as stale") {
  std::string bytes = sample();
  bytes[kVersionOffset] = static_cast<char>(kEntryFormatVersion + 1);
  DecodeResult decoded = decode_entry(bytes);
  CHECK(decoded.problem == EntryProblem::kStaleVersion);
  CHECK(decoded.reason.find("version") != std::string::npos);
}

TEST_CASE("an entry of the previous format reads as stale, not corrupt") {
  // Its checksum is the previous hash's, so only the version check tells it apart from damage.
  using testing::from_hex;
  DecodeResult decoded = decode_entry(from_hex(testing::kPreviousEntryHex),
                                      std::string_view(testing::kPreviousKey));
  CHECK(decoded.problem == EntryProblem::kStaleVersion);
  CHECK(decoded.reason ==
        "entry format version 1, expected " + std::to_string(kEntryFormatVersion));
}

TEST_CASE("a flipped byte anywhere after the header is corrupt") {
  const std::string good = sample();
  // Past magic and version; flips inside length fields may read as truncated instead.
  for (std::size_t i = kVersionOffset + 4; i < good.size(); i += 13) {
    std::string bytes = good;
    bytes[i] ^= 0x20;
    DecodeResult decoded = decode_entry(bytes);
    CHECK_FALSE(decoded);
    const bool expected = decoded.problem == EntryProblem::kCorrupt ||
                          decoded.problem == EntryProblem::kTruncated;
    CHECK(expected);
  }
  std::string payload_flip = good;
  payload_flip[good.size() - 100] ^= 1;
  CHECK(decode_entry(payload_flip).problem == EntryProblem::kCorrupt);
  CHECK(decode_entry(payload_flip).reason == "checksum mismatch");
}

TEST_CASE("trailing bytes are corrupt") {
  CHECK(decode_entry(sample() + "x").problem == EntryProblem::kCorrupt);
}

TEST_CASE("a valid entry for another key is foreign") {
  DecodeResult decoded = decode_entry(sample(), std::string_view("some other key"));
  CHECK_FALSE(decoded);
  CHECK(decoded.problem == EntryProblem::kForeignKey);
  CHECK(decode_entry(sample()));  // without an expectation it is fine
}

TEST_CASE("kind names are restricted to safe folder names") {
  CHECK(is_valid_kind("cubin"));
  CHECK(is_valid_kind("tune"));
  CHECK(is_valid_kind("a_1"));
  CHECK_FALSE(is_valid_kind(""));
  CHECK_FALSE(is_valid_kind("../x"));
  CHECK_FALSE(is_valid_kind("Cubin"));
  CHECK_FALSE(is_valid_kind(std::string(33, 'a')));
  // A valid checksum over an unsafe kind still must not decode.
  CHECK(decode_entry(encode_entry("../etc", "k", {}, "p")).problem == EntryProblem::kCorrupt);
}

TEST_CASE("problem names are stable") {
  CHECK(std::string(to_string(EntryProblem::kTruncated)) == "truncated");
  CHECK(std::string(to_string(EntryProblem::kForeignKey)) == "foreign_key");
}
