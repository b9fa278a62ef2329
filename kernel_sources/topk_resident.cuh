// SPDX-License-Identifier: Apache-2.0
// Fused softmax + top-K with the row held in registers. A block, or on sm_90 a cluster of up to
// 16 blocks, loads its row once; every later step reads registers:
//  1. the online (max, sum) of the row, and each block's largest key;
//  2. the row's k-th largest key, by a radix select whose counts are summed over the cluster
//     through distributed shared memory. Its first round takes the top 16 bits at once, over
//     the row's largest key's 8-bit bin and the one below, at the cluster barrier that also
//     brings the statistics; on a language model's logits that round leaves between k and 2 k keys
//     at or above the chosen bin, and later 8-bit rounds (one cluster barrier each) are rare;
//  3. those keys written where they are placed: few (up to 128) into block 0, which counts
//     their places and writes the row; up to 256 into every block, each counting the places
//     of its own; more into block 0, which sorts them (k bucket 1024), or sorted a block's
//     share at a time into every block, where each block finds the row's place of its own keys
//     by binary search (topk_ranked_lists.cuh). Each writes its winners.
// So a few rows spread over many SMs, and a large k costs a sort of each block's share instead
// of a buffer that keeps overflowing while the row streams by (topk_softmax.cuh, for rows too
// many to hold).
#pragma once

#include "pack.cuh"
#include "reduce.cuh"
#include "topk_keys.cuh"
#include "topk_output.cuh"
#include "topk_params.cuh"
#include "topk_ranked_lists.cuh"
#include "topk_select.cuh"
#include "topk_shape.cuh"
#include "topk_sort.cuh"
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
  float block_max[16];          ///< every block's statistics, each pushed by its block
  float block_sum[16];
  unsigned block_top[16];       ///< and every block's largest order-preserving bits
  float row_max;                ///< the row's statistics
  float row_sum;
  float warp_max[32];
  float warp_sum[32];
  unsigned warp_top[32];
  DigitChoice window_choice;    ///< the first round's outcome, chosen by warp 0
  int warp_count[32];           ///< keys each warp gathers, then where each warp's go
  SelectScratch sort;           ///< sorting a block's share of many candidates
};

/// Loads this thread's share of the row into `s` and returns its statistics; NaN in the sum if
/// any value is NaN, so that it poisons the row.
template <typename In, int Pack, int Threads, int Packs>
__device__ __forceinline__ TemperedStats load_slice(const In* row, float c,
                                                    ResidentSlice<Pack, Threads, Packs>& s) {
  float values[Packs][Pack];
#pragma unroll
  for (int u = 0; u < Packs; ++u)
    load_pack<In, Pack>(row, s.col(u, 0), s.end, neg_inf(), values[u]);
  float max = values[0][0];
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) max = max_propagate_nan(max, values[u][i]);
  float sum = 0.0f;
  if (max != neg_inf()) {
#pragma unroll
    for (int u = 0; u < Packs; ++u)
#pragma unroll
      for (int i = 0; i < Pack; ++i) sum += fast_exp2((values[u][i] - max) * c);
  }
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i)
      s.ordered[u][i] = s.col(u, i) < s.end ? ordered_bits(values[u][i]) : 0u;
  return {max, sum};
}

/// Counts, by their digit at `shift`, this block's keys at or above `floor` (value bits) whose
/// higher digits are `prefix`. The digits above 32 come from the value's bits alone; the
/// column's are needed only to part equal values (whose bits, then, are above the floor).
template <int Pack, int Threads, int Packs>
__device__ __forceinline__ void count_digits(const ResidentSlice<Pack, Threads, Packs>& s,
                                             int shift, TopkKey prefix, unsigned floor,
                                             unsigned* histogram) {
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) {
      bool counts;
      unsigned digit;
      if (shift >= 32) {
        const unsigned bits = s.ordered[u][i];
        counts = bits != 0 && bits >= floor &&
                 (shift == 56 || (bits >> (shift - 24)) == static_cast<unsigned>(prefix));
        digit = (bits >> (shift - 32)) & 255u;
      } else {
        const TopkKey key = s.key(u, i);
        counts = key != 0 && (key >> (shift + 8)) == prefix;
        digit = static_cast<unsigned>(key >> shift) & 255u;
      }
      // Few keys count (those at or above the floor, then those in the chosen bin): one atomic
      // each. A warp-wide vote per value to add equal digits at once cost more than it saved
      // (H100: one row of 128256 at k = 50, 13.8 -> 16.0 us; at k = 1024, 25 -> 31); a row of
      // equal values, every key in one bin, pays for it instead.
      if (counts) atomicAdd(&histogram[digit], 1u);
    }
}

