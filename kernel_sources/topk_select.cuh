// SPDX-License-Identifier: Apache-2.0
// Block-wide selection over distinct TopkKeys held in shared memory: a radix search for a
// threshold that keeps between `need` and `limit` keys, and the compaction to those keys. Every
// function is called by the whole block with the same arguments.
#pragma once

#include "topk_keys.cuh"

namespace kjit {

/// Counts one digit per lane (where `counts`) into a 256-bin shared histogram. Keys crowd into
/// few bins (the exponent's): the warp adds its two most common digits with one atomic each,
/// and the stragglers one by one. Call with the whole warp.
__device__ __forceinline__ void add_to_histogram(unsigned* histogram, bool counts,
                                                 unsigned digit) {
  const unsigned lane = threadIdx.x % 32;
  unsigned pending = __ballot_sync(0xffffffffu, counts);
  for (int round = 0; round < 2 && pending != 0; ++round) {
    const int leader = __ffs(pending) - 1;
    const unsigned leading = __shfl_sync(0xffffffffu, digit, leader);
    const unsigned same = __ballot_sync(0xffffffffu, counts && digit == leading) & pending;
    if (lane == static_cast<unsigned>(leader)) atomicAdd(&histogram[leading], __popc(same));
    pending &= ~same;
  }
  if (pending & (1u << lane)) atomicAdd(&histogram[digit], 1u);
}

/// Four bins of a histogram, loaded at once.
struct alignas(16) FourBins {
  unsigned bin[4];
};

/// Lane l of a warp reads bins [start + N l, start + N l + N) of `histogram` (indices taken
/// modulo mask + 1: a window that may wrap) into `bins`; returns the keys in its bins and every
/// higher lane's, and leaves its own in `lane_total`. Wide (N = 8, start a multiple of 8, the
/// histogram 16-byte aligned): a lane's eight bins come in two 16-byte loads, where one word at a
/// time, the lanes' words 8 apart, every load is an 8-way bank conflict. The resident kernel
/// reads its histograms wide; in the stream kernel the wide loads' registers made the streaming
/// loop spill at k bucket 256.
template <int N, bool Wide = false>
__device__ __forceinline__ unsigned load_lane_span(const unsigned* histogram, int start, int mask,
                                                   unsigned (&bins)[N], unsigned& lane_total) {
  static_assert(!Wide || N == 8, "load_lane_span: wide loads take eight bins a lane");
  const int lane = static_cast<int>(threadIdx.x % 32);
  lane_total = 0;
  if constexpr (Wide) {
    const FourBins* const quads =
        reinterpret_cast<const FourBins*>(histogram + ((start + lane * N) & mask));
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      const FourBins four = quads[q];
#pragma unroll
      for (int b = 0; b < 4; ++b) bins[4 * q + b] = four.bin[b];
    }
#pragma unroll
    for (int b = 0; b < N; ++b) lane_total += bins[b];
  } else {
#pragma unroll
    for (int b = 0; b < N; ++b) {
      bins[b] = histogram[(start + lane * N + b) & mask];
      lane_total += bins[b];
    }
  }
  unsigned from_lane_up = lane_total;
#pragma unroll
  for (int offset = 1; offset < 32; offset *= 2) {
    const unsigned higher = __shfl_down_sync(0xffffffffu, from_lane_up, offset);
    if (lane + offset < 32) from_lane_up += higher;
  }
  return from_lane_up;
}

/// Lane l of a warp reads bins [8l, 8l+8) of a 256-bin `histogram`, as load_lane_span.
template <bool Wide = false>
__device__ __forceinline__ unsigned load_lane_bins(const unsigned* histogram, unsigned (&bins)[8],
                                                   unsigned& lane_total) {
  return load_lane_span<8, Wide>(histogram, 0, 255, bins, lane_total);
}

/// One digit of a radix select, the same in every lane of the warp that chose it.
struct DigitChoice {
  TopkKey prefix;  ///< the digits fixed so far, this one included
  int above;       ///< keys whose digits so far beat `prefix`
  int selected;    ///< keys at or above the prefix's bin, when `done`
  bool done;       ///< the bin holds the need-th key and at most `limit` keys are at or above it
  bool found;      ///< the bins read hold the need-th key (always, over a whole digit); if
                   ///< not, `above` counts their keys too
};

