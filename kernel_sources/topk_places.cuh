// SPDX-License-Identifier: Apache-2.0
// Exact output places by counting, for a few hundred candidates: a key's place in the row is
// the number of candidate keys above it, since the candidates hold every key above any of
// them. No sort and no barrier per step. Keys are distinct, so places are too.
#pragma once

#include "reduce.cuh"
#include "topk_keys.cuh"

namespace kjit {

/// The place of a listed key below the bound: it cannot win.
constexpr int kNoPlace = 0x7fffffff;

/// places[i] = the number of keys of pool[0, n_pool) greater than mine[i], for mine[i] >=
/// bound; kNoPlace otherwise. A warp takes 32 pool keys and 32 listed keys at a time, one of
/// each per lane, in registers: each listed key in turn is shuffled to the warp and its count of
/// pool keys above it taken with one vote, with no memory access between the steps. Call with
/// the whole block.
template <int Threads>
__device__ void count_places(const TopkKey* mine, int n_mine, const TopkKey* pool, int n_pool,
                             TopkKey bound, int* places) {
  for (int i = threadIdx.x; i < n_mine; i += Threads) places[i] = mine[i] >= bound ? 0 : kNoPlace;
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  const int warp = static_cast<int>(threadIdx.x / 32);
  constexpr int kWarps = Threads / 32;
  const int pool_chunks = (n_pool + 31) / 32, mine_chunks = (n_mine + 31) / 32;
  for (int unit = warp; unit < pool_chunks * mine_chunks; unit += kWarps) {
    const int j = unit % pool_chunks * 32 + static_cast<int>(lane);
    const int i = unit / pool_chunks * 32 + static_cast<int>(lane);
    const TopkKey held = j < n_pool ? pool[j] : 0;  // 0 is below every key
    const TopkKey listed = i < n_mine ? mine[i] : ~0ull;
    int above_mine = 0;
#pragma unroll 8
    for (int t = 0; t < 32; ++t) {
      const TopkKey key = __shfl_sync(0xffffffffu, listed, t);
      const int above = __popc(__ballot_sync(0xffffffffu, held > key));
      if (lane == static_cast<unsigned>(t)) above_mine = above;
    }
    if (i < n_mine && above_mine > 0 && listed >= bound) atomicAdd(&places[i], above_mine);
  }
  __syncthreads();
}

/// Copies the keys >= bound of every cluster block's list (at the same offset `lists` in each
/// block, list_count[b] keys in block b, at most ListCap) into this block's `pool`; returns how
/// many. The counter `*pool_count` is zero on entry. Every remote read of a thread is issued
/// before the first is used, so the block waits for the cluster's network about once. Call
/// with the whole block, after a cluster barrier that follows the last write to the lists.
template <int Threads, int Blocks, int ListCap>
__device__ int gather_pool(const TopkKey* lists, const int* list_count, TopkKey bound,
                           TopkKey* pool, int* pool_count) {
  constexpr int kSlots = Blocks * ListCap;
  constexpr int kPerThread = (kSlots + Threads - 1) / Threads;
  TopkKey got[kPerThread];
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    const int slot = r * Threads + static_cast<int>(threadIdx.x);
    const int block = slot / ListCap, at = slot % ListCap;
    got[r] = 0;
    if (slot < kSlots && at < list_count[block])
      got[r] = load_cluster_u64(cluster_element(lists, static_cast<unsigned>(block), at));
  }
  const unsigned lane = threadIdx.x % 32;
#pragma unroll
  for (int r = 0; r < kPerThread; ++r) {
    const bool keep = got[r] != 0 && got[r] >= bound;
    const unsigned keepers = __ballot_sync(0xffffffffu, keep);
    if (keepers == 0) continue;
    const int leader = __ffs(keepers) - 1;
    int first = 0;
    if (lane == static_cast<unsigned>(leader)) first = atomicAdd(pool_count, __popc(keepers));
    first = __shfl_sync(0xffffffffu, first, leader);
    if (keep) pool[first + __popc(keepers & ((1u << lane) - 1u))] = got[r];
  }
  __syncthreads();
  return *pool_count;
}

}  // namespace kjit