/// Counts, by the top 16 of their order-preserving bits, this block's keys in the two 8-bit
/// bins up to its largest key's (`block_top`), into kWindowBins bins taken modulo 4 8-bit bins.
/// The row's window is the two bins up to its largest key's, M: a block whose largest is M or
/// M - 1 counts all its keys in the row's window, and one whose largest is M - 2 counts into
/// bins that the row's window does not read. Further down, bins alias: row_window detects it.
template <int Pack, int Threads, int Packs>
__device__ __forceinline__ void count_window(const ResidentSlice<Pack, Threads, Packs>& s,
                                             unsigned block_top, unsigned* histogram) {
  const unsigned low = (block_top > 0 ? block_top - 1 : 0) << 24;
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) {
      const unsigned bits = s.ordered[u][i];
      if (bits != 0 && bits >= low) atomicAdd(&histogram[(bits >> 16) % kWindowBins], 1u);
    }
}

/// The row's window of the first round: the top 8-bit bin M of its largest key, and whether
/// the window's totals are exact (every block's largest key within two bins of M, M >= 1).
/// From the statistics every block pushed; call with the whole warp.
template <int ClusterBlocks>
__device__ __forceinline__ bool row_window(const ResidentState& state, unsigned& top) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned mine = lane < ClusterBlocks ? state.block_top[lane] >> 24 : 0u;
  top = __reduce_max_sync(0xffffffffu, mine);
  const unsigned lowest = __reduce_min_sync(0xffffffffu, lane < ClusterBlocks ? mine : 255u);
  return top >= 1 && top - lowest <= 2;
}

/// Adds this block's counts into totals[first, first + Bins) of every cluster block (only bins
/// with keys, and of those only the ones that `publishes(bin)`) and zeroes them for the next
/// count. `totals` is the array's own start, so that the remote addresses are mapped from a
/// fixed one (see cluster_element). Call after a barrier that follows the count.
template <int Threads, int ClusterBlocks, int Bins = 256, typename Publishes>
__device__ __forceinline__ void publish_counts(unsigned* counts, unsigned* totals, int first,
                                               Publishes publishes) {
  for (int b = threadIdx.x; b < Bins; b += Threads) {
    const unsigned count = counts[b];
    if (count == 0) continue;
    counts[b] = 0;
    if (!publishes(b)) continue;
    if constexpr (ClusterBlocks == 1) {
      totals[first + b] = count;
    } else {
#pragma unroll
      for (int r = 0; r < ClusterBlocks; ++r)
        reduce_add_cluster_u32(cluster_element(totals, static_cast<unsigned>(r), first + b), count);
    }
  }
}

/// The block's statistics (in warp 0, which pushes them) and the largest of its
/// order-preserving bits (0 if it has no element; in every thread), with one block barrier. The
/// bits are exact where the statistics' max is not: a merge of maxima drops NaN.
template <int Pack, int Threads, int Packs>
__device__ __forceinline__ TemperedStats block_stats(const ResidentSlice<Pack, Threads, Packs>& s,
                                                     TemperedStats mine, float c,
                                                     ResidentState& state, unsigned& block_top) {
  unsigned top = 0;
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) top = s.ordered[u][i] > top ? s.ordered[u][i] : top;
  top = __reduce_max_sync(0xffffffffu, top);
  mine = warp_merge_tempered(mine, c);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    state.warp_max[warp] = mine.max;
    state.warp_sum[warp] = mine.sum;
    state.warp_top[warp] = top;
  }
  __syncthreads();
  constexpr int kWarps = Threads / 32;
  const bool listed = lane < kWarps;
  block_top = __reduce_max_sync(0xffffffffu, listed ? state.warp_top[lane] : 0u);
  if (warp != 0) return TemperedStats::empty();
  const TemperedStats merged = listed ? TemperedStats{state.warp_max[lane], state.warp_sum[lane]}
                                      : TemperedStats::empty();
  return warp_merge_tempered(merged, c);
}

