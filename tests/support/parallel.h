// SPDX-License-Identifier: Apache-2.0
// A fork-join loop for the suites: NVRTC compiles on a pool, host-side generation and checking
// of large batches, and many independent GPU cases in flight at once so that compiles overlap.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace kjit::test {

/// Worker threads to use: the machine's cores, at most `cap`.
inline unsigned worker_count(unsigned cap) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::max(1u, std::min(cores, cap));
}

/// Calls body(i) for i in [0, count) on `threads` threads; indices are handed out one at a
/// time, so uneven items balance. The first exception is rethrown after every thread joined.
template <typename Body>
void parallel_for(std::size_t count, unsigned threads, Body body) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned used = static_cast<unsigned>(std::min<std::size_t>(threads, count));
  for (unsigned t = 1; t < used; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kjit::test
