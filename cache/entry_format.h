// SPDX-License-Identifier: Apache-2.0
// The self-describing, checksummed bytes of one cache entry (one file on disk, one blob in a bundle).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cache/entry_metadata.h"

namespace kjit::cache {

/// Bumped whenever the byte layout or the checksum changes; older entries then read as stale
/// and are replaced. Version 2 checksums with XXH3-64.
inline constexpr std::uint32_t kEntryFormatVersion = 2;

/// Largest encoded entry read or written: cubins and tuning logs are far smaller, and nothing
/// larger is ever read into memory from a file or a bundle.
inline constexpr std::uint64_t kMaxEntryBytes = std::uint64_t{64} << 20;

/// One cached item: a compiled cubin or a tuning record, with the key it was made for.
struct Entry {
  std::string kind;          ///< "cubin" or "tune"; also the folder the entry lives in
  std::string key_text;      ///< canonical key text built by the runtime; its digest names the file
  nlohmann::json metadata;   ///< free-form facts (config, registers, compile ms), an object
  std::string payload;       ///< the cached bytes themselves (binary-safe)
  EntryMetadata facts;       ///< the known fields of `metadata`, typed (set by decode_entry)
};

/// Why a blob was refused by decode_entry.
enum class EntryProblem {
  kNone,          ///< decoded fine
  kTruncated,     ///< shorter than its own lengths say: a torn or partial write
  kBadMagic,      ///< not an entry at all
  kStaleVersion,  ///< written by another format version
  kCorrupt,       ///< checksum mismatch, trailing bytes, oversized, or unreadable metadata
  kForeignKey,    ///< a valid entry for a different key (a digest collision or a moved file)
};

/// Short stable name of a problem, e.g. "truncated".
const char* to_string(EntryProblem problem) noexcept;

/// The outcome of decode_entry: an entry, or a problem with a human-readable reason.
struct DecodeResult {
  std::optional<Entry> entry;                   ///< set only when problem is kNone
  EntryProblem problem = EntryProblem::kNone;   ///< what went wrong, if anything
  std::string reason;                           ///< e.g. "checksum mismatch"; empty on success

  explicit operator bool() const { return entry.has_value(); }
};

/// True when `kind` is a safe folder name: 1-32 characters of [a-z0-9_].
bool is_valid_kind(std::string_view kind) noexcept;

/// Serializes one entry. Throws nlohmann::json::exception when metadata holds invalid UTF-8.
std::string encode_entry(std::string_view kind, std::string_view key_text,
                         const nlohmann::json& metadata, std::string_view payload);
/// Serializes an Entry value; same as the four-argument form.
std::string encode_entry(const Entry& entry);

/// Parses and validates a blob. With `expected_key_text`, a valid entry for any other key is
/// refused as kForeignKey; without it (verify, list) any valid entry is accepted.
DecodeResult decode_entry(std::string_view bytes,
                          std::optional<std::string_view> expected_key_text = std::nullopt);

}  // namespace kjit::cache