/// Pushes this block's statistics and largest bits into every block of the cluster (threads
/// below ClusterBlocks, one block each): stores do not wait, where reading them later would.
template <int ClusterBlocks>
__device__ __forceinline__ void push_block_stats(TemperedStats stats, unsigned top, unsigned rank,
                                                 ResidentState& state) {
  if (threadIdx.x >= ClusterBlocks) return;
  if constexpr (ClusterBlocks == 1) {
    state.block_max[0] = stats.max;
    state.block_sum[0] = stats.sum;
    state.block_top[0] = top;
  } else {
    const int at = static_cast<int>(rank);
    store_cluster_f32(cluster_element(state.block_max, threadIdx.x, at), stats.max);
    store_cluster_f32(cluster_element(state.block_sum, threadIdx.x, at), stats.sum);
    store_cluster_u32(cluster_element(state.block_top, threadIdx.x, at), top);
  }
}

/// Merges the blocks' statistics into state.row_max and state.row_sum (one warp; seen by the
/// block after its next barrier). Call after a cluster barrier that follows their pushes.
template <int ClusterBlocks>
__device__ __forceinline__ void read_row_stats(float c, ResidentState& state) {
  const unsigned lane = threadIdx.x % 32;
  TemperedStats s = TemperedStats::empty();
  if (lane < ClusterBlocks) s = {state.block_max[lane], state.block_sum[lane]};
  if constexpr (ClusterBlocks > 1) s = warp_merge_tempered(s, c);
  if (lane == 0) {
    state.row_max = s.max;
    state.row_sum = s.sum;
  }
}

/// A lower bound of the row's k-th largest key, cut to a round-0 bin edge (the top 8 bits of
/// the order-preserving bits): the edge of the highest bin that, with the bins above it, holds
/// `need` of the block's thread maxima. Thread maxima are distinct elements, so the block alone
/// has `need` keys at or above it. 0 (no bound) when the block has fewer than `need` threads
/// with an element.
template <int Pack, int Threads, int Packs>
__device__ unsigned block_floor_bits(const ResidentSlice<Pack, Threads, Packs>& slice, int need,
                                     ResidentState& state) {
  unsigned top = 0;
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) top = slice.ordered[u][i] > top ? slice.ordered[u][i] : top;
  unsigned* const histogram = state.counts;
  add_to_histogram(histogram, top != 0, top >> 24);
  __syncthreads();
  if (threadIdx.x < 32) {
    const unsigned lane = threadIdx.x;
    unsigned bins[8], lane_total;
    const unsigned from_lane_up = load_lane_bins<true>(histogram, bins, lane_total);
#pragma unroll
    for (int b = 0; b < 8; ++b) histogram[lane * 8 + b] = 0;  // zero again for the select
    unsigned floor = 0;
    int running = static_cast<int>(from_lane_up - lane_total);
    if (running < need && running + static_cast<int>(lane_total) >= need) {
      for (int b = 7; b >= 0; --b) {
        running += static_cast<int>(bins[b]);
        if (running >= need) {
          floor = (lane * 8 + b) << 24;
          break;
        }
      }
    }
    floor = __reduce_max_sync(0xffffffffu, floor);
    if (lane == 0) state.floor_bits = floor;
  }
  __syncthreads();
  return state.floor_bits;
}

/// The 16-bit bin of the window (count_window's counts, this block's alone) that holds the
/// block's need-th largest key, or 0 where the window holds fewer. The row's need-th largest key
/// is at least every block's, so no bin below it is read when the row's is chosen: the block
/// publishes only the bins from it up. On logits of a language model at k = 50 that is a few
/// dozen bins where the window holds a few hundred, each added into every block of the
/// cluster (one row of 128256 over 16 blocks: ~1,500 ns of 11,000 publishing them all). Call
/// with the whole warp.
__device__ __forceinline__ unsigned window_floor(const unsigned* counts, unsigned block_top,
                                                 int need) {
  const unsigned top = block_top >> 24;
  if (top == 0) return 0;  // count_window's window then starts at 0: publish it all
  int above = 0;
  for (unsigned bin = top; bin + 1 >= top; --bin) {
    const DigitChoice choice = choose_in_span<8, true>(counts, (bin << 8) % kWindowBins,
                                                       kWindowBins - 1, bin << 8, above, need,
                                                       need);
    if (choice.found) return static_cast<unsigned>(choice.prefix);
    above = choice.above;
  }
  return 0;
}

