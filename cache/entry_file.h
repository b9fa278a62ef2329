// SPDX-License-Identifier: Apache-2.0
// Reading one entry file from disk and deciding whether it may be used.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>

#include "cache/cache_folder.h"
#include "cache/cache_layout.h"
#include "cache/entry_format.h"

namespace kjit::cache {

/// The verdict on one entry file.
struct LoadedEntry {
  enum class State {
    kGood,        ///< `entry` is set and may be used
    kMissing,     ///< no such file: an ordinary miss
    kUnreadable,  ///< an I/O error or an unsafe folder; left in place
    kBad,         ///< torn, corrupt, stale, foreign, oversized, not a file: should be removed
  };
  State state = State::kMissing;  ///< what was found
  std::optional<Entry> entry;     ///< set when kGood
  std::string problem;            ///< why not kGood, for the log
  struct stat st {};              ///< what was judged (removals check it is still there)
  std::string bytes;              ///< raw file bytes, kept only when asked for
};

/// Reads item `name` of the checked `shard` folder without following a link or blocking on a
/// FIFO, and checks it: a regular file owned by us and not group/other writable, at most
/// kMaxEntryBytes, a valid entry of `kind` whose key hashes to `digest`, and equal to
/// `expected_key_text` when given. `keep_bytes` keeps the raw bytes (bundle export).
LoadedEntry load_entry_file(const CacheFolder& shard, const std::string& name, std::string_view kind,
                            const std::string& digest, const std::string* expected_key_text,
                            bool keep_bytes = false);

/// The same for <root>/<kind>/<shard>/<name>, opening the folders on the way first; a folder
/// that is unsafe or cannot be opened makes the entry kUnreadable (kMissing when absent).
LoadedEntry load_entry_at(const CacheLayout& layout, std::string_view kind, const std::string& shard,
                          const std::string& name, const std::string& digest,
                          const std::string* expected_key_text, bool keep_bytes = false);

}  // namespace kjit::cache
