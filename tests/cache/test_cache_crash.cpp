// SPDX-License-Identifier: Apache-2.0
// Processes killed mid-write or while holding a lock leave nothing harmful behind.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <string>
#include <thread>

#include "cache/disk_cache.h"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

const std::string kKey = "crash-test-key";
// Large enough that the write takes a while, below kMaxEntryBytes.
constexpr std::size_t kLargePayload = std::size_t(48) << 20;

// Polls until `done` holds or `limit` passes.
template <typename Predicate>
bool wait_for(Predicate done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Forks a child that puts a large entry and kills it once its temp file has data in it.
// Returns true if the kill landed mid-write (the child could, rarely, finish first).
bool kill_during_put(const std::string& dir) {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    DiskCache cache(dir);
    cache.put("cubin", kKey, std::string(kLargePayload, 'x'));
    ::_exit(0);
  }
  struct stat st {};
  wait_for([&] {
    for (const std::string& temp : find_files(dir, ".tmp"))
      if (::stat(temp.c_str(), &st) == 0 && st.st_size > 0) return true;
    return false;
  }, std::chrono::seconds(20));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

}  // namespace

TEST_CASE("a writer killed mid-put leaves nothing that get() accepts") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  { DiskCache setup(dir); }
  bool killed = false;
  for (int attempt = 0; attempt < 3 && !killed; ++attempt) {
    killed = kill_during_put(dir);
    if (!killed) DiskCache(dir).clear();  // it finished first: try again
  }
  REQUIRE(killed);
  DiskCache cache(dir);
  CHECK_FALSE(cache.get("cubin", kKey));
  CHECK(find_files(dir, ".bin").empty());
  const std::vector<std::string> temps = find_files(dir, ".tmp");
  REQUIRE(temps.size() == 1);

  // A fresh temp file may belong to a live writer: verify leaves it alone.
  VerifyReport fresh = cache.verify();
  CHECK(fresh.removed == 0);
  CHECK(find_files(dir, ".tmp").size() == 1);

  // Once it is older than kStaleTempAge it is debris and goes.
  set_mtime(temps[0], std::time(nullptr) - 3600);
  VerifyReport stale = cache.verify();
  CHECK(stale.removed == 1);
  CHECK(stale.checked == 0);
  CHECK(find_files(dir, ".tmp").empty());
  CHECK(cache.put("cubin", kKey, "recompiled"));
  CHECK(cache.get("cubin", kKey)->payload == "recompiled");
}

TEST_CASE("prune also removes stale temp files") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  DiskCache cache(dir);
  REQUIRE(cache.put("cubin", kKey, "p"));
  const std::string temp = cache.entry_path("cubin", kKey) + ".99999.0.tmp";
  write_bytes(temp, "half an entry");
  set_mtime(temp, std::time(nullptr) - 3600);
  cache.prune(1u << 30);
  CHECK(find_files(dir, ".tmp").empty());
  CHECK(cache.get("cubin", kKey));
}

TEST_CASE("a lock holder killed by SIGKILL releases the lock") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  DiskCache cache(dir);
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    DiskCache child_cache(dir);
    KeyLock lock = child_cache.lock("cubin", kKey);
    char byte = lock.held() ? 'y' : 'n';
    (void)!::write(ready[1], &byte, 1);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  ::close(ready[0]);
  CHECK(byte == 'y');
  const std::string lock_path = cache.entry_path("cubin", kKey).substr(
                                    0, cache.entry_path("cubin", kKey).size() - 4) + ".lock";
  CHECK_FALSE(KeyLock::try_acquire(lock_path).held());  // the child holds it
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK(wait_for([&] { return KeyLock::try_acquire(lock_path).held(); },
                 std::chrono::seconds(5)));
  CHECK(cache.lock("cubin", kKey).held());
}