/// The top 16 bits of the key that window bin `b` (the top 16 bits modulo kWindowBins) stands
/// for, in count_window's window below `block_top`.
__device__ __forceinline__ unsigned window_bin_bits(int b, unsigned block_top) {
  const unsigned top = block_top >> 24;
  const unsigned lowest = (top > 0 ? top - 1 : 0) << 8;
  return lowest + ((static_cast<unsigned>(b) - lowest) % kWindowBins);
}

/// The first round's choice from the window's totals (one warp): `found` is false where the
/// window cannot be read exactly or does not hold the need-th key.
template <int ClusterBlocks>
__device__ __forceinline__ DigitChoice choose_in_window(const ResidentState& state, int need,
                                                        int limit) {
  DigitChoice choice{0, 0, 0, false, false};
  unsigned top = 0;
  if (!row_window<ClusterBlocks>(state, top)) return choice;
  // The window's two 8-bit bins, the top one first: 256 bins a step keeps registers low.
  int above = 0;
  for (unsigned bin = top; bin + 1 >= top; --bin) {
    choice = choose_in_span<8, true>(state.window_totals, (bin << 8) % kWindowBins,
                                     kWindowBins - 1, bin << 8, above, need, limit);
    if (choice.found) break;
    above = choice.above;
  }
  return choice;
}

/// The row's threshold: a key with need <= (keys of the row >= it) <= limit; `selected` gets
/// their count. Every block chooses the same digits from the same totals.
///
/// The first round takes the top 16 bits at once, over the window of count_window, at the
/// barrier that also brings every block's statistics: on a language model's logits the k-th
/// largest key lies within two 8-bit bins of the largest, and one round and one cluster
/// barrier choose the threshold. Where the window misses it, or cannot be read exactly, the
/// select starts over one 8-bit digit a round, counting only keys at or above the block's floor
/// (block_floor_bits): every bin from the k-th largest key's up holds only such keys, so the
/// totals of those bins, all a choice reads, are exact, while most keys cost a compare instead
/// of a histogram update; every warp chooses the digit for itself, in registers, so no block
/// barrier follows the choice.
/// Totals are kept by round parity. A block reads only its own; the others add into its round-r
/// totals before the round's barrier, into its round-(r + 1) ones only after it, so it zeroes
/// the latter, once its warps have read them in round r - 1, before it arrives. The window's
/// totals are zeroed once read, before the row's last cluster barrier, after which the others
/// may add the next row's.
/// Call after count_window (`block_top` is the block's largest bits) and a block barrier.
template <int Pack, int Threads, int Packs, int ClusterBlocks>
__device__ TopkKey cluster_radix_select(const ResidentSlice<Pack, Threads, Packs>& slice,
                                        int need, int limit, float c, unsigned block_top,
                                        ResidentState& state, int& parity, int& selected) {
  if (threadIdx.x < 32) {
    const unsigned floor = window_floor(state.window_counts, block_top, need);
    if (threadIdx.x == 0) state.floor_bits = floor;
  }
  __syncthreads();
  const unsigned window_floor_bits = state.floor_bits;
  publish_counts<Threads, ClusterBlocks, kWindowBins>(
      state.window_counts, state.window_totals, 0,
      [&](int b) { return window_bin_bits(b, block_top) >= window_floor_bits; });
  row_barrier<ClusterBlocks>();
  // One warp chooses while another merges the statistics: every warp choosing for itself kept
  // the SM's issue slots busy for longer than a block barrier takes.
  const unsigned warp = threadIdx.x / 32;
  if (warp == 1) read_row_stats<ClusterBlocks>(c, state);
  if (warp == 0) {
    const DigitChoice choice = choose_in_window<ClusterBlocks>(state, need, limit);
    if (threadIdx.x == 0) state.window_choice = choice;
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kWindowBins; b += Threads) state.window_totals[b] = 0;
  const DigitChoice window = state.window_choice;
  if (window.done) {
    selected = window.selected;
    return window.prefix << 48;
  }
  int shift = window.found ? 40 : 56;
  TopkKey prefix = window.found ? window.prefix : 0;
  int above = window.found ? window.above : 0;
  // The same choice in every block: from the same totals and statistics.
  const unsigned floor = shift == 56 ? block_floor_bits(slice, need, state) : 0u;
  for (; shift >= 0; shift -= 8) {
    count_digits(slice, shift, prefix, floor, state.counts);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += Threads) state.totals[parity ^ 1][b] = 0;
    publish_counts<Threads, ClusterBlocks>(state.counts, &state.totals[0][0], parity * 256,
                                           [](int) { return true; });
    row_barrier<ClusterBlocks>();
    const DigitChoice choice =
        choose_digit_in_warp<true>(state.totals[parity], prefix, above, need, limit);
    parity ^= 1;
    if (choice.done) {
      selected = choice.selected;
      return choice.prefix << shift;
    }
    prefix = choice.prefix;
    above = choice.above;
  }
  return 0;  // not reached: keys are distinct, so the last digit leaves one key a bin
}

