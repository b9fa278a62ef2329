// SPDX-License-Identifier: Apache-2.0
// Checks that decide whether a cache folder may be trusted. Cubins from the cache are loaded
// into the GPU as code, so a folder someone else can write to is never read.
#pragma once

#include <sys/stat.h>

#include <string>

namespace kjit::cache {

/// What the cache may do with a folder.
enum class DirAccess {
  kReadWrite,  ///< ours, private and writable
  kReadOnly,   ///< ours and private, but the disk or permissions refuse writes
  kUnsafe,     ///< owned by another user or writable by group/others: never read from
  kMissing,    ///< does not exist and could not be created
};

/// The verdict on a folder, with a sentence for the log when it is not kReadWrite.
struct DirCheck {
  DirAccess access = DirAccess::kMissing;  ///< what is allowed
  std::string reason;                      ///< why not kReadWrite; empty otherwise
};

/// Creates `dir` and any missing parents with mode 0700, then checks owner, mode and writability.
DirCheck prepare_private_dir(const std::string& dir);

/// Empty when `st` is owned by the effective user and not writable by group or others;
/// otherwise a short reason such as "owned by uid 1001".
std::string ownership_problem(const struct stat& st);

}  // namespace kjit::cache
