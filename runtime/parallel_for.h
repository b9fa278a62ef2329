// SPDX-License-Identifier: Apache-2.0
// The one fork-join loop of the project: NVRTC compiles, output checks and test batches run
// their independent items on a few threads through it.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

namespace kjit {

/// The machine's hardware threads, at least 1.
int hardware_threads() noexcept;

/// Threads a loop of `count` items asked for `threads` uses: `threads` (0 or less: the
/// hardware's), no more than `count`, at least 1.
int parallel_workers(std::size_t count, int threads) noexcept;

namespace detail {
/// A borrowed callable: the loop's body lives on the caller's stack for the whole loop.
struct IndexBody {
  void* object;
  void (*call)(void* object, std::size_t index, int worker);
};
void run_parallel(std::size_t count, int threads, IndexBody body);
}  // namespace detail

/// Calls body(index, worker) for every index in [0, count), each exactly once, on
/// parallel_workers(count, threads) threads; `worker` in [0, that count) names the thread, so a
/// caller can keep per-thread state in a vector. The calling thread is worker 0; with one worker
/// every index runs on it, in order. Indices are handed out one at a time, so uneven items
/// balance. Once a body throws, no further index starts; the first exception is rethrown after
/// every thread has joined.
template <typename Body>
void parallel_for_workers(std::size_t count, int threads, Body&& body) {
  using Stored = std::remove_reference_t<Body>;
  detail::IndexBody erased{const_cast<void*>(static_cast<const void*>(&body)),
                           [](void* object, std::size_t index, int worker) {
                             (*static_cast<Stored*>(object))(index, worker);
                           }};
  detail::run_parallel(count, threads, erased);
}

/// Calls body(index) for every index in [0, count); see parallel_for_workers.
template <typename Body>
void parallel_for(std::size_t count, int threads, Body&& body) {
  parallel_for_workers(count, threads, [&body](std::size_t index, int) { body(index); });
}

}  // namespace kjit
