// SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/parallel_for.h"

using namespace kjit;

TEST_CASE("every index runs exactly once") {
  for (int threads : {1, 2, 4, 0}) {
    for (std::size_t count : {std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
      std::vector<std::atomic<int>> runs(count);
      parallel_for(count, threads, [&](std::size_t i) { ++runs[i]; });
      int wrong = 0;
      for (const auto& r : runs) wrong += r.load() != 1;
      CHECK_MESSAGE(wrong == 0, count << " indices on " << threads << " threads");
    }
  }
}

TEST_CASE("no index means no call") {
  int calls = 0;
  parallel_for(0, 4, [&](std::size_t) { ++calls; });
  parallel_for(0, 0, [&](std::size_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("one thread runs every index in order on the calling thread") {
  std::vector<std::size_t> order;
  const auto caller = std::this_thread::get_id();
  bool elsewhere = false;
  parallel_for(50, 1, [&](std::size_t i) {
    order.push_back(i);
    elsewhere |= std::this_thread::get_id() != caller;
  });
  REQUIRE(order.size() == 50);
  for (std::size_t i = 0; i < order.size(); ++i) CHECK(order[i] == i);
  CHECK_FALSE(elsewhere);
}

TEST_CASE("the work is spread over the threads asked for, the caller among them") {
  // Each index waits until four threads have joined in, so the loop only ends if four run.
  std::mutex mutex;
  std::set<std::thread::id> seen;
  std::atomic<int> arrived{0};
  parallel_for(4, 4, [&](std::size_t) {
    {
      std::lock_guard<std::mutex> guard(mutex);
      seen.insert(std::this_thread::get_id());
    }
    ++arrived;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (arrived.load() < 4 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  });
  CHECK(seen.size() == 4);
  CHECK(seen.count(std::this_thread::get_id()) == 1);
}

TEST_CASE("worker numbers stay below parallel_workers and name one thread each") {
  const std::size_t count = 200;
  const int threads = 3;
  const int workers = parallel_workers(count, threads);
  CHECK(workers == 3);
  std::vector<std::thread::id> owner(static_cast<std::size_t>(workers));
  std::mutex mutex;
  bool mixed = false, out_of_range = false;
  parallel_for_workers(count, threads, [&](std::size_t, int worker) {
    std::lock_guard<std::mutex> guard(mutex);
    if (worker < 0 || worker >= workers) {
      out_of_range = true;
      return;
    }
    auto& id = owner[static_cast<std::size_t>(worker)];
    if (id == std::thread::id()) id = std::this_thread::get_id();
    mixed |= id != std::this_thread::get_id();
  });
  CHECK_FALSE(out_of_range);
  CHECK_FALSE(mixed);
}

TEST_CASE("parallel_workers: 0 asks for the hardware, never more than the items, at least 1") {
  CHECK(hardware_threads() >= 1);
  CHECK(parallel_workers(1000, 0) == std::min(1000, hardware_threads()));
  CHECK(parallel_workers(1000, -3) == std::min(1000, hardware_threads()));
  CHECK(parallel_workers(2, 8) == 2);
  CHECK(parallel_workers(0, 8) == 1);
  CHECK(parallel_workers(100, 5) == 5);
}

TEST_CASE("the first exception comes back after every thread stopped") {
  for (int threads : {1, 4}) {
    std::atomic<int> running{0};
    std::atomic<int> after_join{-1};
    std::atomic<std::size_t> started{0};
    auto body = [&](std::size_t i) {
      ++started;
      ++running;
      if (i == 5) {
        --running;
        throw std::runtime_error("index 5");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --running;
    };
    try {
      parallel_for(100, threads, body);
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      after_join = running.load();
      CHECK(std::string(e.what()) == "index 5");
    }
    CHECK(after_join.load() == 0);  // no body was still running when it arrived
    // Indices are handed out in order, so once 5 threw only those already taken ran.
    CHECK(started.load() < 100);
    if (threads == 1) CHECK(started.load() == 6);
  }
}

TEST_CASE("of several exceptions exactly one comes back") {
  try {
    parallel_for(64, 4, [](std::size_t i) { throw static_cast<int>(i); });
    FAIL("no exception");
  } catch (int index) {
    CHECK(index >= 0);
    CHECK(index < 64);
  }
}
