// SPDX-License-Identifier: Apache-2.0
#include "cache/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

namespace kjit::cache {
namespace {

// Shared by every AtomicFile in the process: together with the pid it makes temp names unique
// across threads and processes; O_EXCL still guards against a recycled pid.
std::atomic<std::uint64_t> g_temp_counter{0};

std::string temp_name_for(const std::string& final_path) {
  const std::size_t slash = final_path.rfind('/');
  const std::string folder = slash == std::string::npos ? "" : final_path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? final_path : final_path.substr(slash + 1);
  // A leading dot keeps temp files out of casual listings; the suffix lets prune find them.
  return folder + "." + base + "." + std::to_string(::getpid()) + "." +
         std::to_string(g_temp_counter.fetch_add(1)) + std::string(kTempSuffix);
}

int write_fully(int fd, const char* data, std::size_t size, off_t offset, bool positional) {
  while (size > 0) {
    ssize_t n = positional ? ::pwrite(fd, data, size, offset) : ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    offset += n;
  }
  return 0;
}

}  // namespace

std::string errno_text(int error) { return std::strerror(error); }

std::string file_type_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "of unknown type";
}

int read_all(int fd, std::uint64_t max_bytes, std::string& out) {
  out.clear();
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0 && static_cast<std::uint64_t>(st.st_size) <= max_bytes)
    out.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return 0;
    if (static_cast<std::uint64_t>(n) > max_bytes - out.size()) return EFBIG;
    out.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string replace_problem(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return errno == ENOENT ? std::string() : "cannot be examined: " + errno_text(errno);
  if (!S_ISREG(st.st_mode)) return "is " + file_type_name(st.st_mode);
  if (st.st_uid != ::geteuid()) return "belongs to uid " + std::to_string(st.st_uid);
  return {};
}

int make_private_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return 0;
  return errno;
}

AtomicFile::~AtomicFile() { discard(); }

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      temp_path_(std::move(other.temp_path_)),
      final_path_(std::move(other.final_path_)) {
  other.temp_path_.clear();
}

AtomicFile& AtomicFile::operator=(AtomicFile&& other) noexcept {
  if (this != &other) {
    discard();
    fd_ = std::exchange(other.fd_, -1);
    temp_path_ = std::move(other.temp_path_);
    final_path_ = std::move(other.final_path_);
    other.temp_path_.clear();
  }
  return *this;
}

int AtomicFile::open(const std::string& final_path) {
  discard();
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string candidate = temp_name_for(final_path);
    int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      fd_ = fd;
      temp_path_ = std::move(candidate);
      final_path_ = final_path;
      return 0;
    }
    if (errno != EEXIST) return errno;
  }
  return EEXIST;
}

int AtomicFile::write(std::string_view bytes) {
  if (fd_ < 0) return EBADF;
  return write_fully(fd_, bytes.data(), bytes.size(), 0, /*positional=*/false);
}

int AtomicFile::write_at(std::uint64_t offset, std::string_view bytes) {
  if (fd_ < 0) return EBADF;
  return write_fully(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset),
                     /*positional=*/true);
}

int AtomicFile::commit() {
  if (fd_ < 0) return EBADF;
  // fsync before rename: otherwise a power loss can leave the final name pointing at an empty
  // file. The folder itself is not fsynced; losing the rename only costs a recompile.
  int error = ::fsync(fd_) == 0 ? 0 : errno;
  if (::close(std::exchange(fd_, -1)) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temp_path_.c_str(), final_path_.c_str()) != 0) error = errno;
  if (error != 0) {
    discard();
    return error;
  }
  temp_path_.clear();
  return 0;
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  temp_path_.clear();
}

}  // namespace kjit::cache
