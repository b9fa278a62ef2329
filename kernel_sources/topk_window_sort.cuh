// SPDX-License-Identifier: Apache-2.0
// A block-wide sort of up to a few thousand distinct TopkKeys in shared memory, descending, by
// their top 16 bits or more: the winners of a row lie within a few binary orders of magnitude
// of its largest value, so one count over a window of bins, a scan and a scatter put nearly
// every key in place, and each key's place within its bin is the count of the bin's keys above
// it. Four block barriers where a bitonic sort of 1024 keys takes fifteen. A caller that bounds
// the keys from below gets bins as fine as a window of kMostFineBins allows.
#pragma once

#include "topk_select.cuh"
#include "topk_sort.cuh"

namespace kjit {

/// The most keys one bin may hold for window_sort_descending: placing within a bin compares
/// every pair of its keys, so a block of n keys makes at most n times this many compares. The
/// winners of a row of 128256 logits fill their lowest bins with about 50 keys each, and at a
/// limit of 64 rows often fell back to the slower sort.
constexpr int kMostKeysInWindowBin = 256;

/// Warp 0 turns the counts of the window's first `bins` bins into each bin's first place, bins
/// from the largest key's down (window index top - bits ascending), and records the fullest
/// bin's count. 512 bins a step, sixteen consecutive ones a lane in four 16-byte loads, and one
/// scan of the lanes' totals: a row's winners fill a few hundred bins of the 1024, one step
/// (kMostFineBins), where narrower steps made a chain of scans. Steps past the last filled bin
/// are skipped. The loads and the scan are load_lane_span's wide ones at twice its eight bins
/// a lane; written through load_lane_span (whose suffix sums give the prefix as the step's
/// total less a lane's), the k = 1024 cells ran slower.
__device__ __forceinline__ void window_places(SelectScratch& s, int bins) {
  constexpr int kLaneBins = 16;
  const unsigned lane = threadIdx.x % 32;
  unsigned before = 0, fullest = 0;  // keys in the bins of the steps before
  for (int first = 0; first < bins; first += 32 * kLaneBins) {
    FourBins* const quads = reinterpret_cast<FourBins*>(s.window + first + lane * kLaneBins);
    FourBins counts[kLaneBins / 4];
#pragma unroll
    for (int q = 0; q < kLaneBins / 4; ++q) counts[q] = quads[q];
    unsigned lane_total = 0;
#pragma unroll
    for (int b = 0; b < kLaneBins; ++b) {
      const unsigned count = counts[b / 4].bin[b % 4];
      lane_total += count;
      fullest = count > fullest ? count : fullest;
    }
    unsigned through = lane_total;  // inclusive prefix over the lanes
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
      const unsigned below = __shfl_up_sync(0xffffffffu, through, offset);
      if (lane >= static_cast<unsigned>(offset)) through += below;
    }
    unsigned place = before + through - lane_total;
#pragma unroll
    for (int b = 0; b < kLaneBins; ++b) {
      const unsigned count = counts[b / 4].bin[b % 4];
      counts[b / 4].bin[b % 4] = place;
      place += count;
    }
#pragma unroll
    for (int q = 0; q < kLaneBins / 4; ++q) quads[q] = counts[q];
    before += __shfl_sync(0xffffffffu, through, 31);
  }
  fullest = __reduce_max_sync(0xffffffffu, fullest);
  if (lane == 0 && fullest > static_cast<unsigned>(s.fullest)) s.fullest = static_cast<int>(fullest);
}

/// The most bins that window_sort_descending spreads keys over when it knows both ends of their
/// range, bins below the top 16 bits included: ~1,000 keys of a row of 50257 at k = 1024 span
/// ~136 bins of 16 bits, up to ~40 keys a bin; over 272 bins of 17 bits, the count of each key's
/// place within its bin halves. Windows of 1024 bins were no faster than 512
/// (docs/experiments/top-k-resident.md).
constexpr unsigned kMostFineBins = 512;

