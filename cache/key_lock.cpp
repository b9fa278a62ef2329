// SPDX-License-Identifier: Apache-2.0
#include "cache/key_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace kjit::cache {
namespace {

// After flock succeeds the path must still name the locked inode: another process may have
// deleted the lock file (remove_and_unlock) while this one waited on the old inode, and a lock
// on an unlinked file excludes nobody.
bool still_linked(int fd, const std::string& path) {
  struct stat held {};
  struct stat named {};
  if (::fstat(fd, &held) != 0 || ::stat(path.c_str(), &named) != 0) return false;
  return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

int flock_retrying(int fd, int operation) {
  for (;;) {
    if (::flock(fd, operation) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

}  // namespace

KeyLock::~KeyLock() { unlock(); }

KeyLock::KeyLock(KeyLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

KeyLock& KeyLock::operator=(KeyLock&& other) noexcept {
  if (this != &other) {
    unlock();
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

KeyLock KeyLock::acquire(const std::string& path) { return lock_path(path, /*wait=*/true); }

KeyLock KeyLock::try_acquire(const std::string& path) { return lock_path(path, /*wait=*/false); }

KeyLock KeyLock::lock_path(const std::string& path, bool wait) {
  // Bounded: each retry means someone removed the file between our open and our flock, which
  // only idle-lock cleanup does, so a few rounds always settle.
  for (int attempt = 0; attempt < 64; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0) return KeyLock();
    if (flock_retrying(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return KeyLock();
    }
    if (still_linked(fd, path)) {
      KeyLock lock;
      lock.fd_ = fd;
      lock.path_ = path;
      return lock;
    }
    ::close(fd);
  }
  return KeyLock();
}

void KeyLock::unlock() noexcept {
  // close() drops the flock; an explicit LOCK_UN would add nothing.
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
}

void KeyLock::remove_and_unlock() noexcept {
  if (fd_ >= 0) ::unlink(path_.c_str());
  unlock();
}

}  // namespace kjit::cache
