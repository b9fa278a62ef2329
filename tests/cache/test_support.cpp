// SPDX-License-Identifier: Apache-2.0
#include "tests/cache/test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>

#include <spdlog/sinks/base_sink.h>

#include "cache/byte_io.h"
#include "cache/digest.h"
#include "cache/entry_format.h"
#include "runtime/log.h"

namespace kjit::cache::testing {

namespace fs = std::filesystem;

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/kjit-cache-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  // Tests chmod folders read-only or 0777; restore owner access so removal cannot fail.
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path_, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

struct WarningCounter::Sink : spdlog::sinks::base_sink<std::mutex> {
  std::vector<std::string> seen;

  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (msg.level >= spdlog::level::warn) seen.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> guard(mutex_);
    return seen;
  }
};

WarningCounter::WarningCounter() : sink_(std::make_shared<Sink>()) {
  kjit::log().sinks().push_back(sink_);
}

WarningCounter::~WarningCounter() {
  auto& sinks = kjit::log().sinks();
  sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
}

std::size_t WarningCounter::count() const { return messages().size(); }

std::vector<std::string> WarningCounter::messages() const { return sink_->snapshot(); }

bool running_as_root() { return ::geteuid() == 0; }

std::string give_tree_to(const std::string& path, unsigned id) {
  std::error_code error;
  if (::chown(path.c_str(), id, id) != 0) return "cannot chown " + path;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path, error))
    if (::lchown(entry.path().c_str(), id, id) != 0) return "cannot chown " + entry.path().string();
  return error ? "cannot list " + path : std::string();
}

std::string run_unprivileged(const std::function<std::string()>& check) {
  if (!running_as_root()) return check();
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t child = ::fork();
  if (child < 0) return "fork failed";
  if (child == 0) {
    ::close(pipe_fds[0]);
    const bool dropped = ::setgid(kUnprivilegedId) == 0 && ::setuid(kUnprivilegedId) == 0;
    const std::string result = dropped ? check() : "cannot give up root";
    const bool written = ::write(pipe_fds[1], result.data(), result.size()) == static_cast<ssize_t>(result.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string result;
  char buffer[256];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) result.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return "the unprivileged check did not finish";
  return result;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void set_mtime(const std::string& path, std::int64_t unix_seconds) {
  struct timespec times[2];
  times[0].tv_sec = times[1].tv_sec = static_cast<time_t>(unix_seconds);
  times[0].tv_nsec = times[1].tv_nsec = 0;
  if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0)
    throw std::runtime_error("utimensat failed on " + path);
}

std::vector<std::string> find_files(const std::string& folder, const std::string& suffix) {
  std::vector<std::string> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_regular_file(ec) && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      found.push_back(it->path().string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

unsigned mode_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<unsigned>(st.st_mode & 07777);
}

std::string forged_entry(const std::string& kind, const std::string& key_text,
                         const std::string& meta_text, const std::string& payload) {
  std::string out;
  ByteWriter writer(out);
  writer.put_raw("KJITENTR");
  writer.put_u32(kEntryFormatVersion);
  writer.put_blob32(kind);
  writer.put_blob32(key_text);
  writer.put_blob32(meta_text);
  writer.put_u64(payload.size());
  writer.put_raw(payload);
  writer.put_u64(checksum64(out));
  return out;
}

bool exits_cleanly_within(int seconds, const std::function<void()>& body) {
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    try {
      body();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace kjit::cache::testing