/// Which bits of a key window_sort_descending bins by: the top 16 of its value and
/// `value_extra` more, then the top `col_extra` of the ColBits low bits that hold its column
/// (~col, so larger for a smaller column). Past the bits its values can set, a key's order is
/// its column's: bins split by column bits hold fewer keys of equal value, which is where a
/// bfloat16 row's sort spent its time (~50 equal values a bin at 128256 columns, k = 1024).
template <int ColBits>
struct KeyBins {
  static_assert(ColBits >= 0 && ColBits < 32, "KeyBins: a column's bits are fewer than 32");
  int value_shift = 48;  // 48 - value_extra
  int col_extra = 0;
  int col_shift = ColBits;  // ColBits - col_extra: no column bits

  __device__ __forceinline__ unsigned of(TopkKey key) const {
    const unsigned value_bins = static_cast<unsigned>(key >> value_shift);
    if constexpr (ColBits == 0) return value_bins;
    constexpr unsigned kColMask = (1u << ColBits) - 1u;
    return (value_bins << col_extra) | ((static_cast<unsigned>(key) & kColMask) >> col_shift);
  }
  /// The bin of the largest key whose value bits are `top`.
  __device__ __forceinline__ unsigned of_top(unsigned top) const {
    return (top >> (value_shift - 32)) << col_extra | ((1u << col_extra) - 1u);
  }
  /// The bin of the smallest key whose value bits are `floor`.
  __device__ __forceinline__ unsigned of_floor(unsigned floor) const {
    return (floor >> (value_shift - 32)) << col_extra;
  }
};

/// The finest bins that keep keys whose value bits (key >> 32) lie in [floor, top] within
/// kMostFineBins: up to MostExtra value bits below the top 16, then, where those are all a
/// value can set, up to ColBits column bits.
template <int MostExtra, int ColBits>
__device__ __forceinline__ KeyBins<ColBits> finest_bins(unsigned top, unsigned floor) {
  int extra = 0;
  while (extra < MostExtra && (top >> (15 - extra)) - (floor >> (15 - extra)) < kMostFineBins)
    ++extra;
  KeyBins<ColBits> bins;
  bins.value_shift = 48 - extra;
  if (extra < MostExtra) return bins;
  const unsigned spanned = (top >> (16 - extra)) - (floor >> (16 - extra)) + 1;
  while (bins.col_extra < ColBits && (spanned << (bins.col_extra + 1)) <= kMostFineBins)
    ++bins.col_extra;
  bins.col_shift = ColBits - bins.col_extra;
  return bins;
}

/// Where window_sort_descending's keys lie and the bins it sorts them by, worked out by a caller
/// who knows the keys' range ahead of the sort (key_window), where it would otherwise wait at a
/// barrier.
template <int ColBits>
struct KeyWindow {
  KeyBins<ColBits> bins;
  unsigned top_bin;    ///< the largest key's bin
  unsigned floor_bin;  ///< at or below every key's bin
};

/// The window of keys whose value bits (key >> 32) lie in [floor, top], binned as finely as
/// finest_bins allows.
template <int MostExtra, int ColBits>
__device__ __forceinline__ KeyWindow<ColBits> key_window(unsigned top, unsigned floor) {
  KeyWindow<ColBits> window;
  window.bins = finest_bins<MostExtra, ColBits>(top, floor);
  window.top_bin = window.bins.of_top(top);
  window.floor_bin = window.bins.of_floor(floor);
  return window;
}

/// Readies `s` for a window_sort_descending told its keys' window, so that a caller who knows
/// it saves the sort a block-wide max and its barrier. Call with the whole block before a barrier
/// that comes before the sort.
template <int Threads>
__device__ __forceinline__ void prepare_window_sort(SelectScratch& s) {
  for (int b = threadIdx.x; b < kKeyWindowBins; b += Threads) s.window[b] = 0;
  if (threadIdx.x == 0) {
    s.fullest = 0;
    s.deepest = 0;
  }
}

