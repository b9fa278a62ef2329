// SPDX-License-Identifier: Apache-2.0
// The resident top-K kernel's last step: the keys at or above the threshold staged where they
// are placed (block 0 alone, every block, or a block's own sorted list), and block 0 or every
// block writing its winners.
#pragma once

#include "reduce.cuh"
#include "topk_keys.cuh"
#include "topk_output.cuh"
#include "topk_params.cuh"
#include "topk_ranked_lists.cuh"
#include "topk_resident_slice.cuh"

namespace kjit {

/// Copies the warp's kept keys (`mine` of this lane's, `through_me` its inclusive prefix over
/// the warp) to block 0's `candidates`, in no particular order, at places the warp reserves
/// with one atomic on block 0's counter: no block barrier and no block-wide prefix, since block
/// 0 places every candidate of the row and needs no block's own range. Returns 0 (the block's
/// range is not used), and 0 in `at`.
template <int Pack, int Threads, int Packs, int Cluster, typename Kept>
__device__ __forceinline__ int stage_warp_to_block0(const ResidentSlice<Pack, Threads, Packs>& s,
                                                    Kept kept, int mine, int through_me,
                                                    TopkKey* candidates, ResidentState& state,
                                                    int& at) {
  at = 0;
  const unsigned lane = threadIdx.x % 32;
  const int warp_total = __shfl_sync(0xffffffffu, through_me, 31);
  if (warp_total == 0) return 0;
  unsigned base = 0;
  if (lane == 0) {
    if constexpr (Cluster == 1) base = atomicAdd(&state.gathered, warp_total);
    else base = atomic_add_cluster_u32(cluster_address(&state.gathered, 0), warp_total);
  }
  int slot = static_cast<int>(__shfl_sync(0xffffffffu, base, 0)) + through_me - mine;
  if (mine == 0) return 0;
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) {
      if (!kept(u, i)) continue;
      store_everywhere<Cluster>(candidates, slot, s.key(u, i), 0, Cluster);
      ++slot;
    }
  return 0;
}

/// stage_candidates for the keys that `kept(u, i)` selects.
template <int Pack, int Threads, int Packs, int Cluster, typename Kept>
__device__ __forceinline__ int stage_kept(const ResidentSlice<Pack, Threads, Packs>& s, Kept kept,
                                          TopkKey* staged, TopkKey* candidates,
                                          ResidentState& state, int& at, bool to_block0) {
  int mine = 0;
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) mine += kept(u, i) ? 1 : 0;
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int through_me = mine;  // inclusive prefix over the warp's lanes
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const int below = __shfl_up_sync(0xffffffffu, through_me, offset);
    if (lane >= static_cast<unsigned>(offset)) through_me += below;
  }
  if (to_block0 && staged == nullptr)
    return stage_warp_to_block0<Pack, Threads, Packs, Cluster>(s, kept, mine, through_me,
                                                                     candidates, state, at);
  if (lane == 31) state.warp_count[warp] = through_me;
  __syncthreads();
  if (warp == 0) {
    // Warp offsets in the staging, and the block's places in the cluster's buffers.
    constexpr int kWarps = Threads / 32;
    const int count = lane < kWarps ? state.warp_count[lane] : 0;
    int before = count;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const int below = __shfl_up_sync(0xffffffffu, before, offset);
      if (lane >= static_cast<unsigned>(offset)) before += below;
    }
    if (lane < kWarps) state.warp_count[lane] = before - count;
    if (lane == 31) {
      unsigned base = 0;
      if (before > 0) {
        if constexpr (Cluster == 1) base = atomicAdd(&state.gathered, before);
        else base = atomic_add_cluster_u32(cluster_address(&state.gathered, 0), before);
      }
      state.staged_at = static_cast<int>(base);
      state.staged_count = before;
    }
  }
  __syncthreads();
  at = state.staged_at;
  const int count = state.staged_count;
  if (mine > 0) {
    int slot = state.warp_count[warp] + through_me - mine;
#pragma unroll
    for (int u = 0; u < Packs; ++u)
#pragma unroll
      for (int i = 0; i < Pack; ++i) {
        if (!kept(u, i)) continue;
        if (staged != nullptr) staged[slot] = s.key(u, i);
        else store_everywhere<Cluster>(candidates, at + slot, s.key(u, i), 0,
                                             to_block0 ? Cluster : 1);
        ++slot;
      }
  }
  if (staged != nullptr) __syncthreads();
  return count;
}

