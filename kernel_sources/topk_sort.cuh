// SPDX-License-Identifier: Apache-2.0
// A block-wide bitonic sort of TopkKeys in shared memory, descending. Steps whose pairs lie
// within 64 keys run in registers, a warp holding 64 keys two to a lane and exchanging them by
// shuffles, so a block barrier is paid only by the steps of stride 64 and more: 21 barriers
// for 2048 keys instead of 66.
#pragma once

#include "topk_keys.cuh"

namespace kjit {

/// The larger of a compared pair goes first in a descending run; `first` says which side this
/// value is on.
__device__ __forceinline__ TopkKey exchanged(TopkKey mine, TopkKey other, bool descending,
                                             bool first) {
  const bool take_larger = descending == first;
  return (other > mine) == take_larger ? other : mine;
}

__device__ __forceinline__ TopkKey shuffle_xor_key(TopkKey key, int mask) {
  const unsigned lo = __shfl_xor_sync(0xffffffffu, static_cast<unsigned>(key), mask);
  const unsigned hi = __shfl_xor_sync(0xffffffffu, static_cast<unsigned>(key >> 32), mask);
  return (static_cast<TopkKey>(hi) << 32) | lo;
}

/// Steps of stride `from` (<= 32) down to 1 of bitonic run `run`, in registers, for the keys
/// at `at` (the low half of a 64-key chunk, in lane order) and `at + 32` (the high half).
__device__ __forceinline__ void register_steps(TopkKey& low, TopkKey& high, int at, int run,
                                               int from) {
  const bool low_descending = (at & run) == 0;
  const bool high_descending = ((at + 32) & run) == 0;  // differs from low's in runs of 32 only
  if (from == 32) {  // a lane's own pair; runs of 64 and more, so one direction
    const TopkKey a = low, b = high;
    low = exchanged(a, b, low_descending, true);
    high = exchanged(b, a, low_descending, false);
    from = 16;
  }
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (int stride = from; stride > 0; stride /= 2) {
    const bool first = (lane & stride) == 0;
    low = exchanged(low, shuffle_xor_key(low, stride), low_descending, first);
    high = exchanged(high, shuffle_xor_key(high, stride), high_descending, first);
  }
}

/// Every 64-key chunk of the block's warps: the steps of `run` from stride `from` (<= 32) down,
/// or, with run == 0, whole runs 2 to 64 (each chunk sorted, directions alternating).
template <int Threads>
__device__ void chunk_pass(TopkKey* keys, int size, int run, int from) {
  constexpr int kWarps = Threads / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (int chunk = static_cast<int>(threadIdx.x / 32); chunk < size / 64; chunk += kWarps) {
    const int at = chunk * 64 + lane;
    TopkKey low = keys[at], high = keys[at + 32];
    if (run == 0) {
      for (int r = 2; r <= 64; r *= 2) register_steps(low, high, at, r, r / 2);
    } else {
      register_steps(low, high, at, run, from);
    }
    keys[at] = low;
    keys[at + 32] = high;
  }
  __syncthreads();
}

/// The steps of `run` at `stride` >= 64, through shared memory.
template <int Threads>
__device__ void shared_pass(TopkKey* keys, int size, int run, int stride) {
  for (int pair = threadIdx.x; pair < size / 2; pair += Threads) {
    const int lo = 2 * pair - (pair & (stride - 1));
    const int hi = lo + stride;
    const bool descending = (lo & run) == 0;
    const TopkKey a = keys[lo], b = keys[hi];
    if ((a < b) == descending) {
      keys[lo] = b;
      keys[hi] = a;
    }
  }
  __syncthreads();
}

/// Sorts keys[0, size) descending; size is a power of two. Call with the whole block, after a
/// barrier that follows the last write to the keys.
template <int Threads>
__device__ void bitonic_sort_descending(TopkKey* keys, int size) {
  if (size < 64) {
    for (int run = 2; run <= size; run *= 2)
      for (int stride = run / 2; stride > 0; stride /= 2) shared_pass<Threads>(keys, size, run, stride);
    return;
  }
  chunk_pass<Threads>(keys, size, 0, 0);
  for (int run = 128; run <= size; run *= 2) {
    for (int stride = run / 2; stride >= 64; stride /= 2) shared_pass<Threads>(keys, size, run, stride);
    chunk_pass<Threads>(keys, size, run, 32);
  }
}

}  // namespace kjit
