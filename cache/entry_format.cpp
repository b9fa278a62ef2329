// SPDX-License-Identifier: Apache-2.0
// Layout (all integers little-endian):
//   "KJITENTR"  u32 version  | u32+kind | u32+key text | u32+metadata JSON | u64+payload | u64 checksum
// The checksum covers every byte before it, so a flipped bit anywhere is caught, and the
// lengths let a short file be told apart from a damaged one.
#include "cache/entry_format.h"

#include "cache/byte_io.h"
#include "cache/digest.h"
#include "runtime/bounded_json.h"

namespace kjit::cache {
namespace {

constexpr std::string_view kMagic = "KJITENTR";
constexpr std::size_t kChecksumBytes = 8;

DecodeResult fail(EntryProblem problem, std::string reason) {
  DecodeResult result;
  result.problem = problem;
  result.reason = std::move(reason);
  return result;
}

}  // namespace

const char* to_string(EntryProblem problem) noexcept {
  switch (problem) {
    case EntryProblem::kNone: return "none";
    case EntryProblem::kTruncated: return "truncated";
    case EntryProblem::kBadMagic: return "bad_magic";
    case EntryProblem::kStaleVersion: return "stale_version";
    case EntryProblem::kCorrupt: return "corrupt";
    case EntryProblem::kForeignKey: return "foreign_key";
  }
  return "unknown";
}

bool is_valid_kind(std::string_view kind) noexcept {
  if (kind.empty() || kind.size() > 32) return false;
  for (char c : kind) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return false;
  }
  return true;
}

std::string encode_entry(std::string_view kind, std::string_view key_text,
                         const nlohmann::json& metadata, std::string_view payload) {
  const std::string meta_text = metadata.is_null() ? std::string("{}") : metadata.dump();
  std::string out;
  out.reserve(kMagic.size() + 4 + 4 + kind.size() + 4 + key_text.size() + 4 + meta_text.size() +
              8 + payload.size() + kChecksumBytes);
  ByteWriter writer(out);
  writer.put_raw(kMagic);
  writer.put_u32(kEntryFormatVersion);
  writer.put_blob32(kind);
  writer.put_blob32(key_text);
  writer.put_blob32(meta_text);
  writer.put_u64(payload.size());
  writer.put_raw(payload);
  writer.put_u64(checksum64(out));
  return out;
}

std::string encode_entry(const Entry& entry) {
  return encode_entry(entry.kind, entry.key_text, entry.metadata, entry.payload);
}

DecodeResult decode_entry(std::string_view bytes,
                          std::optional<std::string_view> expected_key_text) {
  // Checked in this order so each failure gets the most specific name: a file cut inside its
  // header is "truncated", never "bad magic".
  if (bytes.size() < kMagic.size())
    return fail(EntryProblem::kTruncated, "file shorter than its magic");
  if (bytes.substr(0, kMagic.size()) != kMagic)
    return fail(EntryProblem::kBadMagic, "not a kjit cache entry");
  if (bytes.size() > kMaxEntryBytes)
    return fail(EntryProblem::kCorrupt, "larger than an entry may be (" +
                                            std::to_string(kMaxEntryBytes) + " bytes)");
  ByteReader reader(bytes.substr(kMagic.size()));
  const std::uint32_t version = reader.get_u32();
  if (reader.ok() && version != kEntryFormatVersion)
    return fail(EntryProblem::kStaleVersion,
                "entry format version " + std::to_string(version) + ", expected " +
                    std::to_string(kEntryFormatVersion));
  std::string_view kind = reader.get_blob32();
  std::string_view key_text = reader.get_blob32();
  std::string_view meta_text = reader.get_blob32();
  std::string_view payload = reader.get_raw(reader.get_u64());
  const std::size_t body_size = kMagic.size() + reader.position();
  const std::uint64_t stored_checksum = reader.get_u64();
  if (!reader.ok()) return fail(EntryProblem::kTruncated, "entry ends before its declared lengths");
  if (reader.remaining() != 0)
    return fail(EntryProblem::kCorrupt, "trailing bytes after the checksum");
  if (checksum64(bytes.substr(0, body_size)) != stored_checksum)
    return fail(EntryProblem::kCorrupt, "checksum mismatch");
  if (expected_key_text && *expected_key_text != key_text)
    return fail(EntryProblem::kForeignKey, "entry holds a different key (digest collision or moved file)");
  if (!is_valid_kind(kind)) return fail(EntryProblem::kCorrupt, "kind is not a folder name");
  // Checksummed is not trusted: anyone who can write a file can compute the checksum, so the
  // metadata is bounded and typed here, once, and an entry that fails is simply bad.
  std::string problem;
  std::optional<nlohmann::json> metadata = parse_json_bounded(meta_text, problem);
  EntryMetadata facts;
  if (metadata) problem = read_metadata(*metadata, facts);
  if (!problem.empty()) return fail(EntryProblem::kCorrupt, "metadata: " + problem);
  DecodeResult result;
  result.entry = Entry{std::string(kind), std::string(key_text), std::move(*metadata),
                       std::string(payload), std::move(facts)};
  return result;
}

}  // namespace kjit::cache
