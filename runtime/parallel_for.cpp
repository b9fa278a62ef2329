// SPDX-License-Identifier: Apache-2.0
#include "runtime/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace kjit {

int hardware_threads() noexcept {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int parallel_workers(std::size_t count, int threads) noexcept {
  const int wanted = threads > 0 ? threads : hardware_threads();
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(wanted, count)));
}

namespace detail {
namespace {

/// What the workers of one loop share.
class Loop {
 public:
  Loop(std::size_t count, IndexBody body) : count_(count), body_(body) {}

  void work(int worker) noexcept {
    for (std::size_t i = next_++; i < count_ && !failed_.load(); i = next_++) {
      try {
        body_.call(body_.object, i, worker);
      } catch (...) {
        std::lock_guard<std::mutex> guard(mutex_);
        if (!failure_) failure_ = std::current_exception();
        failed_ = true;
      }
    }
  }

  void rethrow() const {
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  const std::size_t count_;
  const IndexBody body_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> failed_{false};
  std::mutex mutex_;  // guards failure_
  std::exception_ptr failure_;
};

}  // namespace

void run_parallel(std::size_t count, int threads, IndexBody body) {
  Loop loop(count, body);
  const int workers = parallel_workers(count, threads);
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(workers - 1));
  for (int worker = 1; worker < workers; ++worker) {
    try {
      pool.emplace_back([&loop, worker] { loop.work(worker); });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones running (this one included) do the rest
    }
  }
  loop.work(0);
  for (std::thread& thread : pool) thread.join();
  loop.rethrow();
}

}  // namespace detail
}  // namespace kjit
