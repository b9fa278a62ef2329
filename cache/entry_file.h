// SPDX-License-Identifier: Apache-2.0
// Reading one entry file from disk and deciding whether it may be used.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>

#include "cache/entry_format.h"

namespace kjit::cache {

/// The verdict on one entry file.
struct LoadedEntry {
  enum class State {
    kGood,        ///< `entry` is set and may be used
    kMissing,     ///< no such file: an ordinary miss
    kUnreadable,  ///< an I/O error; left in place, since it may be transient
    kBad,         ///< torn, corrupt, stale, foreign or unsafe: should be removed
  };
  State state = State::kMissing;  ///< what was found
  std::optional<Entry> entry;     ///< set when kGood
  std::string problem;            ///< why not kGood, for the log
  struct stat st {};              ///< the file as it was read (for remove_if_unchanged)
  std::string bytes;              ///< raw file bytes, kept only when asked for
};

/// Reads `path` without following symlinks and checks it: owned by us and not group/other
/// writable, a valid entry of `kind` whose key hashes to `digest`, and equal to
/// `expected_key_text` when given. `keep_bytes` keeps the raw bytes (bundle export).
LoadedEntry load_entry_file(const std::string& path, std::string_view kind,
                            const std::string& digest, const std::string* expected_key_text,
                            bool keep_bytes = false);

/// Unlinks `path` only if it is still the file described by `seen`: another process may have
/// renamed a fresh entry over the bad one meanwhile, and that one must survive.
bool remove_if_unchanged(const std::string& path, const struct stat& seen);

}  // namespace kjit::cache
