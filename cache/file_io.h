// SPDX-License-Identifier: Apache-2.0
// Thin POSIX file helpers for the cache: whole-file reads and temp-then-rename writes.
// They report errno values instead of throwing, because the disk cache degrades on I/O errors.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace kjit::cache {

/// Suffix of in-flight temp files; prune and verify delete old ones left by killed processes.
inline constexpr std::string_view kTempSuffix = ".tmp";

/// strerror text for an errno value, e.g. "No space left on device".
std::string errno_text(int error);

/// "a directory", "a FIFO", "a symbolic link", ... for messages about what sits at a path.
std::string file_type_name(mode_t mode);

/// Reads the rest of an open descriptor into `out`; returns 0 or an errno value, EFBIG when
/// there are more than `max_bytes` (nothing on disk is read without a bound).
int read_all(int fd, std::uint64_t max_bytes, std::string& out);

/// Empty when `path` may be replaced by a file kjit writes (export): it does not exist, or it is
/// a regular file of the effective user. Otherwise what is there, e.g. "is a symbolic link",
/// since renaming over it would turn a link, a device node or another user's file into ours.
std::string replace_problem(const std::string& path);

/// Creates `path` as a directory with mode 0700 unless it exists; returns 0 or an errno value.
int make_private_dir(const std::string& path);

/// A uniquely named temp file beside its final path that replaces the final file only on
/// commit(), so readers see either the old file or the complete new one, never a torn one.
class AtomicFile {
 public:
  AtomicFile() = default;
  /// Removes the temp file unless it was committed.
  ~AtomicFile();
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&& other) noexcept;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Creates the temp file (mode 0600) next to `final_path`; returns 0 or an errno value.
  int open(const std::string& final_path);
  /// Appends bytes at the current end; returns 0 or an errno value.
  int write(std::string_view bytes);
  /// Overwrites bytes at `offset` (used to patch headers); returns 0 or an errno value.
  int write_at(std::uint64_t offset, std::string_view bytes);
  /// fsyncs, closes and renames over the final path; returns 0 or an errno value.
  int commit();

  /// Path of the temp file while it exists.
  const std::string& temp_path() const { return temp_path_; }

 private:
  void discard() noexcept;

  int fd_ = -1;
  std::string temp_path_;
  std::string final_path_;
};

}  // namespace kjit::cache