/// Sorts keys[0, n) (distinct, none 0) descending in place, with spare[0, n) as scratch, as far
/// as places [0, wanted): the bins that start at or past it are left in no particular order
/// (each key's place within its bin, a count over the bin, was half a gathered list's sort at
/// k = 1024, where ~2 k keys are gathered for k places). `known` is the keys' window where the
/// caller knows it (key_window; it has then called prepare_window_sort), else null: the sort
/// finds the largest key and bins by the top 16 bits. Returns false, with the keys untouched,
/// when a key lies below the window of the largest or a bin holds more than
/// kMostKeysInWindowBin keys (a row of equal values, say): the caller sorts another way. Call
/// with the whole block after a barrier that follows the last write to the keys; ends with a
/// barrier.
template <int Threads, int ColBits>
__device__ bool window_sort_descending(TopkKey* keys, int n, int wanted, TopkKey* spare,
                                       SelectScratch& s, const KeyWindow<ColBits>* known) {
  KeyBins<ColBits> bins;
  unsigned top_bin = 0, floor_bin = 0;
  if (known == nullptr) {
    if (threadIdx.x == 0) {
      s.fullest = 0;
      s.deepest = 0;
    }
    top_bin = largest_top16<Threads>(keys, n, s);
  } else {
    bins = known->bins;
    top_bin = known->top_bin;
    floor_bin = known->floor_bin;
  }
  // Where the floor bounds the bins to the window, the deepest bin is known: no block-wide max.
  const bool bounded = top_bin - floor_bin < kKeyWindowBins;
  const unsigned lowest = bounded ? floor_bin : window_lowest(top_bin);
  unsigned deepest = 0;
  for (int i = threadIdx.x; i < n; i += Threads) {
    const unsigned bits = bins.of(keys[i]);
    if (bits >= lowest) {
      atomicAdd(&s.window[top_bin - bits], 1u);
      deepest = top_bin - bits > deepest ? top_bin - bits : deepest;
    } else {
      s.fullest = kMostKeysInWindowBin + 1;  // below the window: sort another way
    }
  }
  if (!bounded) {
    deepest = __reduce_max_sync(0xffffffffu, deepest);
    if (threadIdx.x % 32 == 0) atomicMax(&s.deepest, deepest);
  }
  __syncthreads();
  if (threadIdx.x < 32)
    window_places(s, static_cast<int>(bounded ? top_bin - floor_bin : s.deepest) + 1);
  __syncthreads();
  if (s.fullest > kMostKeysInWindowBin) return false;  // the same in every thread
  // Each key into its bin's range, in no particular order; the bins' first places become
  // their ends.
  for (int i = threadIdx.x; i < n; i += Threads) {
    const TopkKey key = keys[i];
    spare[atomicAdd(&s.window[top_bin - bins.of(key)], 1u)] = key;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += Threads) {
    const TopkKey key = spare[i];
    const unsigned bin = top_bin - bins.of(key);
    const int first = bin == 0 ? 0 : static_cast<int>(s.window[bin - 1]);
    if (first >= wanted) {
      keys[i] = key;  // the bin's keys stay in its range
      continue;
    }
    const int end = static_cast<int>(s.window[bin]);
    int above = 0;
    // Four loads in flight at a time (eight were no faster).
#pragma unroll 4
    for (int j = first; j < end; ++j) above += spare[j] > key ? 1 : 0;
    keys[first + above] = key;
  }
  __syncthreads();
  return true;
}

/// Sorts keys[0, n) (distinct, none 0) descending, at least as far as places [0, wanted): by
/// their top bits where `spare` (room for n keys, or null) is given and the bits allow, else
/// bitonically, padding the keys with zeros to the next power of two of n (room the caller
/// provides). Call with the whole block after a barrier that follows the last write to the keys.
/// `known` as for window_sort_descending.
template <int Threads, int ColBits = 0>
__device__ void sort_keys_descending(TopkKey* keys, int n, TopkKey* spare, SelectScratch& s,
                                     int wanted, const KeyWindow<ColBits>* known = nullptr) {
  if (spare != nullptr &&
      window_sort_descending<Threads, ColBits>(keys, n, wanted, spare, s, known))
    return;
  int size = 1;
  while (size < n) size *= 2;
  for (int i = n + static_cast<int>(threadIdx.x); i < size; i += Threads) keys[i] = 0;
  __syncthreads();
  bitonic_sort_descending<Threads>(keys, size);
}

}  // namespace kjit
