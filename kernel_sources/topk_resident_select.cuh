// SPDX-License-Identifier: Apache-2.0
// The resident top-K kernel's select: the row's k-th largest key by a radix select whose
// counts are summed over the cluster through distributed shared memory, its first round 16
// bits wide over a window below the row's largest key.
#pragma once

#include "reduce.cuh"
#include "topk_keys.cuh"
#include "topk_resident_slice.cuh"
#include "topk_select.cuh"

namespace kjit {

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
      // each. A warp-wide vote per value to add equal digits at once cost more than it saved; a
      // row of equal values, every key in one bin, pays for it instead.
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
  // At least 1: bits 0 (no element) then fail the one compare.
  const unsigned low = block_top > 1 ? (block_top - 1) << 24 : 1u;
#pragma unroll
  for (int u = 0; u < Packs; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) {
      const unsigned bits = s.ordered[u][i];
      if (bits >= low) atomicAdd(&histogram[(bits >> 16) % kWindowBins], 1u);
    }
}

/// The row's window of the first round: the top 8-bit bin M of its largest key, and whether
/// the window's totals are exact (every block's largest key within two bins of M, M >= 1).
/// From the summaries every block sent; call with the whole warp.
template <int Cluster>
__device__ __forceinline__ bool row_window(const ResidentState& state, unsigned& top) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned mine = lane < Cluster ? state.blocks[lane].top >> 24 : 0u;
  top = __reduce_max_sync(0xffffffffu, mine);
  const unsigned lowest = __reduce_min_sync(0xffffffffu, lane < Cluster ? mine : 255u);
  return top >= 1 && top - lowest <= 2;
}

