// SPDX-License-Identifier: Apache-2.0
// Core paths of DiskCache: opening the folder, get, put and per-key locks.
// Listing, pruning, verification and bundles live in disk_cache_admin.cpp.
#include "cache/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "cache/cache_folder.h"
#include "cache/digest.h"
#include "cache/dir_safety.h"
#include "cache/entry_file.h"
#include "cache/file_io.h"
#include "kjit/error.hpp"
#include "runtime/log.h"

namespace kjit::cache {
namespace {

// The folder and its layout tree are judged together: a private folder holding a tree that
// someone else can write to is just as unsafe.
DirCheck check_folder(const CacheLayout& layout) {
  DirCheck check = prepare_private_dir(layout.dir());
  if (check.access != DirAccess::kReadWrite && check.access != DirAccess::kReadOnly) return check;
  DirCheck root = prepare_private_dir(layout.root());
  if (root.access == DirAccess::kUnsafe) return root;
  // The layout tree is never reached through a link (cache_folder.h).
  struct stat st {};
  if (::lstat(layout.root().c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
    root.access = DirAccess::kUnsafe;
    root.reason = "'" + layout.root() + "' is " + file_type_name(st.st_mode) + ", not a folder";
    return root;
  }
  if (check.access == DirAccess::kReadWrite && root.access != DirAccess::kReadWrite) return root;
  return check;
}

// Once the total passes the cap, prune a tenth below it, so that the next few puts do not
// each pay for a full scan.
constexpr std::uint64_t kPruneSlackDivisor = 10;

}  // namespace

DiskCache::DiskCache(std::string dir, std::uint64_t max_bytes)
    : layout_(std::move(dir)), max_bytes_(max_bytes) {
  if (layout_.dir().empty()) return;
  DirCheck check = check_folder(layout_);
  switch (check.access) {
    case DirAccess::kReadWrite:
      readable_ = true;
      writable_ = true;
      break;
    case DirAccess::kReadOnly:
      readable_ = true;
      log().warn("disk cache is read-only: {}; existing entries are used, new ones are not saved",
                 check.reason);
      break;
    case DirAccess::kUnsafe:
      log().warn("disk cache disabled: {}; it could hold code planted by another user, so it is "
                 "never read (fix with 'chmod 700' or point KJIT_CACHE_DIR elsewhere)",
                 check.reason);
      break;
    case DirAccess::kMissing:
      log().warn("disk cache disabled: {}; compiled kernels are kept in memory only",
                 check.reason);
      break;
  }
}

std::string DiskCache::entry_path(std::string_view kind, const std::string& key_text) const {
  return layout_.entry_path(kind, digest_hex(key_text));
}

void DiskCache::require_kind(std::string_view kind) const {
  if (!is_valid_kind(kind))
    throw Error(Status::kErrorInvalidArgument,
                "cache entry kind '" + std::string(kind) + "' is not 1-32 characters of [a-z0-9_]");
}

std::optional<Entry> DiskCache::get(std::string_view kind, const std::string& key_text) {
  require_kind(kind);
  if (!readable_) return std::nullopt;
  const std::string digest = digest_hex(key_text);
  const std::string path = layout_.entry_path(kind, digest);
  int error = 0;
  std::string problem;
  const CacheFolder shard = layout_.open_shard(kind, digest.substr(0, 2), false, error, problem);
  if (!shard.valid()) {
    // A folder that is a link or not private is worth a warning; anything else (ENOENT above
    // all) is an ordinary miss, as an unreadable entry is.
    if (error == EPERM || error == ELOOP) log().warn("cache entry '{}' not read: {}", path, problem);
    else log().debug("cache entry '{}' not read: {}", path, problem);
    return std::nullopt;
  }
  const std::string name = digest + std::string(kEntrySuffix);
  LoadedEntry loaded = load_entry_file(shard, name, kind, digest, &key_text);
  switch (loaded.state) {
    case LoadedEntry::State::kMissing:
      return std::nullopt;
    case LoadedEntry::State::kUnreadable:
      log().debug("cache entry '{}' unreadable: {}", path, loaded.problem);
      return std::nullopt;
    case LoadedEntry::State::kBad:
      log().warn("dropping cache entry '{}': {}", path, loaded.problem);
      if (writable_) shard.remove_item(name, loaded.st);
      return std::nullopt;
    case LoadedEntry::State::kGood:
      break;
  }
  // Best effort: a failed touch only makes the entry look older to prune().
  if (writable_) ::utimensat(shard.fd(), name.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
  return std::move(loaded.entry);
}

bool DiskCache::put(std::string_view kind, const std::string& key_text, std::string_view payload,
                    const nlohmann::json& metadata) {
  require_kind(kind);
  if (!writable_) return false;
  std::string bytes;
  try {
    bytes = encode_entry(kind, key_text, metadata, payload);
  } catch (const nlohmann::json::exception& e) {
    throw Error(Status::kErrorInvalidArgument, "cache entry metadata cannot be written", e.what());
  }
  const std::string path = entry_path(kind, key_text);
  if (bytes.size() > kMaxEntryBytes) {
    log().warn("not caching '{}': {} bytes, more than an entry may have", path, bytes.size());
    return false;
  }
  // Only what get() would accept is written, so a caller's mistake shows here, not as a miss.
  if (DecodeResult check = decode_entry(bytes); !check)
    throw Error(Status::kErrorInvalidArgument, "cache entry cannot be stored: " + check.reason);
  const std::string digest = digest_hex(key_text);
  std::string problem;
  int error = write_entry(kind, digest, bytes, problem);
  // ENOENT: `kjit cache clear` removed the shard folder between mkdir and rename; once more.
  if (error == ENOENT) error = write_entry(kind, digest, bytes, problem);
  if (error == 0) {
    note_written(bytes.size());
    return true;
  }
  if (error == EPERM || error == ELOOP || error == ENOTDIR || error == EISDIR) {
    // This key's kind or shard folder, or its entry path, is spoiled; other keys still have
    // theirs, unless the spoiled folder is the root of the tree.
    int root_error = 0;
    std::string root_problem;
    if (layout_.open_root(false, root_error, root_problem).valid()) {
      log().warn("not caching '{}': {}", path, problem);
      return false;
    }
  }
  disable_writes(problem);
  return false;
}

int DiskCache::write_entry(std::string_view kind, const std::string& digest,
                           const std::string& bytes, std::string& problem) {
  const std::string path = layout_.entry_path(kind, digest);
  if (int error = layout_.ensure_shard(kind, digest, problem); error != 0) return error;
  AtomicFile file;
  int error = file.open(path);
  if (error == 0) error = file.write(bytes);
  if (error == 0) error = file.commit();
  if (error == EISDIR || error == ENOTEMPTY || error == EEXIST) {
    // A folder sits at the entry's name: it is in our private shard, so it is removed like any
    // bad entry and the write tried once more.
    int shard_error = 0;
    const CacheFolder shard = layout_.open_shard(kind, digest.substr(0, 2), false, shard_error, problem);
    const std::string name = digest + std::string(kEntrySuffix);
    struct stat st {};
    if (shard.valid() && shard.stat_item(name, st) == 0 && S_ISDIR(st.st_mode) &&
        shard.remove_item(name, st)) {
      log().warn("removed {} at cache entry path '{}'", file_type_name(st.st_mode), path);
      error = file.open(path);
      if (error == 0) error = file.write(bytes);
      if (error == 0) error = file.commit();
    }
  }
  if (error != 0) problem = "cannot write '" + path + "': " + errno_text(error);
  return error;
}

void DiskCache::disable_writes(const std::string& why) {
  // exchange(): of many threads failing at once, exactly one logs.
  if (writable_.exchange(false))
    log().warn("disk cache is read-only from now on: {}; new kernels are kept in memory only", why);
}

void DiskCache::note_written(std::uint64_t bytes) {
  if (max_bytes_ == 0) return;
  {
    std::lock_guard<std::mutex> guard(size_mutex_);
    if (size_known_) {
      size_estimate_ += bytes;
    } else {
      // First put: seed the estimate from disk (the new entry is already on it).
      size_estimate_ = 0;
      for (const CacheFile& file : layout_.scan())
        if (file.role == FileRole::kEntry) size_estimate_ += file.size;
      size_known_ = true;
    }
    if (size_estimate_ <= max_bytes_) return;
  }
  prune(max_bytes_ - max_bytes_ / kPruneSlackDivisor);
}

KeyLock DiskCache::lock(std::string_view kind, const std::string& key_text) {
  require_kind(kind);
  if (!writable_) return KeyLock();
  const std::string digest = digest_hex(key_text);
  std::string problem;
  if (layout_.ensure_shard(kind, digest, problem) != 0) return KeyLock();
  return KeyLock::acquire(layout_.lock_path(kind, digest));
}

}  // namespace kjit::cache
