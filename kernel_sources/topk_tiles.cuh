// SPDX-License-Identifier: Apache-2.0
// How the stream top-K kernel reads its slice of a row: tile by tile, each tile Unroll runs of
// Threads x Pack values. Where the threshold is guessed from the first tile, run u comes from
// the u-th of Unroll equal segments of the slice, so that the first tile samples the whole
// slice, not its start alone: a row's values need not be in random order (a vocabulary's
// frequent tokens have the low ids).
#pragma once

#include "pack.cuh"
#include "topk_stats.cuh"

namespace kjit {

/// The tiles of a slice of at most SliceCols columns: with Spread, run u of a tile from the u-th
/// of Unroll segments; without, each tile's runs side by side. The segments' length depends on
/// the template arguments alone, so that a column's address is the slice's start plus
/// constants: a run-time length took one more register a run, and the kernels of 1024 threads
/// spilled. Shifted tiles read rows off the pack's alignment: every run starts `lead` columns
/// before its place, on a pack boundary of memory, and the slice's first `lead` columns so read
/// lie outside it (the previous slice's, or before the row).
template <int Pack, int Threads, int Unroll, int SliceCols, bool Spread, bool Shifted = false>
struct SliceTiles {
  static constexpr int kPack = Pack;
  static constexpr int kThreads = Threads;
  static constexpr int kUnroll = Unroll;
  static constexpr int kRun = Threads * Pack;  ///< one run: every thread's pack
  static constexpr int kTile = kRun * Unroll;
  /// Columns the runs cover: a shifted slice starts up to Pack - 1 columns early.
  static constexpr int kCovered = SliceCols + (Shifted ? Pack - 1 : 0);
  static constexpr int kSegment = (kCovered + kTile - 1) / kTile * kRun;  ///< whole runs

  int begin;  ///< the slice's first column
  int end;    ///< one past its last (a cluster's last slice may be shorter than SliceCols)
  int lead;   ///< Shifted: the row's start past a pack boundary of memory, in columns; else 0

  /// Tiles are numbered by offsets 0, kRun, 2 kRun, ... below kSegment. A run's start before
  /// the shift, a multiple of Pack.
  __device__ __forceinline__ int run_start(int offset, int u) const {
    return Spread ? begin + u * kSegment + offset : begin + offset * Unroll + u * kRun;
  }

  __device__ __forceinline__ int col(int offset, int u, int i) const {
    return run_start(offset, u) + static_cast<int>(threadIdx.x) * Pack + i - (Shifted ? lead : 0);
  }

  /// Whether column `col` (read by some run) belongs to the slice.
  __device__ __forceinline__ bool holds(int col) const {
    if (Shifted) return static_cast<unsigned>(col - begin) < static_cast<unsigned>(end - begin);
    return col < end;
  }

  /// Whether the pack at `col` starts before the slice: thread 0's first, where shifted.
  __device__ __forceinline__ bool starts_early(int col) const { return Shifted && col < begin; }
};

/// A shifted row's lead: its first element's place past a boundary of Pack elements in memory.
template <typename In, int Pack>
__device__ __forceinline__ int row_lead(const In* row) {
  return static_cast<int>(reinterpret_cast<unsigned long long>(row) / sizeof(In) % Pack);
}

/// The pack at `col` as floats, element by element where it crosses either end of the slice
/// (columns outside read as -inf).
template <typename In, typename Tiles, int Pack>
__device__ __forceinline__ void load_slice_pack(const In* row, const Tiles& s, int col, float* dst) {
  if (!s.starts_early(col)) {
    load_pack<In, Pack>(row, col, s.end, neg_inf(), dst);
    return;
  }
#pragma unroll
  for (int i = 0; i < Pack; ++i) dst[i] = s.holds(col + i) ? to_float(row[col + i]) : neg_inf();
}

/// The pack at `col` as the words a vector load fills, element by element where it crosses
/// either end of the slice (columns outside read as -inf).
template <typename In, typename Tiles, int Pack>
__device__ __forceinline__ WordPack<In, Pack> load_slice_words(const In* row, const Tiles& s, int col) {
  const In fill = from_float<In>(neg_inf());
  if (!s.starts_early(col)) return load_word_pack<In, Pack>(row, col, s.end, fill);
  PackBits<In, Pack> bits;
#pragma unroll
  for (int i = 0; i < Pack; ++i) bits.pack.v[i] = s.holds(col + i) ? row[col + i] : fill;
  return words_of<In, Pack>(bits);
}

template <typename In, typename Tiles, int Pack, int Unroll>
__device__ __forceinline__ void load_tile(const In* row, const Tiles& s, int offset,
                                          float (&tile)[Unroll][Pack]) {
  // load_packs' rule (pack.cuh), written out: through load_packs the compiler treated the fp32
  // tile's bounds differently (other instructions in the PTX), and the fp32 tile is to stay as
  // it is. Runs start further on as u grows, so a 16-bit tile whose last run ends inside the
  // slice is checked once (docs/experiments/memory-access.md); fp32 tiles pack by pack.
  if (sizeof(In) == 2 && s.col(offset, Unroll - 1, 0) + Pack <= s.end && !s.starts_early(s.col(offset, 0, 0))) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const int col = s.col(offset, u, 0);
      load_pack<In, Pack>(row, col, col + Pack, neg_inf(), tile[u]);
    }
  } else {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) load_slice_pack<In, Tiles, Pack>(row, s, s.col(offset, u, 0), tile[u]);
  }
}

/// A tile's packs as the words their loads fill (16-bit values two to a register until widened).
template <typename In, typename Tiles, int Pack, int Unroll>
__device__ __forceinline__ void load_word_tile(const In* row, const Tiles& s, int offset,
                                               WordPack<In, Pack> (&words)[Unroll]) {
  if (s.col(offset, Unroll - 1, 0) + Pack <= s.end && !s.starts_early(s.col(offset, 0, 0))) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const int col = s.col(offset, u, 0);
      words[u] = load_word_pack<In, Pack>(row, col, col + Pack, In{});  // the bounds check folds away
    }
  } else {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) words[u] = load_slice_words<In, Tiles, Pack>(row, s, s.col(offset, u, 0));
  }
}

template <typename In, int Pack, int Unroll>
__device__ __forceinline__ void widen_tile(const WordPack<In, Pack> (&words)[Unroll], float (&tile)[Unroll][Pack]) {
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) tile[u][i] = words[u].at(i);
}

/// The largest value of a thread's tile; NaN if any is NaN, so a NaN beside -inf fill still
/// reaches the sum and poisons the row.
template <int Pack, int Unroll>
__device__ __forceinline__ float tile_max(const float (&tile)[Unroll][Pack]) {
  float m = tile[0][0];
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) m = max_propagate_nan(m, tile[u][i]);
  return m;
}

template <int Pack, int Unroll>
__device__ __forceinline__ void add_tile(TemperedStats& stats, const float (&tile)[Unroll][Pack],
                                         float thread_max, float c) {
  const float to = max_propagate_nan(stats.max, thread_max);
  if (to == neg_inf()) return;  // nothing but -inf so far: the sum stays 0
  float sum = TemperedStats::rescaled(stats.sum, stats.max, to, c);
#pragma unroll
  for (int u = 0; u < Unroll; ++u)
#pragma unroll
    for (int i = 0; i < Pack; ++i) sum += fast_exp2((tile[u][i] - to) * c);
  stats = {to, sum};
}

}  // namespace kjit
