// SPDX-License-Identifier: Apache-2.0
// Shared fixtures for the cache tests: private temp folders, a warning counter on the kjit
// logger, and small file helpers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kjit::cache::testing {

/// A fresh folder from mkdtemp, removed (with everything in it) on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The folder itself.
  const std::string& path() const { return path_; }
  /// path() + "/" + name
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Counts warnings (and worse) sent to kjit::log() while it lives.
class WarningCounter {
 public:
  WarningCounter();
  ~WarningCounter();
  WarningCounter(const WarningCounter&) = delete;
  WarningCounter& operator=(const WarningCounter&) = delete;

  /// Warnings seen so far.
  std::size_t count() const;
  /// Their texts, for failure messages.
  std::vector<std::string> messages() const;

 private:
  struct Sink;
  std::shared_ptr<Sink> sink_;
};

/// Root ignores file permissions, so permission-based tests take another route under it.
bool running_as_root();
/// The user and group id of "nobody", for running a check without root's disregard of permissions.
constexpr unsigned kUnprivilegedId = 65534;
/// Makes `id` the owner (user and group) of `path` and everything under it; empty or why not.
std::string give_tree_to(const std::string& path, unsigned id);
/// Runs `check` (which returns empty when all holds, else what broke) in a child process that has
/// given up root for kUnprivilegedId where the suite runs as root, in this process otherwise; what
/// it returned, or why it could not run.
std::string run_unprivileged(const std::function<std::string()>& check);
/// Whole file as bytes; empty when missing.
std::string read_bytes(const std::string& path);
/// Replaces a file's contents (not atomically: tests use it to plant damage).
void write_bytes(const std::string& path, const std::string& bytes);
/// Sets a file's mtime to `unix_seconds`.
void set_mtime(const std::string& path, std::int64_t unix_seconds);
/// Files under `folder` (recursively) whose names end with `suffix`.
std::vector<std::string> find_files(const std::string& folder, const std::string& suffix);
/// Permission bits of a path (st_mode & 07777).
unsigned mode_of(const std::string& path);

/// Entry bytes with `meta_text` as their metadata and a correct checksum: what anyone who can
/// write a file (but not run kjit's own encoder) can plant.
std::string forged_entry(const std::string& kind, const std::string& key_text,
                         const std::string& meta_text, const std::string& payload);

/// Runs `body` in a child process and waits at most `seconds`. True when the child exited with
/// status 0 in time; a child still running then (a hang) is killed and the answer is false.
bool exits_cleanly_within(int seconds, const std::function<void()>& body);

}  // namespace kjit::cache::testing