/// Copies the warp's kept keys (`mine` of this lane's, `through_me` its inclusive prefix over
/// the warp) to block 0's `candidates`, in no particular order, at places the warp reserves
/// with one atomic on block 0's counter: no block barrier and no block-wide prefix, since block
/// 0 places every candidate of the row and needs no block's own range. Returns 0 (the block's
/// range is not used), and 0 in `at`.
template <int Pack, int Threads, int Packs, int ClusterBlocks, typename Kept>
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
    if constexpr (ClusterBlocks == 1) base = atomicAdd(&state.gathered, warp_total);
    else base = atomic_add_cluster_u32(cluster_address(&state.gathered, 0), warp_total);
  }
  int slot = static_cast<int>(__shfl_sync(0xffffffffu, base, 0)) + through_me - mine;
  if (mine == 0) return 0;
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) {
      if (!kept(u, i)) continue;
      store_everywhere<ClusterBlocks>(candidates, slot, s.key(u, i), 0, ClusterBlocks);
      ++slot;
    }
  return 0;
}

/// Reserves places for this block's keys >= threshold in the cluster's candidate buffers, with
/// one atomic on block 0's counter (one round trip to block 0 a block), and copies them, in no
/// particular order, into `staged` or, when that is null, straight to their places in the
/// `candidates` of every block. Returns the count, and the first reserved place in `at`. Keys
/// for block 0 alone (`to_block0`) go a warp at a time (stage_warp_to_block0): two block
/// barriers and a round trip fewer, ~0.25 us of one row's ~10 on the H100.
template <int Pack, int Threads, int Packs, int ClusterBlocks>
__device__ __forceinline__ int stage_candidates(const ResidentSlice<Pack, Threads, Packs>& s,
                                                TopkKey threshold, TopkKey* staged,
                                                TopkKey* candidates, ResidentState& state,
                                                int& at, bool to_block0) {
  // A threshold cut at a bin edge (the usual case: its column half is 0) is a compare of the
  // value bits alone, where building every value's key made this step instruction-bound.
  const bool on_value_bits = static_cast<unsigned>(threshold) == 0u;  // the same in every thread
  const unsigned threshold_bits = static_cast<unsigned>(threshold >> 32);
  const unsigned value_floor = threshold_bits > 0u ? threshold_bits : 1u;  // bits 0: no value
  const auto kept = [&](int u, int i) {
    if (on_value_bits) return s.ordered[u][i] >= value_floor;
    const TopkKey key = s.key(u, i);
    return key != 0 && key >= threshold;
  };
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
    return stage_warp_to_block0<Pack, Threads, Packs, ClusterBlocks>(s, kept, mine, through_me,
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
        if constexpr (ClusterBlocks == 1) base = atomicAdd(&state.gathered, before);
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
        else store_everywhere<ClusterBlocks>(candidates, at + slot, s.key(u, i), 0,
                                             to_block0 ? ClusterBlocks : 1);
        ++slot;
      }
  }
  if (staged != nullptr) __syncthreads();
  return count;
}

