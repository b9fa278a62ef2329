// SPDX-License-Identifier: Apache-2.0
// Reductions over the consumer warps of a block that also runs a producer warp: they meet at
// named barrier 1, which the producer never joins (it may be blocked on a copy, or gone).
#pragma once

#include "reduce.cuh"
#include "row_math.cuh"

namespace kjit {

/// A barrier of threads 0 .. Threads - 1 only.
template <int Threads>
__device__ __forceinline__ void consumer_sync() {
  asm volatile("bar.sync 1, %0;" ::"n"(Threads) : "memory");
}

/// The consumer threads' barrier, as a functor for the reductions over warps.
template <int Threads>
struct ConsumerSync {
  __device__ __forceinline__ void operator()() const { consumer_sync<Threads>(); }
};

/// Shared memory of the consumer reductions.
template <int Threads>
struct ConsumerScratch {
  WarpStats<Threads> stats;
  WarpPartials<Threads> values;
};

/// All-reduce of one float over the consumer threads.
template <int Threads, typename Op>
__device__ __forceinline__ float consumer_all_reduce(float v, Op op, ConsumerScratch<Threads>& scratch) {
  return warps_all_reduce<Threads>(v, op, scratch.values, ConsumerSync<Threads>());
}

/// Merges (max, sum) pairs over the consumer threads.
template <int Threads>
__device__ __forceinline__ OnlineStats consumer_merge(OnlineStats s, ConsumerScratch<Threads>& scratch) {
  return warps_merge<Threads>(s, scratch.stats, ConsumerSync<Threads>());
}

}  // namespace kjit
