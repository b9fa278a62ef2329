// SPDX-License-Identifier: Apache-2.0
// The stream algorithm: rows streamed through shared memory by the TMA engine (sm_90).
// Resident blocks (or clusters) walk tiles of rows; while a block computes and writes one tile
// from shared memory, a bulk copy of its next tile is already in flight into the other stage, so
// a block's loads do not wait for its reductions and stores, and the bytes in flight do not
// depend on registers.
//
// A tile is one row slice per group: Group == Threads is one row per tile (split over a cluster
// of Cluster blocks for wide rows), Group <= 32 is one row per group of lanes and Threads / Group
// rows per tile (short rows).
#pragma once

#include "bulk_copy.cuh"
#include "grid_dependency.cuh"
#include "pack.cuh"
#include "row_layout.cuh"
#include "row_math.cuh"

namespace kjit {

template <int Cols, typename In, int Cluster>
struct StreamSlices {
  static constexpr int kAlignCols = kBulkUnitBytes / static_cast<int>(sizeof(In));
  /// Columns per block: a multiple of 16 bytes, so every slice starts where a bulk copy may.
  static constexpr int kSliceCols = static_cast<int>(bulk_slice_cols(Cols, sizeof(In), Cluster));
  static_assert((Cluster - 1) * kSliceCols < Cols, "stream: a cluster block would get no columns");
};

/// Each group's share of the row statistics for one tile, over its slice in shared memory.
template <int Op, int Pack, int Group, typename In>
struct SliceStats {
  typedef RowMath<Op> Math;

  __device__ __forceinline__ static void load(const PackOf<In, Pack>* slice, int p, int cols,
                                              float fill, float* v) {
    const PackOf<In, Pack> raw = slice[p];
#pragma unroll
    for (int i = 0; i < Pack; ++i) v[i] = p * Pack + i < cols ? to_float(raw.v[i]) : fill;
  }

  /// Calls visit(v) with each of this thread's packs of the slice as floats (`fill` past cols).
  template <typename Visit>
  __device__ __forceinline__ static void for_each_pack(const PackOf<In, Pack>* slice, int cols,
                                                       float fill, Visit visit) {
    const int packs = (cols + Pack - 1) / Pack;
#pragma unroll 4
    for (int p = threadIdx.x % Group; p < packs; p += Group) {
      float v[Pack];
      load(slice, p, cols, fill, v);
      visit(v);
    }
  }

  __device__ __forceinline__ static OnlineStats online(const PackOf<In, Pack>* slice, int cols) {
    OnlineStats stats = OnlineStats::empty();
    for_each_pack(slice, cols, neg_inf(), [&](const float* v) { stats.add<Pack>(v); });
    return stats;
  }

