// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_layout.h"

#include <dirent.h>
#include <sys/stat.h>

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

int CacheLayout::ensure_shard(std::string_view kind, const std::string& digest) const {
  const std::string kind_dir = root() + "/" + std::string(kind);
  for (const std::string& folder : {root(), kind_dir, shard_dir(kind, digest)}) {
    if (int error = make_private_dir(folder); error != 0) return error;
  }
  return 0;
}

std::vector<CacheFile> CacheLayout::scan() const {
  std::vector<CacheFile> files;
  for (const std::string& kind : list_folder(root())) {
    if (!is_valid_kind(kind)) continue;
    const std::string kind_dir = root() + "/" + kind;
    for (const std::string& shard : list_folder(kind_dir)) {
      if (!is_shard_name(shard)) continue;
      const std::string folder = kind_dir + "/" + shard;
      for (const std::string& name : list_folder(folder)) {
        CacheFile file = classify(kind, folder, name);
        struct stat st {};
        if (::lstat(file.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        file.size = static_cast<std::uint64_t>(st.st_size);
        file.mtime_ns = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
        files.push_back(std::move(file));
      }
    }
  }
  return files;
}

}  // namespace kjit::cache
