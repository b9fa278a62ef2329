// SPDX-License-Identifier: Apache-2.0
// Folders of the cache tree (<dir>/v2, its kind folders and their shards), opened one component
// at a time with O_NOFOLLOW | O_DIRECTORY and checked before anything in them is read, written or
// deleted: a symbolic link is never followed inside the tree, and a folder that is not ours or
// that group or others may write to is left alone, because whoever can write to it could point
// kjit at their own files (or at another user's, to have them deleted).
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

namespace kjit::cache {

/// One open, checked folder (a move-only descriptor).
class CacheFolder {
 public:
  CacheFolder() = default;
  ~CacheFolder();
  CacheFolder(CacheFolder&& other) noexcept;
  CacheFolder& operator=(CacheFolder&& other) noexcept;
  CacheFolder(const CacheFolder&) = delete;
  CacheFolder& operator=(const CacheFolder&) = delete;

  /// Opens `path`, whose last component must be a real folder (the parents are the user's
  /// choice and may be links). On failure the result is not valid() and `problem` says why.
  static CacheFolder open(const std::string& path, std::string& problem);
  /// Opens the child folder `name` (one component), creating it with mode 0700 when `create`
  /// is set and it does not exist. `error` gets an errno value (ELOOP for a link, ENOTDIR for
  /// something else, EPERM for an unsafe folder) and `problem` the sentence for the log.
  CacheFolder child(const std::string& name, bool create, int& error, std::string& problem) const;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  /// The folder's path, for messages and for the code that still works by path.
  const std::string& path() const { return path_; }

  /// Names of the folder's items, without "." and "..".
  std::vector<std::string> names() const;
  /// lstat of item `name`; returns 0 or an errno value.
  int stat_item(const std::string& name, struct stat& st) const;
  /// Opens item `name` read-only without following a link and without blocking (a FIFO opens
  /// at once, and its fstat shows it is no file); returns a descriptor or -errno.
  int open_item(const std::string& name) const;
  /// Removes item `name` if it is still the inode `seen` describes (another process may have
  /// renamed a fresh entry over it meanwhile). A folder goes with everything inside it, walked the
  /// same way. Returns true when it was removed.
  bool remove_item(const std::string& name, const struct stat& seen) const;
  /// Removes the child folder `name` if it is empty; quietly leaves it otherwise.
  void remove_if_empty(const std::string& name) const;

 private:
  CacheFolder(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  static CacheFolder checked(int fd, std::string path, int& error, std::string& problem);

  int fd_ = -1;
  std::string path_;
};

}  // namespace kjit::cache
