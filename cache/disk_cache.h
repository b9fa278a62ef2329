// SPDX-License-Identifier: Apache-2.0
// The writable on-disk cache layer: one checksummed file per entry, atomic writes, per-key
// cross-process locks, an LRU size cap, and a private-folder policy.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cache/cache_layout.h"
#include "cache/entry_format.h"
#include "cache/key_lock.h"

namespace kjit::cache {

/// Temp files older than this were left by a killed writer; no live write takes this long.
inline constexpr std::chrono::minutes kStaleTempAge{5};

/// One valid entry as shown by `kjit inspect`.
struct EntryInfo {
  std::string kind;                                ///< "cubin" or "tune"
  std::string key_text;                            ///< the full key text
  nlohmann::json metadata;                         ///< the entry's metadata
  EntryMetadata facts;                             ///< its known fields, typed
  std::uint64_t payload_size = 0;                  ///< payload bytes
  std::chrono::system_clock::time_point mtime;     ///< last write or hit
  std::string path;                                ///< the entry file
};

/// What verify() found.
struct VerifyReport {
  std::size_t checked = 0;           ///< entry files examined
  std::size_t ok = 0;                ///< entries that are valid
  std::size_t removed = 0;           ///< bad entries and stale temp files deleted
  std::vector<std::string> reasons;  ///< "<path>: <problem>" for every bad file
  std::vector<std::string> unsafe;   ///< folders of the tree not walked into (links, unsafe), why
};

/// What prune() did.
struct PruneReport {
  std::size_t removed = 0;          ///< entries deleted
  std::uint64_t bytes_before = 0;   ///< total entry bytes before
  std::uint64_t bytes_after = 0;    ///< total entry bytes after
};

/// A cache folder laid out as <dir>/v2/<kind>/<2 hex>/<digest>.bin. It never throws on I/O
/// trouble: an unusable folder logs one warning and the cache behaves as disabled (unsafe,
/// missing) or read-only (no write access, full disk). Safe to share between threads.
class DiskCache {
 public:
  /// Opens `dir`, creating it (and missing parents) with mode 0700. An empty `dir` disables the
  /// cache quietly. `max_bytes` caps the total entry size (0: no cap).
  explicit DiskCache(std::string dir, std::uint64_t max_bytes = 0);
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  /// The folder as given.
  const std::string& dir() const { return layout_.dir(); }
  /// True when entries may be read (the folder exists and is private).
  bool readable() const { return readable_; }
  /// True while puts may succeed; turns false for good after the first write failure.
  bool writable() const { return writable_.load(); }
  /// Where the entry for this key lives (whether or not it exists).
  std::string entry_path(std::string_view kind, const std::string& key_text) const;

  /// The valid entry for this key, or nullopt. A bad entry is logged, removed and a miss;
  /// a hit refreshes the file's mtime so that prune() sees it as recently used.
  std::optional<Entry> get(std::string_view kind, const std::string& key_text);
  /// Stores an entry atomically (temp file, fsync, rename); false when not stored. May prune.
  bool put(std::string_view kind, const std::string& key_text, std::string_view payload,
           const nlohmann::json& metadata = nlohmann::json::object());
  /// Blocks until this key is locked across threads and processes; unheld when the folder is
  /// not writable. Pattern: get -> miss -> lock -> get again -> compile -> put -> unlock.
  KeyLock lock(std::string_view kind, const std::string& key_text);

  /// Removes least-recently-used entries until their total is at most `max_bytes` (0: no cap,
  /// as for the constructor); also removes stale temp files. Skipped when another process is
  /// pruning the same folder.
  PruneReport prune(std::uint64_t max_bytes);
  /// Checks every entry and removes bad ones (anything at an entry's name that is not a valid
  /// entry file, folders included) and stale temp files.
  VerifyReport verify();
  /// Removes every entry, temp file and idle lock file; returns the number of entries removed.
  std::size_t clear();
  /// Every valid entry, oldest first.
  std::vector<EntryInfo> list();

  /// Writes all valid entries into one bundle file (atomically); returns how many.
  /// Throws kjit::Error(kErrorCacheIo) when the file cannot be written.
  std::size_t export_bundle(const std::string& path);
  /// Validates a bundle and puts each of its entries here; returns how many. Throws
  /// kjit::Error(kErrorCacheIo) when the bundle is invalid or this folder is not writable.
  std::size_t import_bundle(const std::string& path);

 private:
  void require_kind(std::string_view kind) const;
  int write_entry(std::string_view kind, const std::string& digest, const std::string& bytes,
                  std::string& problem);
  void disable_writes(const std::string& why);
  void note_written(std::uint64_t bytes);
  std::uint64_t remove_stale_temps(const std::vector<CacheFile>& files, VerifyReport* report);
  std::string prune_lock_path() const;

  CacheLayout layout_;
  std::uint64_t max_bytes_;
  bool readable_ = false;
  std::atomic<bool> writable_{false};
  std::mutex size_mutex_;            // guards the two fields below
  bool size_known_ = false;          // size_estimate_ has been seeded by a scan
  std::uint64_t size_estimate_ = 0;  // entry bytes: last scan plus this process's puts since
};

}  // namespace kjit::cache
