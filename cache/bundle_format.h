// SPDX-License-Identifier: Apache-2.0
// The bundle container: many cache entries in one file, shipped read-only with a deployment.
//
//   header (56 bytes): "KJITBNDL" u32 version u32 flags u64 count u64 index_offset
//                      u64 index_size u64 index_checksum u64 header_checksum
//   entries:           encoded entries (entry_format) back to back, each with its own checksum
//   index:             count x { u32+kind, u32+digest, u64 offset, u64 size }
//
// The index sits at the end so entries can be streamed out before their offsets are all known;
// the header is patched last. All integers are little-endian.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cache/file_io.h"

namespace kjit::cache {

/// Bumped whenever the container layout or its checksums change; older bundles are then
/// refused. Version 2 checksums with XXH3-64.
inline constexpr std::uint32_t kBundleFormatVersion = 2;
/// Size of the fixed header at offset 0.
inline constexpr std::size_t kBundleHeaderSize = 56;
/// Largest index read: room for about 700,000 entries. Every size a bundle declares is checked
/// against a bound before anything is allocated for it (entries: kMaxEntryBytes).
inline constexpr std::uint64_t kMaxBundleIndexBytes = std::uint64_t{64} << 20;

/// Where one entry sits in a bundle.
struct BundleItem {
  std::string kind;         ///< entry kind
  std::string digest;       ///< digest_hex of the entry's key text
  std::uint64_t offset = 0; ///< first byte of the encoded entry
  std::uint64_t size = 0;   ///< length of the encoded entry
};

/// The decoded fixed header.
struct BundleHeader {
  std::uint64_t count = 0;           ///< number of entries
  std::uint64_t index_offset = 0;    ///< where the index starts
  std::uint64_t index_size = 0;      ///< index length in bytes
  std::uint64_t index_checksum = 0;  ///< checksum64 of the index
};

/// Streams encoded entries into a new bundle file; the file appears only on commit().
class BundleWriter {
 public:
  /// Starts a temp file beside `path`; returns 0 or an errno value.
  int open(const std::string& path);
  /// Appends one encoded entry; returns 0 or an errno value.
  int add(std::string_view kind, const std::string& digest, std::string_view entry_bytes);
  /// Writes index and header, then renames into place; returns 0 or an errno value.
  int commit();
  /// Entries added so far.
  std::size_t count() const { return count_; }

 private:
  AtomicFile file_;
  std::uint64_t offset_ = 0;
  std::string index_;
  std::size_t count_ = 0;
};

/// Parses the header of a file of `file_size` bytes; on failure returns false and sets `problem`.
bool parse_bundle_header(std::string_view bytes, std::uint64_t file_size, BundleHeader& header,
                         std::string& problem);

/// Parses and range-checks the index: its entries must lie end to end, in index order, from the
/// header to the index, as BundleWriter writes them. On failure returns false and sets `problem`.
bool parse_bundle_index(std::string_view bytes, const BundleHeader& header,
                        std::vector<BundleItem>& items, std::string& problem);

}  // namespace kjit::cache
