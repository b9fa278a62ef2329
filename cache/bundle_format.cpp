// SPDX-License-Identifier: Apache-2.0
#include "cache/bundle_format.h"

#include "cache/byte_io.h"
#include "cache/digest.h"
#include "cache/entry_format.h"

namespace kjit::cache {
namespace {

constexpr std::string_view kMagic = "KJITBNDL";
// The header checksum covers everything before it: the first 48 bytes.
constexpr std::size_t kHeaderBodySize = kBundleHeaderSize - 8;
// An index item with empty kind and digest: two u32 lengths, offset and size.
constexpr std::uint64_t kMinIndexItemBytes = 4 + 4 + 8 + 8;

std::string encode_header(const BundleHeader& header) {
  std::string out;
  ByteWriter writer(out);
  writer.put_raw(kMagic);
  writer.put_u32(kBundleFormatVersion);
  writer.put_u32(0);  // flags: none defined yet
  writer.put_u64(header.count);
  writer.put_u64(header.index_offset);
  writer.put_u64(header.index_size);
  writer.put_u64(header.index_checksum);
  writer.put_u64(checksum64(out));
  return out;
}

}  // namespace

int BundleWriter::open(const std::string& path) {
  index_.clear();
  count_ = 0;
  if (int error = file_.open(path); error != 0) return error;
  // Reserve the header; commit() overwrites it once the index is known.
  offset_ = kBundleHeaderSize;
  return file_.write(std::string(kBundleHeaderSize, '\0'));
}

int BundleWriter::add(std::string_view kind, const std::string& digest,
                      std::string_view entry_bytes) {
  if (int error = file_.write(entry_bytes); error != 0) return error;
  ByteWriter writer(index_);
  writer.put_blob32(kind);
  writer.put_blob32(digest);
  writer.put_u64(offset_);
  writer.put_u64(entry_bytes.size());
  offset_ += entry_bytes.size();
  ++count_;
  return 0;
}

int BundleWriter::commit() {
  BundleHeader header;
  header.count = count_;
  header.index_offset = offset_;
  header.index_size = index_.size();
  header.index_checksum = checksum64(index_);
  if (int error = file_.write(index_); error != 0) return error;
  if (int error = file_.write_at(0, encode_header(header)); error != 0) return error;
  return file_.commit();
}

bool parse_bundle_header(std::string_view bytes, std::uint64_t file_size, BundleHeader& header,
                         std::string& problem) {
  if (bytes.size() < kBundleHeaderSize || file_size < kBundleHeaderSize) {
    problem = "file shorter than a bundle header";
    return false;
  }
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    problem = "not a kjit cache bundle";
    return false;
  }
  ByteReader reader(bytes.substr(kMagic.size(), kBundleHeaderSize - kMagic.size()));
  const std::uint32_t version = reader.get_u32();
  reader.get_u32();  // flags
  header.count = reader.get_u64();
  header.index_offset = reader.get_u64();
  header.index_size = reader.get_u64();
  header.index_checksum = reader.get_u64();
  const std::uint64_t stored = reader.get_u64();
  // The version first: another version's checksum may be computed differently, and its
  // bundle is then stale, not damaged.
  if (version != kBundleFormatVersion) {
    problem = "bundle format version " + std::to_string(version) + ", expected " +
              std::to_string(kBundleFormatVersion);
    return false;
  }
  if (checksum64(bytes.substr(0, kHeaderBodySize)) != stored) {
    problem = "header checksum mismatch";
    return false;
  }
  // Written in this order, so a file of any other size was cut short or appended to.
  if (header.index_offset < kBundleHeaderSize || header.index_offset > file_size ||
      header.index_size != file_size - header.index_offset) {
    problem = "index lies outside the file (truncated bundle?)";
    return false;
  }
  if (header.index_size > kMaxBundleIndexBytes) {
    problem = "index of " + std::to_string(header.index_size) + " bytes, more than a bundle may have (" +
              std::to_string(kMaxBundleIndexBytes) + ")";
    return false;
  }
  if (header.count > header.index_size / kMinIndexItemBytes) {
    problem = "entry count " + std::to_string(header.count) + " does not fit its index";
    return false;
  }
  return true;
}

bool parse_bundle_index(std::string_view bytes, const BundleHeader& header,
                        std::vector<BundleItem>& items, std::string& problem) {
  if (checksum64(bytes) != header.index_checksum) {
    problem = "index checksum mismatch";
    return false;
  }
  ByteReader reader(bytes);
  items.clear();
  // The writer lays entries end to end in index order; demanding the same layout bounds the
  // bytes read at open by the file's size (an index naming one large entry a million times
  // would otherwise read it a million times).
  std::uint64_t next_offset = kBundleHeaderSize;
  for (std::uint64_t i = 0; i < header.count && reader.ok(); ++i) {
    BundleItem item;
    item.kind = std::string(reader.get_blob32());
    item.digest = std::string(reader.get_blob32());
    item.offset = reader.get_u64();
    item.size = reader.get_u64();
    const bool inside = item.offset >= kBundleHeaderSize && item.offset <= header.index_offset &&
                        item.size <= header.index_offset - item.offset;
    if (reader.ok() && !inside) {
      problem = "entry " + std::to_string(i) + " lies outside the entry area";
      return false;
    }
    if (reader.ok() && item.size > kMaxEntryBytes) {
      problem = "entry " + std::to_string(i) + " is larger than an entry may be";
      return false;
    }
    if (reader.ok() && item.offset != next_offset) {
      problem = "entry " + std::to_string(i) + " does not start where the one before it ends "
                "(overlapping or out-of-order entries)";
      return false;
    }
    next_offset = item.offset + item.size;
    items.push_back(std::move(item));
  }
  if (!reader.ok() || reader.remaining() != 0) {
    problem = "index does not match its entry count";
    return false;
  }
  if (next_offset != header.index_offset) {
    problem = "entries end at byte " + std::to_string(next_offset) + ", not where the index starts (" +
              std::to_string(header.index_offset) + ")";
    return false;
  }
  return true;
}

}  // namespace kjit::cache
