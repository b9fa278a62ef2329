// SPDX-License-Identifier: Apache-2.0
// Cross-process, cross-thread exclusive lock on one cache key, held through an OS file lock.
#pragma once

#include <string>

namespace kjit::cache {

/// Move-only RAII holder of an exclusive flock() on a lock file. flock locks belong to an open
/// file description and every KeyLock opens its own, so two threads of one process exclude each
/// other just like two processes do (fcntl locks would not). The OS drops the lock when the
/// holder dies, so a killed compile never blocks the next one.
class KeyLock {
 public:
  /// A lock that holds nothing (no disk layer, or the lock file could not be made).
  KeyLock() = default;
  /// Releases the lock, if held.
  ~KeyLock();
  KeyLock(KeyLock&& other) noexcept;
  KeyLock& operator=(KeyLock&& other) noexcept;
  KeyLock(const KeyLock&) = delete;
  KeyLock& operator=(const KeyLock&) = delete;

  /// Blocks until `path` is locked; returns an unheld lock if the file cannot be opened.
  static KeyLock acquire(const std::string& path);
  /// Locks `path` only if nobody holds it; unheld otherwise.
  static KeyLock try_acquire(const std::string& path);

  /// True while this object holds the OS lock.
  bool held() const { return fd_ >= 0; }
  /// Releases early; the destructor then does nothing.
  void unlock() noexcept;
  /// Deletes the lock file while still holding it, then releases; used to tidy idle locks.
  void remove_and_unlock() noexcept;

 private:
  static KeyLock lock_path(const std::string& path, bool wait);

  int fd_ = -1;
  std::string path_;
};

}  // namespace kjit::cache