  __device__ __forceinline__ static float first(const PackOf<In, Pack>* slice, int cols) {
    float first = Math::first_identity();
    for_each_pack(slice, cols, Math::first_identity(), [&](const float* v) {
#pragma unroll
      for (int i = 0; i < Pack; ++i) first = typename Math::FirstOp()(first, Math::first_term(v[i]));
    });
    return first;
  }
};

template <int Op, typename Io, int Cols, int Pack, int Threads, int Group,
          int Cluster>
__global__ void __launch_bounds__(Threads)
stream(const RowParams params) {
  start_after_prior_grids();
  typedef typename Io::in In;
  typedef typename Io::out Out;
  static_assert(!Io::peel, "stream: rows are not peeled (KernelConfig::peel)");
  typedef RowMath<Op> Math;
  typedef StreamSlices<Cols, In, Cluster> Slices;
  typedef SliceStats<Op, Pack, Group, In> Stats;
  constexpr int kRowsPerTile = Threads / Group;
  constexpr int kStages = kStreamStages;
  static_assert(Threads % Group == 0 && (Group <= 32 || kRowsPerTile == 1),
                "stream: a group is part of a warp or the whole block");
  static_assert(Cluster >= 1 && Cluster <= kMaxClusterBlocks, "stream: 1..16 blocks per row");
  static_assert(Cluster == 1 || kRowsPerTile == 1, "stream: clusters take one row per tile");
  static_assert(Pack * sizeof(In) <= kMaxPackBytes && Pack * sizeof(Out) <= kMaxPackBytes,
                "stream: a pack is at most 16 bytes");
  constexpr int kSliceCols = Slices::kSliceCols;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  In* stages = reinterpret_cast<In*>(smem_raw);  // [kStages][kRowsPerTile][kSliceCols]
  __shared__ BulkBarrier landed[kStages];
  __shared__ RowSlots slots;  // this block's statistics (parity 0: a barrier closes each tile)

  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_cols = Cols - slice_begin < kSliceCols ? Cols - slice_begin : kSliceCols;
  // The last slice may end off a 16-byte boundary: its tail is read with ordinary loads.
  const int bulk_cols = slice_cols / Slices::kAlignCols * Slices::kAlignCols;
  const long long tiles = (params.rows + kRowsPerTile - 1) / kRowsPerTile;
  const long long tile_step = gridDim.x / Cluster;
  auto stage_row = [&](int stage, int r) { return stages + (stage * kRowsPerTile + r) * kSliceCols; };
  auto in_row = [&](long long row) {
    return static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
  };
  auto issue = [&](long long tile, int stage) {  // thread 0 only
    const long long first_row = tile * kRowsPerTile;
    const int rows = params.rows - first_row < kRowsPerTile ? static_cast<int>(params.rows - first_row)
                                                            : kRowsPerTile;
    const unsigned bytes = static_cast<unsigned>(bulk_cols * sizeof(In));
    landed[stage].expect_bytes(bytes * rows);
    if (bytes > 0)
      for (int r = 0; r < rows; ++r) bulk_load(stage_row(stage, r), in_row(first_row + r), bytes, landed[stage]);
  };

  const long long first_tile = blockIdx.x / Cluster;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) landed[s].init();
    for (int s = 0; s < kStages; ++s)
      if (first_tile + s * tile_step < tiles) issue(first_tile + s * tile_step, s);
  }
  __syncthreads();

  const int group = threadIdx.x / Group;
  int t = 0;  // tiles this block has done: picks the stage and the barrier phase
  for (long long tile = first_tile; tile < tiles; tile += tile_step, ++t) {
    const int stage = t % kStages;
    const long long row = tile * kRowsPerTile + group;
    const bool live = row < params.rows;
    In* cached = stage_row(stage, group);
    landed[stage].wait((t / kStages) & 1);
    if (bulk_cols < slice_cols) {  // the same for every thread of the block
      if (live)
        for (int c = bulk_cols + threadIdx.x % Group; c < slice_cols; c += Group)
          cached[c] = in_row(row)[c];
      __syncthreads();
    }
    const PackOf<In, Pack>* packs = reinterpret_cast<const PackOf<In, Pack>*>(cached);
    const int cols = live ? slice_cols : 0;

    float first, finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      OnlineStats stats = Stats::online(packs, cols);
      if constexpr (kRowsPerTile > 1) stats = warp_merge<Group>(stats);
      else stats = block_merge<Threads>(stats);
      if constexpr (Cluster > 1) stats = cluster_merge<Cluster>(stats, slots, 0);
      first = stats.max;
      finished = Math::finish(stats.sum);
    } else {
      first = Stats::first(packs, cols);
      if constexpr (kRowsPerTile > 1) first = warp_all_reduce<Group>(first, typename Math::FirstOp());
      else first = row_all_reduce<Threads, Cluster>(first, slots, 0, typename Math::FirstOp());
    }

    if (live) {
      Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
      const int pack_count = (slice_cols + Pack - 1) / Pack;
#pragma unroll 4
      for (int p = threadIdx.x % Group; p < pack_count; p += Group) {
        float v[Pack];
        Stats::load(packs, p, slice_cols, 0.0f, v);
#pragma unroll
        for (int i = 0; i < Pack; ++i) v[i] = Math::apply(v[i], first, finished);
        store_pack<Out, Pack>(out, p * Pack, slice_cols, v);
      }
      if constexpr (Op == kOpReduceScale) {
        if (params.scale_out != nullptr && rank == 0 && threadIdx.x % Group == 0)
          params.scale_out[row] = first;
      }
    }
    // This block is done reading its peers' slots; it waits for them to be done with its own
    // before the next tile overwrites them (or before it exits), with the refill in between.
    if constexpr (Cluster > 1) cluster_arrive();
    __syncthreads();  // every read of this stage is done: it may be refilled
    if (threadIdx.x == 0 && tile + kStages * tile_step < tiles) {
      fence_before_bulk_copy();
      issue(tile + kStages * tile_step, stage);
    }
    if constexpr (Cluster > 1) cluster_wait();
  }
}

}  // namespace kjit
