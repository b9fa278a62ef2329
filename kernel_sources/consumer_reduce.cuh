// SPDX-License-Identifier: Apache-2.0
// Reductions over a group of consumer warps of a block that also runs a producer warp: group g
// (threads g * Threads .. (g + 1) * Threads - 1) meets at named barrier 1 + g, which the producer
// never joins (it may be blocked on a copy, or gone), nor the other group.
#pragma once

#include "reduce.cuh"
#include "row_math.cuh"

namespace kjit {

/// A barrier of consumer group `group` only (0 or 1). The barrier's number is an immediate in
/// each branch, so ptxas counts two barriers, not all sixteen.
template <int Threads>
__device__ __forceinline__ void consumer_sync(int group) {
  if (group == 0) asm volatile("bar.sync 1, %0;" ::"n"(Threads) : "memory");
  else asm volatile("bar.sync 2, %0;" ::"n"(Threads) : "memory");
}

/// A consumer group's barrier, as a functor for the reductions over warps.
template <int Threads>
struct ConsumerSync {
  int group;
  __device__ __forceinline__ void operator()() const { consumer_sync<Threads>(group); }
};

/// Shared memory of the consumer reductions.
template <int Threads>
struct ConsumerScratch {
  AlternatingWarpStats<Threads> stats;
  WarpPartials<Threads> values;
};

/// All-reduce of one float over the threads of consumer group `group` (each group its own scratch).
template <int Threads, typename Op>
__device__ __forceinline__ float consumer_all_reduce(float v, Op op, ConsumerScratch<Threads>& scratch, int group) {
  return warps_all_reduce<Threads>(v, op, scratch.values, ConsumerSync<Threads>{group});
}

/// Merges (max, sum) pairs over the threads of consumer group `group` with one barrier
/// (warps_merge_once; `call`: the group's count of calls).
template <int Threads>
__device__ __forceinline__ OnlineStats consumer_merge(OnlineStats s, ConsumerScratch<Threads>& scratch, int group,
                                                      long long call) {
  return warps_merge_once<Threads>(s, scratch.stats, call, ConsumerSync<Threads>{group});
}

}  // namespace kjit