/// Adds this block's counts into totals[first, first + Bins) of every cluster block (only bins
/// with keys, and of those only the ones that `publishes(bin)`) and zeroes them for the next
/// count. `totals` is the array's own start, so that the remote addresses are mapped from a
/// fixed one (see cluster_element). Call after a barrier that follows the count.
template <int Threads, int Cluster, int Bins = 256, typename Publishes>
__device__ __forceinline__ void publish_counts(unsigned* counts, unsigned* totals, int first,
                                               Publishes publishes) {
  for (int b = threadIdx.x; b < Bins; b += Threads) {
    const unsigned count = counts[b];
    if (count == 0) continue;
    counts[b] = 0;
    if (!publishes(b)) continue;
    if constexpr (Cluster == 1) {
      totals[first + b] = count;
    } else {
#pragma unroll
      for (int r = 0; r < Cluster; ++r)
        reduce_add_cluster_u32(cluster_element(totals, static_cast<unsigned>(r), first + b), count);
    }
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
template <int Cluster>
__device__ __forceinline__ DigitChoice choose_in_window(const ResidentState& state, int need,
                                                        int limit) {
  DigitChoice choice{0, 0, 0, false, false};
  unsigned top = 0;
  if (!row_window<Cluster>(state, top)) return choice;
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

/// Sends this block's summary and its window counts from `floor_bits` up (bins with keys only)
/// to every block, zeroing its counts, and waits in warps 0 and 1 until every block's have
/// landed in this block's window totals and summaries. Through inboxes, no cluster barrier:
/// each block announces its bytes to each inbox (its summary and 4 a bin), and only the
/// readers wait; else (16 blocks, or a block alone) stores and adds, and a cluster (block)
/// barrier. Call with the whole block after the block barrier that follows the count; `phase`
/// is the inbox's, flipped here.
template <int Threads, int Cluster>
__device__ __forceinline__ void exchange_window(TemperedStats stats, unsigned block_top,
                                                unsigned floor_bits, unsigned rank,
                                                ResidentState& state, unsigned& phase) {
  const auto publishes = [&](int b) { return window_bin_bits(b, block_top) >= floor_bits; };
  send_block_summary<Cluster>(stats, block_top, rank, state);
  if constexpr (!exchanges_through_inbox<Cluster>()) {
    publish_counts<Threads, Cluster, kWindowBins>(state.window_counts, state.window_totals,
                                                        0, publishes);
    row_barrier<Cluster>();
  } else {
    int published = 0;
    for (int first = 0; first < kWindowBins; first += Threads) {  // the same in every thread
      const int b = first + static_cast<int>(threadIdx.x);
      published += __syncthreads_count(b < kWindowBins && state.window_counts[b] != 0 &&
                                        publishes(b));
    }
    if (threadIdx.x < Cluster)
      announce_bytes(state.window_inbox, threadIdx.x,
                     sizeof(BlockSummary) + sizeof(unsigned) * static_cast<unsigned>(published));
    for (int b = threadIdx.x; b < kWindowBins; b += Threads) {
      const unsigned count = state.window_counts[b];
      if (count == 0) continue;
      state.window_counts[b] = 0;
      if (!publishes(b)) continue;
#pragma unroll
      for (int r = 0; r < Cluster; ++r)
        send_add_u32(state.window_totals, b, static_cast<unsigned>(r), count, state.window_inbox);
    }
    if (threadIdx.x < 64) state.window_inbox.wait(phase);
    phase ^= 1u;
  }
}

/// The row's threshold: a key with need <= (keys of the row >= it) <= limit; `selected` gets
/// their count. Every block chooses the same digits from the same totals.
///
/// The first round takes the top 16 bits at once, over the window of count_window, in the
/// exchange that also brings every block's statistics (exchange_window): on a language model's
/// logits the k-th largest key lies within two 8-bit bins of the largest, and that one round
/// chooses the threshold. Where the window misses it, or cannot be read exactly, the
/// select starts over one 8-bit digit a round, counting only keys at or above the block's floor
/// (block_floor_bits): every bin from the k-th largest key's up holds only such keys, so the
/// totals of those bins, all a choice reads, are exact, while most keys cost a compare instead
/// of a histogram update; every warp chooses the digit for itself, in registers, so no block
/// barrier follows the choice.
/// Totals are kept by round parity. A block reads only its own; the others add into its round-r
/// totals before the round's barrier, into its round-(r + 1) ones only after it, so it zeroes
/// the latter, once its warps have read them in round r - 1, before it arrives. The window's
/// totals are zeroed once read, before the row's last cluster barrier, after which the others
/// may send the next row's.
/// Call after count_window (`block_top` is the block's, from block_top_bits), push_warp_stats
/// and a block barrier, once every block of the cluster has started.
template <int Pack, int Threads, int Packs, int Cluster>
__device__ TopkKey cluster_radix_select(const ResidentSlice<Pack, Threads, Packs>& slice,
                                        int need, int limit, float c, unsigned block_top,
                                        unsigned rank, ResidentState& state, int& parity,
                                        unsigned& inbox_phase, int& selected) {
  static_assert(Threads >= 64, "cluster_radix_select: warps 0 and 1 work side by side");
  if (threadIdx.x < 32) {
    const unsigned floor = window_floor(state.window_counts, block_top, need);
    if (threadIdx.x == 0) state.floor_bits = floor;
  } else if (threadIdx.x < 64) {
    const TemperedStats own = merge_warp_stats<Threads>(c, state);
    if (threadIdx.x == 32) state.own_stats = own;
  }
  __syncthreads();
  exchange_window<Threads, Cluster>(state.own_stats, block_top, state.floor_bits, rank,
                                          state, inbox_phase);
  // One warp chooses while another merges the statistics: every warp choosing for itself kept
  // the SM's issue slots busy for longer than a block barrier takes.
  const unsigned warp = threadIdx.x / 32;
  if (warp == 1) read_row_stats<Cluster>(c, state);
  if (warp == 0) {
    const DigitChoice choice = choose_in_window<Cluster>(state, need, limit);
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
    publish_counts<Threads, Cluster>(state.counts, &state.totals[0][0], parity * 256,
                                           [](int) { return true; });
    row_barrier<Cluster>();
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

}  // namespace kjit
