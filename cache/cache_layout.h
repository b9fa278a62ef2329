// SPDX-License-Identifier: Apache-2.0
// Where things live in a cache folder: <dir>/v2/<kind>/<2 hex>/<digest>.bin, plus the
// <digest>.lock files and in-flight temp files beside them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kjit::cache {

/// Top folder of this layout; it moves together with kEntryFormatVersion and the digest function,
/// so an upgraded runtime starts from an empty tree instead of misreading an old one. v1 named
/// files by a hash of the project's own; v2 by XXH3-128.
inline constexpr std::string_view kLayoutVersion = "v2";
/// Suffix of entry files.
inline constexpr std::string_view kEntrySuffix = ".bin";
/// Suffix of per-key lock files.
inline constexpr std::string_view kLockSuffix = ".lock";

/// What a file found in the tree is for, judged by its name.
enum class FileRole { kEntry, kTemp, kLock, kOther };

/// One file found by CacheLayout::scan().
struct CacheFile {
  std::string path;            ///< full path
  std::string kind;            ///< the kind folder it sits in
  std::string stem;            ///< name without suffix: the digest for entries and locks
  FileRole role = FileRole::kOther;  ///< entry, temp, lock or other
  std::uint64_t size = 0;      ///< bytes
  std::int64_t mtime_ns = 0;   ///< modification time, nanoseconds since the epoch
};

/// Builds paths inside one cache folder and walks its files.
class CacheLayout {
 public:
  /// `dir` is the user-facing cache folder (KJIT_CACHE_DIR).
  explicit CacheLayout(std::string dir) : dir_(std::move(dir)) {}

  /// The cache folder as given.
  const std::string& dir() const { return dir_; }
  /// <dir>/v2
  std::string root() const;
  /// <dir>/v2/<kind>/<first two hex of digest>
  std::string shard_dir(std::string_view kind, const std::string& digest) const;
  /// <shard>/<digest>.bin
  std::string entry_path(std::string_view kind, const std::string& digest) const;
  /// <shard>/<digest>.lock
  std::string lock_path(std::string_view kind, const std::string& digest) const;

  /// Creates root, kind and shard folders (mode 0700) as needed; returns 0 or an errno value.
  int ensure_shard(std::string_view kind, const std::string& digest) const;

  /// Every file under root/<kind>/<shard>/ with its size and mtime, in no particular order.
  /// Files that vanish while walking are skipped: other processes keep working meanwhile.
  std::vector<CacheFile> scan() const;

 private:
  std::string dir_;
};

/// Names in a folder, without "." and ".."; empty when it cannot be read.
std::vector<std::string> list_folder(const std::string& folder);

}  // namespace kjit::cache
