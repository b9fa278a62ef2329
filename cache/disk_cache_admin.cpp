// SPDX-License-Identifier: Apache-2.0
// The maintenance side of DiskCache (the `kjit cache` commands and the size cap): prune,
// verify, clear, list, and bundle export/import.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <limits>

#include "cache/bundle.h"
#include "cache/bundle_format.h"
#include "cache/digest.h"
#include "cache/disk_cache.h"
#include "cache/entry_file.h"
#include "cache/file_io.h"
#include "kjit/error.hpp"
#include "runtime/log.h"

namespace kjit::cache {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Lock files are deleted only when nobody holds them (see KeyLock::acquire for why waiters
// survive this); a held one belongs to a compile in progress and stays.
void remove_idle_lock(const std::string& path) {
  KeyLock lock = KeyLock::try_acquire(path);
  if (lock.held()) lock.remove_and_unlock();
}

std::string lock_path_of(const CacheFile& entry) {
  return entry.path.substr(0, entry.path.size() - kEntrySuffix.size()) + std::string(kLockSuffix);
}

}  // namespace

std::string DiskCache::prune_lock_path() const { return layout_.root() + "/prune.lock"; }

std::uint64_t DiskCache::remove_stale_temps(const std::vector<CacheFile>& files,
                                            VerifyReport* report) {
  const std::int64_t cutoff =
      now_ns() - std::chrono::duration_cast<std::chrono::nanoseconds>(kStaleTempAge).count();
  std::uint64_t removed = 0;
  for (const CacheFile& file : files) {
    if (file.role != FileRole::kTemp || file.mtime_ns > cutoff) continue;
    if (!layout_.remove(file)) continue;
    ++removed;
    if (report) report->reasons.push_back(file.path + ": stale temp file from an interrupted write");
  }
  return removed;
}

PruneReport DiskCache::prune(std::uint64_t max_bytes) {
  PruneReport report;
  if (!writable_) return report;
  if (max_bytes == 0) max_bytes = std::numeric_limits<std::uint64_t>::max();  // 0: no cap
  // One pruner per folder at a time; a second one would only race to delete the same files.
  KeyLock guard = KeyLock::try_acquire(prune_lock_path());
  if (!guard.held()) return report;
  std::vector<CacheFile> files = layout_.scan();
  remove_stale_temps(files, nullptr);
  std::vector<CacheFile> entries;
  for (CacheFile& file : files)
    if (file.role == FileRole::kEntry && file.regular) entries.push_back(std::move(file));
  // get() touches mtime on every hit, so the oldest mtime is the least recently used.
  std::sort(entries.begin(), entries.end(),
            [](const CacheFile& a, const CacheFile& b) { return a.mtime_ns < b.mtime_ns; });
  for (const CacheFile& entry : entries) report.bytes_before += entry.size;
  report.bytes_after = report.bytes_before;
  for (const CacheFile& entry : entries) {
    if (report.bytes_after <= max_bytes) break;
    if (!layout_.remove(entry)) continue;
    remove_idle_lock(lock_path_of(entry));
    report.bytes_after -= entry.size;
    ++report.removed;
  }
  std::lock_guard<std::mutex> lock(size_mutex_);
  size_estimate_ = report.bytes_after;
  size_known_ = true;
  return report;
}

VerifyReport DiskCache::verify() {
  VerifyReport report;
  if (!readable_) return report;
  std::vector<CacheFile> files = layout_.scan(&report.unsafe);
  if (writable_) report.removed += remove_stale_temps(files, &report);
  for (const CacheFile& file : files) {
    if (file.role != FileRole::kEntry) continue;
    ++report.checked;
    LoadedEntry loaded = load_entry_at(layout_, file.kind, file.shard, file.name, file.stem, nullptr);
    if (loaded.state == LoadedEntry::State::kGood) {
      ++report.ok;
      continue;
    }
    if (loaded.state == LoadedEntry::State::kMissing) {  // removed meanwhile
      --report.checked;
      continue;
    }
    report.reasons.push_back(file.path + ": " + loaded.problem);
    CacheFile judged = file;
    judged.st = loaded.st;
    if (loaded.state == LoadedEntry::State::kBad && writable_ && layout_.remove(judged))
      ++report.removed;
  }
  return report;
}

std::size_t DiskCache::clear() {
  if (!writable_) return 0;
  std::size_t removed = 0;
  for (const CacheFile& file : layout_.scan()) {
    if (file.role == FileRole::kLock && file.regular) {
      remove_idle_lock(file.path);
    } else if (layout_.remove(file) && file.role == FileRole::kEntry) {
      ++removed;
    }
  }
  layout_.remove_empty_folders();
  std::lock_guard<std::mutex> lock(size_mutex_);
  size_estimate_ = 0;
  size_known_ = true;
  return removed;
}

std::vector<EntryInfo> DiskCache::list() {
  std::vector<EntryInfo> infos;
  if (!readable_) return infos;
  std::vector<CacheFile> files = layout_.scan();
  std::sort(files.begin(), files.end(),
            [](const CacheFile& a, const CacheFile& b) { return a.mtime_ns < b.mtime_ns; });
  for (const CacheFile& file : files) {
    if (file.role != FileRole::kEntry) continue;
    LoadedEntry loaded = load_entry_at(layout_, file.kind, file.shard, file.name, file.stem, nullptr);
    if (loaded.state != LoadedEntry::State::kGood) continue;
    EntryInfo info;
    info.kind = loaded.entry->kind;
    info.key_text = std::move(loaded.entry->key_text);
    info.metadata = std::move(loaded.entry->metadata);
    info.facts = std::move(loaded.entry->facts);
    info.payload_size = loaded.entry->payload.size();
    info.mtime = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(file.mtime_ns)));
    info.path = file.path;
    infos.push_back(std::move(info));
  }
  return infos;
}

