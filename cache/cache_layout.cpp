// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_layout.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>

#include "cache/entry_format.h"
#include "cache/file_io.h"

namespace kjit::cache {
namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_shard_name(std::string_view name) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  return name.size() == 2 && hex(name[0]) && hex(name[1]);
}

// Temp names look like ".<digest>.bin.<pid>.<n>.tmp"; their stem is the digest.
CacheFile classify(const std::string& kind, const std::string& folder, const std::string& name) {
  CacheFile file;
  file.path = folder + "/" + name;
  file.kind = kind;
  if (ends_with(name, kTempSuffix)) {
    file.role = FileRole::kTemp;
    file.stem = name.substr(1, name.find('.', 1) - 1);
  } else if (ends_with(name, kEntrySuffix)) {
    file.role = FileRole::kEntry;
    file.stem = name.substr(0, name.size() - kEntrySuffix.size());
  } else if (ends_with(name, kLockSuffix)) {
    file.role = FileRole::kLock;
    file.stem = name.substr(0, name.size() - kLockSuffix.size());
  }
  return file;
}

}  // namespace

std::vector<std::string> list_folder(const std::string& folder) {
  std::vector<std::string> names;
  DIR* handle = ::opendir(folder.c_str());
  if (handle == nullptr) return names;
  while (const dirent* item = ::readdir(handle)) {
    std::string name = item->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(handle);
  return names;
}

std::string CacheLayout::root() const { return dir_ + "/" + std::string(kLayoutVersion); }

std::string CacheLayout::shard_dir(std::string_view kind, const std::string& digest) const {
  return root() + "/" + std::string(kind) + "/" + digest.substr(0, 2);
}

std::string CacheLayout::entry_path(std::string_view kind, const std::string& digest) const {
  return shard_dir(kind, digest) + "/" + digest + std::string(kEntrySuffix);
}

std::string CacheLayout::lock_path(std::string_view kind, const std::string& digest) const {
  return shard_dir(kind, digest) + "/" + digest + std::string(kLockSuffix);
}

CacheFolder CacheLayout::open_root(bool create, int& error, std::string& problem) const {
  CacheFolder top = CacheFolder::open(dir_, problem);
  if (!top.valid()) {
    error = EACCES;
    return top;
  }
  return top.child(std::string(kLayoutVersion), create, error, problem);
}

CacheFolder CacheLayout::open_shard(std::string_view kind, const std::string& shard, bool create,
                                    int& error, std::string& problem) const {
  CacheFolder folder = open_root(create, error, problem);
  for (const std::string& name : {std::string(kind), shard}) {
    if (!folder.valid()) break;
    folder = folder.child(name, create, error, problem);
  }
  return folder;
}

int CacheLayout::ensure_shard(std::string_view kind, const std::string& digest,
                              std::string& problem) const {
  int error = 0;
  open_shard(kind, digest.substr(0, 2), /*create=*/true, error, problem);
  return error;
}

std::vector<CacheFile> CacheLayout::scan(std::vector<std::string>* problems) const {
  std::vector<CacheFile> files;
  auto note = [&](const std::string& problem) {
    if (problems) problems->push_back(problem);
  };
  std::string problem;
  int error = 0;
  const CacheFolder root = open_root(false, error, problem);
  if (!root.valid()) {
    if (error != ENOENT) note(problem);
    return files;
  }
  for (const std::string& kind : root.names()) {
    if (!is_valid_kind(kind)) continue;
    const CacheFolder kind_folder = root.child(kind, false, error, problem);
    if (!kind_folder.valid()) {
      if (error != ENOENT) note(problem);
      continue;
    }
    for (const std::string& shard : kind_folder.names()) {
      if (!is_shard_name(shard)) continue;
      const CacheFolder folder = kind_folder.child(shard, false, error, problem);
      if (!folder.valid()) {
        if (error != ENOENT) note(problem);
        continue;
      }
      for (const std::string& name : folder.names()) {
        CacheFile file = classify(kind, folder.path(), name);
        if (folder.stat_item(name, file.st) != 0) continue;  // removed meanwhile
        file.shard = shard;
        file.name = name;
        file.regular = S_ISREG(file.st.st_mode);
        file.size = file.regular ? static_cast<std::uint64_t>(file.st.st_size) : 0;
        file.mtime_ns = std::int64_t(file.st.st_mtim.tv_sec) * 1000000000 + file.st.st_mtim.tv_nsec;
        files.push_back(std::move(file));
      }
    }
  }
  return files;
}

bool CacheLayout::remove(const CacheFile& file) const {
  int error = 0;
  std::string problem;
  const CacheFolder folder = open_shard(file.kind, file.shard, false, error, problem);
  return folder.valid() && folder.remove_item(file.name, file.st);
}

void CacheLayout::remove_empty_folders() const {
  int error = 0;
  std::string problem;
  const CacheFolder root = open_root(false, error, problem);
  if (!root.valid()) return;
  for (const std::string& kind : root.names()) {
    const CacheFolder kind_folder = root.child(kind, false, error, problem);
    if (!kind_folder.valid()) continue;
    // rmdir refuses the folders still in use.
    for (const std::string& shard : kind_folder.names()) kind_folder.remove_if_empty(shard);
    root.remove_if_empty(kind);
  }
}

}  // namespace kjit::cache
