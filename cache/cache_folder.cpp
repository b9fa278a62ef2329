// SPDX-License-Identifier: Apache-2.0
#include "cache/cache_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "cache/dir_safety.h"
#include "cache/file_io.h"

namespace kjit::cache {
namespace {

constexpr int kFolderFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
// Nothing kjit writes nests below a shard; a deeper tree at an entry's path is someone's
// experiment, removed down to this depth and otherwise left in place.
constexpr int kMaxRemoveDepth = 8;

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Empties the folder `fd` (already checked) and reports whether every item went.
bool empty_folder(int fd, int depth);

bool remove_at(int parent, const std::string& name, const struct stat& st, int depth) {
  if (!S_ISDIR(st.st_mode)) return ::unlinkat(parent, name.c_str(), 0) == 0;
  if (depth >= kMaxRemoveDepth) return false;
  const int fd = ::openat(parent, name.c_str(), kFolderFlags);
  if (fd < 0) return false;
  struct stat opened {};
  const bool ours = ::fstat(fd, &opened) == 0 && same_inode(opened, st) &&
                    ownership_problem(opened).empty();
  const bool emptied = ours && empty_folder(fd, depth + 1);
  ::close(fd);
  return emptied && ::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0;
}

std::vector<std::string> list_fd(int fd) {
  std::vector<std::string> names;
  const int copy = ::dup(fd);
  if (copy < 0) return names;
  DIR* handle = ::fdopendir(copy);
  if (handle == nullptr) {
    ::close(copy);
    return names;
  }
  ::rewinddir(handle);  // the copy shares its offset with `fd`, which an earlier listing moved
  while (const dirent* item = ::readdir(handle)) {
    std::string name = item->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(handle);
  return names;
}

bool empty_folder(int fd, int depth) {
  bool all = true;
  for (const std::string& name : list_fd(fd)) {
    struct stat st {};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    all = remove_at(fd, name, st, depth) && all;
  }
  return all;
}

}  // namespace

CacheFolder::~CacheFolder() {
  if (fd_ >= 0) ::close(fd_);
}

CacheFolder::CacheFolder(CacheFolder&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

CacheFolder& CacheFolder::operator=(CacheFolder&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

CacheFolder CacheFolder::checked(int fd, std::string path, int& error, std::string& problem) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = errno;
    problem = "'" + path + "': " + errno_text(error);
    ::close(fd);
    return CacheFolder();
  }
  if (std::string unsafe = ownership_problem(st); !unsafe.empty()) {
    error = EPERM;
    problem = "'" + path + "' is " + unsafe + "; nothing in it is read or removed";
    ::close(fd);
    return CacheFolder();
  }
  error = 0;
  return CacheFolder(fd, std::move(path));
}

CacheFolder CacheFolder::open(const std::string& path, std::string& problem) {
  int error = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    problem = "cannot open '" + path + "': " + errno_text(errno);
    return CacheFolder();
  }
  return checked(fd, path, error, problem);
}

CacheFolder CacheFolder::child(const std::string& name, bool create, int& error,
                               std::string& problem) const {
  const std::string path = path_ + "/" + name;
  int fd = ::openat(fd_, name.c_str(), kFolderFlags);
  if (fd < 0 && errno == ENOENT && create) {
    if (::mkdirat(fd_, name.c_str(), 0700) != 0 && errno != EEXIST) {
      error = errno;
      problem = "cannot create '" + path + "': " + errno_text(error);
      return CacheFolder();
    }
    fd = ::openat(fd_, name.c_str(), kFolderFlags);
  }
  if (fd < 0) {
    error = errno;
    struct stat st {};
    // O_NOFOLLOW | O_DIRECTORY fails on a link with ELOOP or ENOTDIR: say what is there.
    if (error != ENOENT && ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISDIR(st.st_mode)) {
      error = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
      problem = "'" + path + "' is " + file_type_name(st.st_mode) + ", not a folder; it is never followed";
    } else {
      problem = "cannot open '" + path + "': " + errno_text(error);
    }
    return CacheFolder();
  }
  return checked(fd, path, error, problem);
}

std::vector<std::string> CacheFolder::names() const { return list_fd(fd_); }

int CacheFolder::stat_item(const std::string& name, struct stat& st) const {
  return ::fstatat(fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
}

int CacheFolder::open_item(const std::string& name) const {
  const int fd = ::openat(fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

bool CacheFolder::remove_item(const std::string& name, const struct stat& seen) const {
  struct stat now {};
  if (stat_item(name, now) != 0 || !same_inode(now, seen)) return false;
  return remove_at(fd_, name, now, 0);
}

void CacheFolder::remove_if_empty(const std::string& name) const {
  ::unlinkat(fd_, name.c_str(), AT_REMOVEDIR);
}

}  // namespace kjit::cache