/// Block 0's last step for few candidates (keys[0, n), unsorted, every key of the row above the
/// threshold): a key's place is the number of keys above it, and the key is written there if
/// that is below k_row. A warp takes 32 keys, one a lane, and passes every key of the list
/// through its lanes by shuffles, 32 at a time, so only the warps that hold keys work and no
/// block barrier follows. Spread over the whole block (a group of lanes a key, a barrier, then
/// the writes), the same step took ~1 us of one row's ~10 on the H100 (128256 columns at
/// k = 50 over 16 blocks); one thread a key reading the list from shared memory, ~0.9 us; this
/// way, ~0.7 us.
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
template <typename Idx, int Threads, int ClusterBlocks>
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
      publish_mass<ClusterBlocks>(state.lists, rank, norm);
      row_barrier<ClusterBlocks>();
      norm = 0.0f;
#pragma unroll
      for (int r = 0; r < ClusterBlocks; ++r) norm += state.lists.mass[r];
    }
  }
  for (int j = at + static_cast<int>(threadIdx.x); j < at + m; j += Threads)
    if (places[j - first] < k_row) write_slot<Idx>(p, row, places[j - first], keys[j], row_max, norm);
}

/// A cluster barrier split in two: every block arrives where it is built and waits at the first
/// wait(); later calls do nothing. In a block alone, a block barrier where it is built.
template <int ClusterBlocks>
class StartBarrier {
 public:
  __device__ StartBarrier() {
    if constexpr (ClusterBlocks > 1) cluster_arrive();
    else __syncthreads();
  }
  __device__ void wait() {
    if constexpr (ClusterBlocks > 1) {
      if (waited_) return;
      cluster_wait();
      waited_ = true;
    }
  }

 private:
  bool waited_ = false;
};

template <typename In, typename Idx, int Cols, int KBucket, int Pack, int Threads, int Packs,
          int ClusterBlocks>