/// Reserves places for this block's keys >= threshold in the cluster's candidate buffers, with
/// one atomic on block 0's counter (one round trip to block 0 a block), and copies them, in no
/// particular order, into `staged` or, when that is null, straight to their places in the
/// `candidates` of every block. Returns the count, and the first reserved place in `at`. Keys
/// for block 0 alone (`to_block0`) go a warp at a time (stage_warp_to_block0): two block
/// barriers and a round trip fewer.
template <int Pack, int Threads, int Packs, int Cluster>
__device__ __forceinline__ int stage_candidates(const ResidentSlice<Pack, Threads, Packs>& s,
                                                TopkKey threshold, TopkKey* staged,
                                                TopkKey* candidates, ResidentState& state,
                                                int& at, bool to_block0) {
  // A threshold cut at a bin edge (the usual case: its column half is 0) is a compare of the
  // value bits alone, where building every value's key made this step instruction-bound. The
  // test is chosen once for the step: chosen value by value, its branches slowed the count of
  // kept values and the warps whose lanes held candidates (docs/experiments/top-k-resident.md).
  if (static_cast<unsigned>(threshold) == 0u) {  // the same in every thread
    const unsigned threshold_bits = static_cast<unsigned>(threshold >> 32);
    const unsigned value_floor = threshold_bits > 0u ? threshold_bits : 1u;  // bits 0: no value
    return stage_kept<Pack, Threads, Packs, Cluster>(
        s, [&](int u, int i) { return s.ordered[u][i] >= value_floor; }, staged, candidates,
        state, at, to_block0);
  }
  return stage_kept<Pack, Threads, Packs, Cluster>(
      s,
      [&](int u, int i) {
        const TopkKey key = s.key(u, i);
        return key != 0 && key >= threshold;
      },
      staged, candidates, state, at, to_block0);
}

/// Block 0's last step for few candidates (keys[0, n), unsorted, every key of the row above the
/// threshold): a key's place is the number of keys above it, and the key is written there if
/// that is below k_row. A warp takes 32 keys, one a lane, and passes every key of the list
/// through its lanes by shuffles, 32 at a time, so only the warps that hold keys work and no
/// block barrier follows: quicker than the whole block (a group of lanes a key, a barrier, then
/// the writes) or one thread a key reading the list from shared memory.
template <typename Idx, int Threads>
__device__ __forceinline__ void place_and_write_few(const TopkParams& p, long long row, int k_row,
                                                    const TopkKey* keys, int n,
                                                    const ResidentState& state) {
  const unsigned lane = threadIdx.x % 32;
  for (int first = static_cast<int>(threadIdx.x / 32) * 32; first < n; first += Threads) {
    const int i = first + static_cast<int>(lane);
    const TopkKey key = i < n ? keys[i] : ~0ull;
    int above = 0;
    for (int chunk = 0; chunk < n; chunk += 32) {
      const int j = chunk + static_cast<int>(lane);
      const TopkKey passed = j < n ? keys[j] : 0ull;  // 0 is below every key
#pragma unroll
      for (int t = 0; t < 32; ++t) above += __shfl_sync(0xffffffffu, passed, t) > key ? 1 : 0;
    }
    if (i < n && above < k_row) write_slot<Idx>(p, row, above, key, state.row_max, state.row_sum);
  }
}

/// Writes this block's winners: keys[j] for j in [at, at + m), at the row's place
/// places[j - first] when that is below k_row. With KJIT_TOPK_RENORM the norm is the winners'
/// mass: summed here when `all_placed` (the places cover every candidate of the row; the same
/// in every block), or else summed over the cluster (one more cluster barrier) in block order,
/// so that it does not depend on timing.
template <typename Idx, int Threads, int Cluster>
__device__ void write_own_winners(const TopkParams& p, long long row, int k_row,
                                  const TopkKey* keys, const int* places, int first, int placed,
                                  bool all_placed, int at, int m, unsigned rank,
                                  ResidentState& state) {
  const float row_max = state.row_max, c = p.log2e_over_t;
  float norm = state.row_sum;
  if (p.flags & kTopkFlagRenorm) {
    float mass = 0.0f;
    for (int j = first + static_cast<int>(threadIdx.x); j < first + placed; j += Threads)
      if (places[j - first] < k_row) mass += fast_exp2((key_value(keys[j]) - row_max) * c);
    norm = block_all_reduce<Threads>(mass, SumOp());
    if (!all_placed) {
      publish_mass<Cluster>(state.lists, rank, norm);
      row_barrier<Cluster>();
      norm = 0.0f;
#pragma unroll
      for (int r = 0; r < Cluster; ++r) norm += state.lists.mass[r];
    }
  }
  for (int j = at + static_cast<int>(threadIdx.x); j < at + m; j += Threads)
    if (places[j - first] < k_row) write_slot<Idx>(p, row, places[j - first], keys[j], row_max, norm);
}

}  // namespace kjit