/// A digit step for any warp, in registers, over 32 N bins that lane order ranks (lane 31's
/// last bin highest), read as load_lane_span does: bin j stands for the prefix first_prefix + j.
/// Every lane returns the outcome, so warps that each choose for themselves need no barrier
/// after.
template <int N, bool Wide = false>
__device__ __forceinline__ DigitChoice choose_in_span(const unsigned* histogram, int start,
                                                      int mask, TopkKey first_prefix, int above,
                                                      int need, int limit) {
  const unsigned lane = threadIdx.x % 32;
  unsigned bins[N], lane_total;
  const unsigned from_lane_up =
      load_lane_span<N, Wide>(histogram, start, mask, bins, lane_total);
  int running = above + static_cast<int>(from_lane_up - lane_total);
  const bool mine = running < need && running + static_cast<int>(lane_total) >= need;
  DigitChoice choice{first_prefix, above, 0, false, false};
  if (mine) {
    for (int b = N - 1; b >= 0; --b) {
      const int with_bin = running + static_cast<int>(bins[b]);
      if (with_bin >= need) {
        choice = {first_prefix + lane * N + b, running, with_bin, with_bin <= limit, true};
        break;
      }
      running = with_bin;
    }
  }
  const unsigned owners = __ballot_sync(0xffffffffu, mine);
  if (owners == 0) {  // the need-th key lies below these bins, under all their keys
    choice.above = above + static_cast<int>(__shfl_sync(0xffffffffu, from_lane_up, 0));
    return choice;
  }
  const int owner = __ffs(owners) - 1;
  choice.prefix = __shfl_sync(0xffffffffu, choice.prefix, owner);
  choice.above = __shfl_sync(0xffffffffu, choice.above, owner);
  choice.selected = __shfl_sync(0xffffffffu, choice.selected, owner);
  choice.done = __shfl_sync(0xffffffffu, choice.done, owner);
  choice.found = true;
  return choice;
}

/// choose_in_span over the 256 bins of one 8-bit digit below `prefix`.
template <bool Wide = false>
__device__ __forceinline__ DigitChoice choose_digit_in_warp(const unsigned* histogram,
                                                            TopkKey prefix, int above, int need,
                                                            int limit) {
  return choose_in_span<8, Wide>(histogram, 0, 255, prefix << 8, above, need, limit);
}

/// The first round of a select reads the top 16 bits of the keys at once (an fp32 value's sign,
/// exponent and 7 mantissa bits) over this many bins down from the largest key's: 8 binary
/// orders of magnitude, where the k-th largest of a row of logits lies.
constexpr int kKeyWindowBins = 1024;

/// Shared scratch of the selection functions.
struct SelectScratch {
  unsigned histogram[256];
  alignas(16) unsigned window[kKeyWindowBins];  ///< the first round's counts (each user zeroes
                                                ///< them first); window_places reads 16 bytes
                                                ///< at a time
  unsigned warp_top[32];            ///< each warp's largest top 16 bits
  DigitChoice window_choice;
  TopkKey prefix;      ///< the digits fixed so far
  TopkKey threshold;   ///< the answer, once `done`
  int above;           ///< keys whose digits so far beat `prefix`
  int done;
  int kept;
  int fullest;         ///< window_sort: the most keys in one bin, or more when one lies below
  unsigned deepest;    ///< window_sort: the farthest bin from the largest key's that holds one
};

/// The largest top 16 bits of keys[0, n), in every thread; zeroes `s.window` on the way. Ends
/// with a barrier.
template <int Threads>
__device__ unsigned largest_top16(const TopkKey* keys, int n, SelectScratch& s) {
  for (int b = threadIdx.x; b < kKeyWindowBins; b += Threads) s.window[b] = 0;
  unsigned top = 0;
  for (int i = threadIdx.x; i < n; i += Threads) {
    const unsigned bits = static_cast<unsigned>(keys[i] >> 48);
    top = bits > top ? bits : top;
  }
  top = __reduce_max_sync(0xffffffffu, top);
  const unsigned lane = threadIdx.x % 32;
  if (lane == 0) s.warp_top[threadIdx.x / 32] = top;
  __syncthreads();
  constexpr unsigned kWarps = Threads / 32;
  return __reduce_max_sync(0xffffffffu, lane < kWarps ? s.warp_top[lane] : 0u);
}

/// The lowest top 16 bits of the window below `top`.
__device__ __forceinline__ unsigned window_lowest(unsigned top) {
  return top >= kKeyWindowBins - 1 ? top - (kKeyWindowBins - 1) : 0u;
}

/// A select's first round, over the top 16 bits of the keys in the window below the largest:
/// one pass where 8-bit digits take two or three, each with its barriers. The outcome is the
/// same in every thread; not `found` when the need-th key lies below the window.
template <int Threads>
__device__ DigitChoice window_round(const TopkKey* keys, int n, int need, int limit,
                                   SelectScratch& s) {
  const unsigned lowest = window_lowest(largest_top16<Threads>(keys, n, s));
  for (int i = threadIdx.x; i < n; i += Threads) {
    const unsigned bits = static_cast<unsigned>(keys[i] >> 48);
    if (keys[i] != 0 && bits >= lowest) atomicAdd(&s.window[bits - lowest], 1u);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    // 256 bins a step from the top keeps a lane's registers at 8 bins.
    DigitChoice choice{};
    int above = 0;
    for (int first = kKeyWindowBins - 256; first >= 0; first -= 256) {
      choice = choose_in_span<8>(s.window, first, kKeyWindowBins - 1, lowest + first, above, need,
                                 limit);
      if (choice.found) break;
      above = choice.above;
    }
    if (threadIdx.x == 0) s.window_choice = choice;
  }
  __syncthreads();
  return s.window_choice;
}

