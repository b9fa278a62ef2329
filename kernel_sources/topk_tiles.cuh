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
/// spilled.
template <int Pack, int Threads, int Unroll, int SliceCols, bool Spread>
struct SliceTiles {
  static constexpr int kPack = Pack;
  static constexpr int kThreads = Threads;
  static constexpr int kUnroll = Unroll;
  static constexpr int kRun = Threads * Pack;  ///< one run: every thread's pack
  static constexpr int kTile = kRun * Unroll;
  static constexpr int kSegment = (SliceCols + kTile - 1) / kTile * kRun;  ///< whole runs

  int begin;  ///< the slice's first column
  int end;    ///< one past its last (a cluster's last slice may be shorter than SliceCols)

  /// Tiles are numbered by offsets 0, kRun, 2 kRun, ... below kSegment.
  __device__ __forceinline__ int run_start(int offset, int u) const {
    return Spread ? begin + u * kSegment + offset : begin + offset * Unroll + u * kRun;
  }

  __device__ __forceinline__ int col(int offset, int u, int i) const {
    return run_start(offset, u) + static_cast<int>(threadIdx.x) * Pack + i;
  }
};

template <typename In, typename Tiles, int Pack, int Unroll>
__device__ __forceinline__ void load_tile(const In* row, const Tiles& s, int offset,
                                          float (&tile)[Unroll][Pack]) {
  // load_packs' rule (pack.cuh), written out: through load_packs the compiler treated the fp32
  // tile's bounds differently (other instructions in the PTX), and the fp32 tile is to stay as
  // it is. Runs start further on as u grows, so a 16-bit tile whose last run ends inside the
  // slice is checked once (docs/experiments/memory-access.md); fp32 tiles pack by pack.
  if (sizeof(In) == 2 && s.col(offset, Unroll - 1, 0) + Pack <= s.end) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      const int col = s.col(offset, u, 0);
      load_pack<In, Pack>(row, col, col + Pack, neg_inf(), tile[u]);
    }
  } else {
#pragma unroll
    for (int u = 0; u < Unroll; ++u) load_pack<In, Pack>(row, s.col(offset, u, 0), s.end, neg_inf(), tile[u]);
  }
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
