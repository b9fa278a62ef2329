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

/// Shared memory of the consumer reductions. A call may follow another at once: a thread can
/// only write a partial after every thread has passed the barrier that ends the last call.
template <int Threads>
struct ConsumerScratch {
  OnlineStats partial_stats[Threads / 32];
  OnlineStats stats;
  float partial[Threads / 32];
  float value;
};

/// All-reduce of one float over the consumer threads.
template <int Threads, typename Op>
__device__ __forceinline__ float consumer_all_reduce(float v, Op op, ConsumerScratch<Threads>& scratch) {
  v = warp_all_reduce<32>(v, op);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch.partial[warp] = v;
  consumer_sync<Threads>();
  if (warp == 0) {
    float w = lane < Threads / 32 ? scratch.partial[lane] : Op::identity();
    w = warp_all_reduce<32>(w, op);
    if (lane == 0) scratch.value = w;
  }
  consumer_sync<Threads>();
  return scratch.value;
}

/// Merges (max, sum) pairs over the consumer threads.
template <int Threads>
__device__ __forceinline__ OnlineStats consumer_merge(OnlineStats s, ConsumerScratch<Threads>& scratch) {
  s = warp_merge<32>(s);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) scratch.partial_stats[warp] = s;
  consumer_sync<Threads>();
  if (warp == 0) {
    OnlineStats w = lane < Threads / 32 ? scratch.partial_stats[lane] : OnlineStats::empty();
    w = warp_merge<32>(w);
    if (lane == 0) scratch.stats = w;
  }
  consumer_sync<Threads>();
  return scratch.stats;
}

}  // namespace kjit