std::size_t DiskCache::export_bundle(const std::string& path) {
  auto fail = [&](int error) {
    return Error(Status::kErrorCacheIo, "cannot write cache bundle '" + path + "'",
                 errno_text(error));
  };
  // Renaming the finished bundle into place would replace whatever the name holds: a link, a
  // device node, another user's file. Checked before writing and again just before the rename.
  auto require_replaceable = [&] {
    if (std::string problem = replace_problem(path); !problem.empty())
      throw Error(Status::kErrorCacheIo, "cannot write cache bundle '" + path + "': it " + problem +
                                             "; kjit replaces only a regular file of yours");
  };
  require_replaceable();
  BundleWriter writer;
  if (int error = writer.open(path); error != 0) throw fail(error);
  if (readable_) {
    for (const CacheFile& file : layout_.scan()) {
      if (file.role != FileRole::kEntry) continue;
      LoadedEntry loaded =
          load_entry_at(layout_, file.kind, file.shard, file.name, file.stem, nullptr, true);
      if (loaded.state != LoadedEntry::State::kGood) continue;
      // The file bytes already are an encoded entry: copied as they are.
      if (int error = writer.add(file.kind, file.stem, loaded.bytes); error != 0) throw fail(error);
    }
  }
  require_replaceable();
  if (int error = writer.commit(); error != 0) throw fail(error);
  return writer.count();
}

std::size_t DiskCache::import_bundle(const std::string& path) {
  Bundle bundle(path);
  if (!bundle.valid())
    throw Error(Status::kErrorCacheIo, "cannot import cache bundle '" + path + "'",
                bundle.problem());
  if (!writable_)
    throw Error(Status::kErrorCacheIo, "cache folder '" + dir() + "' is not writable");
  std::size_t imported = 0;
  bool failed = false;
  bundle.for_each([&](const Entry& entry) {
    if (failed) return;
    if (put(entry.kind, entry.key_text, entry.payload, entry.metadata)) {
      ++imported;
    } else {
      failed = true;
    }
  });
  if (failed)
    throw Error(Status::kErrorCacheIo, "import into '" + dir() + "' stopped after " +
                                           std::to_string(imported) + " entries: write failed");
  return imported;
}

}  // namespace kjit::cache