/// Warp 0's step of a block-wide radix select. Finds the highest digit d such that `above`
/// plus the keys with a digit >= d reaches `need`, and records the step's outcome in `s` (from
/// the one lane whose bins hold it).
__device__ __forceinline__ void choose_digit(SelectScratch& s, const unsigned* histogram,
                                             int shift, int need, int limit) {
  const unsigned lane = threadIdx.x;
  unsigned bins[8], lane_total;
  const unsigned from_lane_up = load_lane_bins(histogram, bins, lane_total);
  const int above = s.above;
  // Every lane has read s.above before the chosen lane rewrites it: lanes of a warp are
  // scheduled independently, and lockstep is not a promise (racecheck flags the read-write pair).
  __syncwarp();
  int running = above + static_cast<int>(from_lane_up - lane_total);
  if (running >= need || running + static_cast<int>(lane_total) < need) return;
  for (int b = 7; b >= 0; --b) {
    const int with_bin = running + static_cast<int>(bins[b]);
    if (with_bin >= need) {
      const TopkKey prefix = (s.prefix << 8) | static_cast<TopkKey>(lane * 8 + b);
      if (with_bin <= limit) {
        s.threshold = prefix << shift;
        s.done = 1;
      } else {
        s.prefix = prefix;
        s.above = running;
      }
      return;
    }
    running = with_bin;
  }
}

/// A threshold t with need <= #(keys >= t) <= limit, for 1 <= need <= (keys other than 0) and
/// need <= limit. Zero keys (no element) are never counted.
/// The window round first (unless WindowFirst is false); where its bin holds too many keys,
/// 8-bit digits below it, and where the need-th key lies below the window, 8-bit digits from
/// the top. Keys are distinct, so it ends by the last digit.
template <int Threads, bool WindowFirst = true>
__device__ TopkKey radix_threshold(const TopkKey* keys, int n, int need, int limit,
                                   SelectScratch& s) {
  DigitChoice window{0, 0, 0, false, false};
  if constexpr (WindowFirst) {
    window = window_round<Threads>(keys, n, need, limit, s);
    if (window.done) return window.prefix << 48;
  }
  if (threadIdx.x == 0) {
    s.prefix = window.found ? window.prefix : 0;
    s.above = window.found ? window.above : 0;
    s.done = 0;
  }
  for (int shift = window.found ? 40 : 56; shift >= 0; shift -= 8) {
    for (int b = threadIdx.x; b < 256; b += Threads) s.histogram[b] = 0;
    __syncthreads();
    const TopkKey prefix = s.prefix;
    for (int base = 0; base < n; base += Threads) {
      const int i = base + static_cast<int>(threadIdx.x);
      const TopkKey key = i < n ? keys[i] : 0;
      const bool counts = key != 0 && (shift == 56 || (key >> (shift + 8)) == prefix);
      add_to_histogram(s.histogram, counts,
                       counts ? static_cast<unsigned>(key >> shift) & 255u : 0u);
    }
    __syncthreads();
    if (threadIdx.x < 32) choose_digit(s, s.histogram, shift, need, limit);
    __syncthreads();
    if (s.done) break;
  }
  return s.threshold;
}

/// Moves the keys >= threshold to the front of `keys` (in no particular order); returns how
/// many. Works in rounds: a round's writes land below everything read so far, so one barrier
/// per round suffices.
template <int Threads>
__device__ int keep_at_least(TopkKey* keys, int n, TopkKey threshold, SelectScratch& s) {
  constexpr int kPerThread = 4;
  if (threadIdx.x == 0) s.kept = 0;
  const unsigned lane = threadIdx.x % 32;
  for (int base = 0; base < n; base += Threads * kPerThread) {
    TopkKey mine[kPerThread];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const int i = base + r * Threads + static_cast<int>(threadIdx.x);
      mine[r] = i < n ? keys[i] : 0;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      const bool keep = mine[r] != 0 && mine[r] >= threshold;
      const unsigned keepers = __ballot_sync(0xffffffffu, keep);
      if (keepers == 0) continue;
      const int leader = __ffs(keepers) - 1;
      int slot = 0;
      if (lane == static_cast<unsigned>(leader)) slot = atomicAdd(&s.kept, __popc(keepers));
      slot = __shfl_sync(0xffffffffu, slot, leader);
      if (keep) keys[slot + __popc(keepers & ((1u << lane) - 1u))] = mine[r];
    }
  }
  __syncthreads();
  return s.kept;
}

}  // namespace kjit
