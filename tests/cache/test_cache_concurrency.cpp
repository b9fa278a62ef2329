// SPDX-License-Identifier: Apache-2.0
// Many processes and threads racing on the same keys compile each key exactly once.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cache/disk_cache.h"
#include "tests/cache/test_support.h"

using namespace kjit::cache;
using namespace kjit::cache::testing;

namespace {

constexpr int kProcesses = 4;
constexpr int kThreads = 4;
constexpr int kKeys = 12;

std::string key_of(int k) { return R"({"kernel":"softmax","rows":)" + std::to_string(k) + "}"; }
std::string payload_of(int k) { return "cubin-for-key-" + std::to_string(k) + std::string(4096, 'c'); }

// The runtime's pattern. A "compile" leaves a marker file named after the key, so the parent
// can count compiles across every process and thread. Returns the number of failures.
int compile_all(DiskCache& cache, const std::string& markers, int worker) {
  int failures = 0;
  for (int i = 0; i < kKeys; ++i) {
    const int k = (i + worker) % kKeys;  // start at different keys to vary the interleaving
    const std::string key = key_of(k);
    if (cache.get("cubin", key)) continue;
    KeyLock lock = cache.lock("cubin", key);
    if (!lock.held()) ++failures;
    if (cache.get("cubin", key)) continue;  // someone compiled it while we waited
    const std::string marker = markers + "/" + std::to_string(k) + "." +
                               std::to_string(::getpid()) + "." + std::to_string(worker);
    int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd < 0) ++failures;
    else ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));  // a compile takes a while
    if (!cache.put("cubin", key, payload_of(k), {{"worker", worker}})) ++failures;
  }
  for (int k = 0; k < kKeys; ++k) {
    auto entry = cache.get("cubin", key_of(k));
    if (!entry || entry->payload != payload_of(k)) ++failures;
  }
  return failures;
}

// One child process: waits at the gate, then runs kThreads threads on one shared DiskCache.
[[noreturn]] void run_child(const std::string& dir, const std::string& markers, int gate, int p) {
  char go = 0;
  (void)!::read(gate, &go, 1);  // returns when the parent closes the write end
  DiskCache cache(dir);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { failures += compile_all(cache, markers, p * kThreads + t); });
  for (std::thread& thread : threads) thread.join();
  ::_exit(failures.load() == 0 ? 0 : 1);
}

}  // namespace

TEST_CASE("4 processes x 4 threads compile every key exactly once") {
  TempDir tmp;
  const std::string dir = tmp / "cache";
  const std::string markers = tmp / "markers";
  REQUIRE(::mkdir(markers.c_str(), 0700) == 0);
  int gate[2];
  REQUIRE(::pipe(gate) == 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(gate[1]);
      run_child(dir, markers, gate[0], p);
    }
    children.push_back(child);
  }
  ::close(gate[0]);
  ::close(gate[1]);  // opens the gate for every child at once
  for (pid_t child : children) {
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }

  std::map<int, int> compiles;
  for (const std::string& name : list_folder(markers)) compiles[std::stoi(name)]++;
  CHECK(compiles.size() == kKeys);
  for (const auto& item : compiles) {
    const auto& key = item.first;
    const auto& count = item.second;
    INFO("key " << key);
    CHECK(count == 1);
  }

  DiskCache cache(dir);
  VerifyReport report = cache.verify();
  CHECK(report.checked == kKeys);
  CHECK(report.ok == kKeys);
  CHECK(report.removed == 0);
  CHECK(report.reasons.empty());
  CHECK(find_files(dir, ".tmp").empty());
}

TEST_CASE("threads of one process exclude each other through KeyLock") {
  TempDir tmp;
  const std::string path = tmp / "one.lock";
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> unheld{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 40; ++i) {
        KeyLock lock = KeyLock::acquire(path);
        if (!lock.held()) ++unheld;
        if (inside.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        inside.fetch_sub(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(overlaps.load() == 0);
  CHECK(unheld.load() == 0);
}

TEST_CASE("a waiter survives the lock file being removed under it") {
  TempDir tmp;
  const std::string path = tmp / "k.lock";
  KeyLock first = KeyLock::acquire(path);
  REQUIRE(first.held());
  std::atomic<bool> second_held{false};
  std::thread waiter([&] {
    KeyLock second = KeyLock::acquire(path);
    second_held = second.held();
    // While the waiter holds the re-created file, nobody else may get it.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the waiter block on the old inode
  first.remove_and_unlock();
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK_FALSE(KeyLock::try_acquire(path).held());
  waiter.join();
  CHECK(second_held.load());
  CHECK(KeyLock::try_acquire(path).held());
}
