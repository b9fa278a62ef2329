// SPDX-License-Identifier: Apache-2.0
// The cluster algorithm: several blocks per row (sm_90 thread-block clusters), each of the
// Cluster blocks keeping one slice of the row in registers, the row's statistics combined
// through distributed shared memory. For few very wide rows this puts Cluster SMs on each row
// instead of one, and still reads and writes every element once. Peeled (Io::peel), each slice
// lies on its own vector grid and is stored as row_regs stores a peeled row.
#pragma once

#include "grid_dependency.cuh"
#include "held_row.cuh"
#include "l2_prefetch.cuh"
#include "row_layout.cuh"
#include "row_regs.cuh"

namespace kjit {

/// A block's slice of the row (pack_slice_cols) and a thread's share of it.
template <typename In, int Cols, int Pack, int Threads, int Cluster, bool Peel>
struct ClusterShape
    : HeldShape<In, Pack, Threads, Threads,
                static_cast<int>(row_share_values(cluster_share_cols(Cols, Pack, Cluster, Peel), Pack, Threads))> {
  static constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, Pack, Cluster));
  static constexpr int kPacks =
      static_cast<int>(row_share_values(cluster_share_cols(Cols, Pack, Cluster, Peel), Pack, Threads)) / Pack;
};

/// Asks L2 for the block's slice of its first row before the grid-dependency wait
/// (l2_prefetch.cuh), where slices are 24 KB or more: smaller slices gained nothing
/// (docs/experiments/prefetch-and-dependent-launch.md).
template <typename In, int Cluster>
__device__ __forceinline__ void prefetch_block_slice(const RowParams& params, int slice_begin, int slice_end) {
  const long long row = blockIdx.x / Cluster;
  if (row < params.rows && slice_end > slice_begin)
    prefetch_l2(static_cast<const In*>(params.in) + row * params.in_stride + slice_begin,
                (slice_end - slice_begin) * sizeof(In));
}

template <int Op, typename Io, int Cols, int Pack, int Threads, int Cluster>
__global__ void __launch_bounds__(Threads,
                                  ClusterShape<typename Io::in, Cols, Pack, Threads, Cluster, Io::peel>::kMinBlocks)
cluster(const RowParams params) {
  typedef typename Io::in In;
  typedef typename Io::out Out;
  typedef RowMath<Op> Math;
  static_assert(Cluster >= 2 && Cluster <= kMaxClusterBlocks, "cluster: 2..16 blocks per row");
  static_assert(Pack * sizeof(In) <= kMaxPackBytes && Pack * sizeof(Out) <= kMaxPackBytes,
                "cluster: a pack is at most 16 bytes");
  typedef ClusterShape<In, Cols, Pack, Threads, Cluster, Io::peel> Shape;
  constexpr int kSliceCols = Shape::kSliceCols;
  constexpr int kPacks = Shape::kPacks;
  typedef HeldRow<Op, In, kPacks, Pack, Shape::kWords> Held;
  static_assert(Shape::kRegisters <= kMaxHeldRegisters,
                "cluster: at most 64 values per thread (128 of 16 bits held as loaded)");
  __shared__ RowSlots slots;  // by row parity: one cluster barrier a row

  const unsigned rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_end = slice_begin + kSliceCols < Cols ? slice_begin + kSliceCols : Cols;
  if constexpr (kSliceCols * sizeof(In) >= 24 * 1024) {
    if (threadIdx.x == 0) prefetch_block_slice<In, Cluster>(params, slice_begin, slice_end);
  }
  start_after_prior_grids();
  // Clusters stay resident and walk the rows: cluster scheduling is costly, and every block of a
  // cluster runs the same number of iterations, so the cluster barriers always match.
  const long long clusters = gridDim.x / Cluster;
  int parity = 0;
  for (long long row = blockIdx.x / Cluster; row < params.rows; row += clusters, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride;
    Held held;
    // Peeled, the slice is a row of its own: columns and leads count from its start.
    int lead = 0;
    if constexpr (Io::peel)
      lead = load_row_share<true, Pack, Threads>(held, in + slice_begin, threadIdx.x, slice_end - slice_begin);
    else
      load_share(held, in, slice_begin + threadIdx.x * Pack, Threads * Pack, slice_end);
    float first = held.own_first();
    float finished = 0.0f, factor = 0.0f;
    if constexpr (Math::kTwoStats) {
      // One exchange: each thread's (max, sum) against its own max, merged over the cluster.
      const float own_max = first;
      OnlineStats row_stats = block_merge_once<Threads>(OnlineStats{own_max, held.own_sum(own_max)}, parity);
      row_stats = cluster_merge<Cluster>(row_stats, slots, parity);
      first = row_stats.max;
      finished = Math::finish(row_stats.sum);
      if constexpr (Op == kOpSoftmax) factor = Math::own_factor(own_max, first, finished);
    } else {
      first = row_all_reduce<Threads, Cluster>(first, slots, parity, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
    if constexpr (Io::peel) {
      constexpr bool kRealign = realigns_share(Shape::kRegisters, Shape::kWords);
      store_peeled_share<Pack, Threads, kRealign>(held, out + slice_begin, slice_end - slice_begin, threadIdx.x, lead,
                                                  first, finished, factor);
    } else {
#pragma unroll
      for (int p = 0; p < kPacks; ++p)
        held.store(p, out, slice_begin + (p * Threads + threadIdx.x) * Pack, slice_end, first, finished, factor);
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && threadIdx.x == 0) params.scale_out[row] = first;
    }
  }
  // No block may leave while another can still read its slots: distributed shared memory of a
  // block that has exited is gone.
  cluster_arrive();
  cluster_wait();
}

}  // namespace kjit
