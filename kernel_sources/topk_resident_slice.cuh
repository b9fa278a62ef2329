// SPDX-License-Identifier: Apache-2.0
// The resident top-K kernel's row in registers: each block's slice as order-preserving bits,
// what a block keeps in shared memory, and the online statistics merged over the cluster.
#pragma once

#include "cluster_inbox.cuh"
#include "numeric.cuh"
#include "pack.cuh"
#include "reduce.cuh"
#include "topk_keys.cuh"
#include "topk_ranked_lists.cuh"
#include "topk_select.cuh"
#include "topk_stats.cuh"

namespace kjit {

/// A block's part of a row, as order-preserving bits (ordered_bits): pack u of thread t holds
/// columns begin + (u * Threads + t) * Pack + [0, Pack), and 0 past `end`, which no value maps
/// to. Keys are formed where they are used, from the bits and the column: keeping 64-bit keys
/// would double the registers.
template <int Pack, int Threads, int Packs>
struct ResidentSlice {
  unsigned ordered[Packs][Pack];
  int begin;
  int end;

  __device__ __forceinline__ int col(int u, int i) const {
    return begin + (u * Threads + static_cast<int>(threadIdx.x)) * Pack + i;
  }
  __device__ __forceinline__ TopkKey key(int u, int i) const {
    const unsigned bits = ordered[u][i];
    return bits == 0 ? 0 : (static_cast<TopkKey>(bits) << 32) | static_cast<unsigned>(~col(u, i));
  }
};

/// The first round's histogram: the top 16 bits of the order-preserving bits, over four
/// consecutive 8-bit bins taken modulo 4 (a window that wraps; see count_window).
constexpr int kWindowBins = 1024;

/// A block's statistics and largest order-preserving bits, as it sends them to every block.
struct alignas(16) BlockSummary {
  float max;
  float sum;
  unsigned top;
  unsigned unused;
};

/// Whether a cluster of this many blocks exchanges its first round's counts and its summaries
/// through inboxes (exchange_window) rather than stores and a cluster barrier. Every add sent
/// to an inbox completes its bytes on the receiver's one mbarrier: with 16 blocks, each
/// receiving every block's adds, that cost as much as the barrier saved, where fewer blocks
/// gained (docs/experiments/top-k-resident.md).
template <int Cluster>
__device__ __forceinline__ constexpr bool exchanges_through_inbox() {
  return Cluster > 1 && Cluster < 16;
}

/// What one block keeps in static shared memory.
struct ResidentState {
  // Histograms are read 16 bytes at a time (load_lane_span, wide).
  alignas(16) unsigned counts[256];     ///< this block's counts of a digit; all zero between uses
  alignas(16) unsigned totals[2][256];  ///< the cluster's counts, by round parity: every block
                                        ///< adds its counts into every block's
  alignas(16) unsigned window_counts[kWindowBins];  ///< the same for the first round
  alignas(16) unsigned window_totals[kWindowBins];
  RankedLists lists;            ///< every block's sorted candidates in `candidates`
  unsigned gathered;            ///< (block 0) candidate places the blocks have reserved so far
  int staged_at;                ///< this block's first reserved place
  int staged_count;             ///< and its number of candidates
  unsigned floor_bits;          ///< this row's window_floor, then its block_floor_bits
  BlockSummary blocks[16];      ///< every block's summary, each sent by its block
  ClusterInbox window_inbox;    ///< where the summaries and the first round's counts land
  TemperedStats own_stats;      ///< this block's statistics (merge_warp_stats)
  float row_max;                ///< the row's statistics
  float row_sum;
  unsigned row_top;             ///< and its largest order-preserving bits
  float warp_max[32];
  float warp_sum[32];
  unsigned warp_top[32];
  DigitChoice window_choice;    ///< the first round's outcome, chosen by warp 0
  int warp_count[32];           ///< keys each warp gathers, then where each warp's go
  SelectScratch sort;           ///< sorting a block's share of many candidates
};

/// Loads this thread's share of the row into `s` and returns its statistics, and its largest
/// order-preserving bits in `top` (0 if it has no element); NaN in the sum if any value is NaN,
/// so that it poisons the row. The max is read off the largest bits, which order NaN above
/// every number: one compare a value serves both. Every block's slice holds at least
/// `SureCols` columns, so the packs below that need no test against the slice's end.
template <int SureCols, typename In, int Pack, int Threads, int Packs>
__device__ __forceinline__ TemperedStats load_slice(const In* row, float c,
                                                    ResidentSlice<Pack, Threads, Packs>& s,
                                                    unsigned& top) {
  float values[Packs][Pack];
  top = 0;
#pragma unroll
  for (int u = 0; u < Packs; ++u) {
    const bool whole = (u + 1) * Threads * Pack <= SureCols;  // known once unrolled
    const int col = s.col(u, 0), in_slice = whole ? Pack : s.end - col;
    load_pack<In, Pack>(row, col, col + in_slice, neg_inf(), values[u]);
#pragma unroll
    for (int i = 0; i < Pack; ++i) {
      s.ordered[u][i] = i < in_slice ? ordered_bits(values[u][i]) : 0u;
      top = s.ordered[u][i] > top ? s.ordered[u][i] : top;
    }
  }
  const float max = top == 0 ? neg_inf() : float_of_ordered(top);
  float sum = 0.0f;
  if (max != neg_inf()) {
#pragma unroll
    for (int u = 0; u < Packs; ++u)
#pragma unroll
      for (int i = 0; i < Pack; ++i) sum += fast_exp2((values[u][i] - max) * c);
  }
  return {max, sum};
}

/// The block's largest order-preserving bits (0 if it has no element; in every thread), with one
/// block barrier. They are exact where the statistics' max is not: a merge of maxima drops NaN.
/// The statistics wait: each warp pushes its own after counting its window (push_warp_stats),
/// and one warp merges them while another chooses the block's floor (merge_warp_stats), off
/// the way to the exchange that needs them, where warp 0 merging the warps' before the count
/// kept the block waiting at its next barrier.
template <int Threads>
__device__ __forceinline__ unsigned block_top_bits(unsigned thread_top, ResidentState& state) {
  const unsigned top = __reduce_max_sync(0xffffffffu, thread_top);
  const int lane = threadIdx.x % 32;
  if (lane == 0) state.warp_top[threadIdx.x / 32] = top;
  __syncthreads();
  constexpr int kWarps = Threads / 32;
  return __reduce_max_sync(0xffffffffu, lane < kWarps ? state.warp_top[lane] : 0u);
}

/// Each warp's statistics into shared memory, seen by the block after its next barrier.
__device__ __forceinline__ void push_warp_stats(TemperedStats mine, float c,
                                                ResidentState& state) {
  mine = warp_merge_tempered(mine, c);
  if (threadIdx.x % 32 == 0) {
    state.warp_max[threadIdx.x / 32] = mine.max;
    state.warp_sum[threadIdx.x / 32] = mine.sum;
  }
}

/// The block's statistics from its warps' (one warp, in every lane), after the barrier that
/// follows push_warp_stats.
template <int Threads>
__device__ __forceinline__ TemperedStats merge_warp_stats(float c, const ResidentState& state) {
  constexpr int kWarps = Threads / 32;
  const int lane = threadIdx.x % 32;
  const TemperedStats pushed = lane < kWarps
                                   ? TemperedStats{state.warp_max[lane], state.warp_sum[lane]}
                                   : TemperedStats::empty();
  return warp_merge_tempered(pushed, c);
}

/// Sends this block's statistics and largest bits to every block of the cluster (threads below
/// Cluster, in warp 0, which holds the statistics: one block each), completing on its
/// window inbox where the cluster exchanges through inboxes; a block alone keeps them.
template <int Cluster>
__device__ __forceinline__ void send_block_summary(TemperedStats stats, unsigned top,
                                                   unsigned rank, ResidentState& state) {
  if (threadIdx.x >= Cluster) return;
  const uint4 summary{__float_as_uint(stats.max), __float_as_uint(stats.sum), top, 0u};
  if constexpr (Cluster == 1) {
    state.blocks[0] = {stats.max, stats.sum, top, 0u};
  } else if constexpr (exchanges_through_inbox<Cluster>()) {
    send_16_bytes(state.blocks, static_cast<int>(rank), threadIdx.x, summary, state.window_inbox);
  } else {
    store_cluster_v4(cluster_element(state.blocks, threadIdx.x, static_cast<int>(rank)), summary);
  }
}

/// Merges the blocks' statistics into state.row_max, state.row_sum and state.row_top (one warp;
/// seen by the block after its next barrier). Call once every block's summary has landed.
template <int Cluster>
__device__ __forceinline__ void read_row_stats(float c, ResidentState& state) {
  const unsigned lane = threadIdx.x % 32;
  TemperedStats s = TemperedStats::empty();
  if (lane < Cluster) s = {state.blocks[lane].max, state.blocks[lane].sum};
  if constexpr (Cluster > 1) s = warp_merge_tempered(s, c);
  const unsigned top =
      __reduce_max_sync(0xffffffffu, lane < Cluster ? state.blocks[lane].top : 0u);
  if (lane == 0) {
    state.row_max = s.max;
    state.row_sum = s.sum;
    state.row_top = top;
  }
}

}  // namespace kjit
