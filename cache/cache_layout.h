// SPDX-License-Identifier: Apache-2.0
// Where things live in a cache folder: <dir>/v2/<kind>/<2 hex>/<digest>.bin, plus the
// <digest>.lock files and in-flight temp files beside them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <sys/stat.h>

#include "cache/cache_folder.h"

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

/// One item found by CacheLayout::scan(): a file, or whatever else sits at a file's name (a
/// directory, a FIFO, a link), which `regular` tells apart.
struct CacheFile {
  std::string path;            ///< full path, for messages
  std::string kind;            ///< the kind folder it sits in
  std::string shard;           ///< the shard folder it sits in
  std::string name;            ///< its name in the shard
  std::string stem;            ///< name without suffix: the digest for entries and locks
  FileRole role = FileRole::kOther;  ///< entry, temp, lock or other
  bool regular = false;        ///< a regular file (anything else at an entry's name is bad)
  std::uint64_t size = 0;      ///< bytes
  std::int64_t mtime_ns = 0;   ///< modification time, nanoseconds since the epoch
  struct stat st {};           ///< lstat as scanned (removals check the inode is unchanged)
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

  /// Opens (with `create`, creating as needed) <root> itself, checked as below.
  CacheFolder open_root(bool create, int& error, std::string& problem) const;
  /// Opens (with `create`, creating as needed) the shard folder <root>/<kind>/<shard>, every
  /// folder on the way checked (cache_folder.h). On failure `error` is an errno value (EPERM:
  /// an unsafe folder, ELOOP: a link) and `problem` the sentence for the log.
  CacheFolder open_shard(std::string_view kind, const std::string& shard, bool create, int& error,
                         std::string& problem) const;
  /// Creates root, kind and shard folders (mode 0700) as needed; returns 0 or an errno value
  /// (with `problem` set).
  int ensure_shard(std::string_view kind, const std::string& digest, std::string& problem) const;

  /// Every item under root/<kind>/<shard>/ with its size and mtime, in no particular order.
  /// Items that vanish while walking are skipped: other processes keep working meanwhile.
  /// Folders that are links, not folders, or unsafe are not walked into; each adds a sentence
  /// to `problems` when given.
  std::vector<CacheFile> scan(std::vector<std::string>* problems = nullptr) const;
  /// Removes a scanned item if it is still the one scanned (a folder with its contents).
  bool remove(const CacheFile& file) const;
  /// Removes shard and kind folders left empty (clear).
  void remove_empty_folders() const;

 private:
  std::string dir_;
};

/// Names in a folder, without "." and ".."; empty when it cannot be read.
std::vector<std::string> list_folder(const std::string& folder);

}  // namespace kjit::cache