__global__ void __launch_bounds__(Threads) topk_resident(const TopkParams params) {
  check_topk_shape<In, KBucket, Pack, Threads, ClusterBlocks>();
  static_assert(Packs * Pack <= 32, "topk_resident: at most 32 values a thread");
  constexpr int kSliceCols = topk_slice_cols<Cols, ClusterBlocks, Pack>();
  static_assert(Threads * Packs * Pack >= kSliceCols, "topk_resident: the slice must fit");
  // The cluster's candidates (at most kLimit), then this block's staged ones: a power of two
  // of them at most, as the bitonic sort of a large share needs.
  constexpr int kLimit = 2 * KBucket;
  constexpr int kMostUnsorted = 256;
  // Up to this many, block 0 places them all: sent to every block for each to place its own,
  // the copies made the block with most of them ~600 ns late at the next barrier (one row of
  // 128256 at k = 50 over 16 blocks), while one block counting the places of 256 took longer
  // than that (8 rows of 50257 at k = 256: 13.2 us against 11.0).
  constexpr int kMostPlacedInBlock0 = 128;
  // Sorting ~1,500 candidates in block 0 beats sorted lists in every block at k = 1024 (8 rows
  // of 32000: 12.7 against 13.7 us; 8 rows of 128256: 16.4 against 17.1; 16 rows of 32000 over
  // 4 blocks: 13.7 against 16.3), over 16 blocks too since the staging and block 0's bin scan
  // got cheaper (one row of 128256: 13.1 against 14.1; of 151936: 14.5 against 15.2), but not
  // at k = 256 (8 rows of 50257: 11.6 against 11.2).
  constexpr bool kSortsInBlock0 = KBucket >= 1024;
  extern __shared__ __align__(16) unsigned char dynamic_smem[];
  TopkKey* const candidates = reinterpret_cast<TopkKey*>(dynamic_smem);
  TopkKey* const staged = candidates + kLimit;
  __shared__ ResidentState state;

  unsigned rank = 0;
  if constexpr (ClusterBlocks > 1) rank = cluster_block_rank();
  ResidentSlice<Pack, Threads, Packs> slice;
  slice.begin = static_cast<int>(rank) * kSliceCols;
  slice.end = slice.begin + kSliceCols < Cols ? slice.begin + kSliceCols : Cols;
  for (int b = threadIdx.x; b < 3 * 256; b += Threads)
    (b < 256 ? state.counts[b] : state.totals[b / 256 - 1][b % 256]) = 0;
  for (int b = threadIdx.x; b < kWindowBins; b += Threads) {
    state.window_counts[b] = 0;
    state.window_totals[b] = 0;
  }
  if (threadIdx.x == 0) state.gathered = 0;
  // No block writes into another before that block has started and zeroed its totals. The
  // barrier is split so that the first row's loads are in flight while it completes (~0.1 us
  // of one row's 10 on the H100, 128256 columns over 16 blocks).
  StartBarrier<ClusterBlocks> start;
  int parity = 0;
  const float c = params.log2e_over_t;
  const long long clusters = gridDim.x / ClusterBlocks;
  for (long long row = blockIdx.x / ClusterBlocks; row < params.rows; row += clusters) {
    const int k_row = row_slots(params, row);
    if (rank == 0) write_unused_slots<Idx, Threads>(params, row, k_row);
    if (k_row == 0) continue;  // the same for every block of the cluster

    const TemperedStats mine =
        load_slice<In>(static_cast<const In*>(params.logits) + row * params.row_stride, c, slice);
    unsigned block_top = 0;
    const TemperedStats stats = block_stats(slice, mine, c, state, block_top);
    count_window(slice, block_top >> 24, state.window_counts);
    __syncthreads();
    start.wait();
    push_block_stats<ClusterBlocks>(stats, block_top, rank, state);
    int selected = 0;
    const TopkKey threshold = cluster_radix_select<Pack, Threads, Packs, ClusterBlocks>(
        slice, k_row, kLimit, c, block_top, state, parity, selected);
    // Few candidates go unsorted to every block, each block counting its keys' places among
    // them, or where they are fewer still, only to block 0, which places and writes them all.
    // More are sorted a block's list at a time and placed by binary search, or in clusters of
    // up to 8 at k bucket 1024, sent unsorted to block 0, which sorts them and writes the row.
    const bool by_count = selected <= kMostUnsorted;  // the same in every block
    const bool in_block0 =
        selected <= kMostPlacedInBlock0 || (!by_count && kSortsInBlock0);
    const bool sorts_lists = !by_count && !in_block0;
    int at = 0;
    const int m = stage_candidates<Pack, Threads, Packs, ClusterBlocks>(
        slice, threshold, sorts_lists ? staged : nullptr, candidates, state, at, in_block0);
    if (sorts_lists) {
      write_sorted_everywhere<Threads, ClusterBlocks>(staged, m, kLimit, candidates, at,
                                                      state.sort);
      publish_list<ClusterBlocks>(state.lists, rank, at, m);
    }
    // The candidates are where they are placed, and every read of another block's shared
    // memory for this row is done (the mass's aside): the others may go on to the next row.
    row_barrier<ClusterBlocks>();
    if (rank == 0 && threadIdx.x == 0) state.gathered = 0;
    int* const places = reinterpret_cast<int*>(staged);  // read by now, if used: reuse it
    if (in_block0 && rank != 0) continue;  // the same in the whole block
    if (in_block0 && !(params.flags & kTopkFlagRenorm)) {
      // Block 0 writes the row straight from its last step, with no barrier after it.
      if (by_count) {
        place_and_write_few<Idx, Threads>(params, row, k_row, candidates, selected, state);
      } else {
        sort_keys_descending<Threads>(candidates, selected, staged, state.sort, k_row);
        for (int i = threadIdx.x; i < k_row; i += Threads)
          write_slot<Idx>(params, row, i, candidates[i], state.row_max, state.row_sum);
      }
      continue;
    }
    // Placing every candidate where that is cheap (counting few, in block 0, or in a block
    // alone), so that KJIT_TOPK_RENORM's mass needs no exchange.
    const bool place_all =
        ClusterBlocks == 1 || in_block0 || (by_count && (params.flags & kTopkFlagRenorm));
    const int first = place_all ? 0 : at, placed = place_all ? selected : m;
    if (by_count) {
      place_by_count<Threads>(candidates, selected, first, placed, places);
    } else if (in_block0) {
      sort_keys_descending<Threads>(candidates, selected, staged, state.sort, k_row);
      for (int i = threadIdx.x; i < selected; i += Threads) places[i] = i;
      __syncthreads();
    } else {
      place_by_search<Threads, ClusterBlocks>(candidates, first, placed, state.lists, places);
    }
    const int written_at = in_block0 ? 0 : at, written = in_block0 ? selected : m;
    write_own_winners<Idx, Threads, ClusterBlocks>(params, row, k_row, candidates, places, first,
                                                   placed, place_all, written_at, written, rank,
                                                   state);
  }
  start.wait();  // where no row took this block as far as its first remote write
}

}  // namespace kjit
