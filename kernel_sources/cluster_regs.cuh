// SPDX-License-Identifier: Apache-2.0
// Several blocks per row (sm_90 thread-block clusters): each of ClusterBlocks blocks keeps one
// slice of the row in registers, and the row's statistics are combined through distributed
// shared memory. For few very wide rows this puts ClusterBlocks SMs on each row instead of
// one, and still reads and writes every element once.
#pragma once

#include "grid_dependency.cuh"
#include "held_row.cuh"
#include "l2_prefetch.cuh"
#include "row_layout.cuh"

namespace kjit {

/// A block's slice of the row (pack_slice_cols) and a thread's share of it.
template <typename In, int Cols, int PackSize, int BlockThreads, int ClusterBlocks>
struct ClusterRegsShape
    : HeldShape<In, PackSize, BlockThreads,
                static_cast<int>(row_share_values(pack_slice_cols(Cols, PackSize, ClusterBlocks), PackSize,
                                                  BlockThreads)),
                BlockThreads> {
  static constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, PackSize, ClusterBlocks));
  static constexpr int kPacks = static_cast<int>(row_share_values(kSliceCols, PackSize, BlockThreads)) / PackSize;
};

/// Asks L2 for the block's slice of its first row before the grid-dependency wait
/// (l2_prefetch.cuh), where slices are 24 KB or more. Measured on the H100 (the C++ benchmark,
/// softmax, us, before and after, one machine, alternated): 8x128256 fp32 6.79-6.80 -> 6.03,
/// bf16 5.51-5.52 -> 4.73-4.74; fp32 1x128256 4.96 -> 4.73-4.74, 1x151936 5.95 -> 5.69-5.70;
/// smaller slices lost or gained little (bf16 1x32000, 4 KB: 3.39-3.40 -> 3.60; 1x128256, 16
/// KB: 4.32 -> 4.40; 1x151936, 19 KB: 4.47 -> 4.36-4.37).
template <typename In, int ClusterBlocks>
__device__ __forceinline__ void prefetch_block_slice(const RowParams& params, int slice_begin, int slice_end) {
  const long long row = blockIdx.x / ClusterBlocks;
  if (row < params.rows && slice_end > slice_begin)
    prefetch_l2(static_cast<const In*>(params.in) + row * params.in_stride + slice_begin,
                (slice_end - slice_begin) * sizeof(In));
}

template <int Op, typename IoTypes, int Cols, int PackSize, int BlockThreads, int ClusterBlocks>
__global__ void __launch_bounds__(BlockThreads, ClusterRegsShape<typename IoTypes::in, Cols, PackSize, BlockThreads, ClusterBlocks>::kMinBlocks)
cluster_regs(const RowParams params) {
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(ClusterBlocks >= 2 && ClusterBlocks <= kMaxClusterBlocks, "cluster_regs: 2..16 blocks per row");
  static_assert(PackSize * sizeof(In) <= kMaxPackBytes && PackSize * sizeof(Out) <= kMaxPackBytes,
                "cluster_regs: a pack is at most 16 bytes");
  typedef ClusterRegsShape<In, Cols, PackSize, BlockThreads, ClusterBlocks> Shape;
  constexpr int kSliceCols = Shape::kSliceCols;
  constexpr int kPacks = Shape::kPacks;
  typedef HeldRow<Op, In, kPacks, PackSize, Shape::kWords> Held;
  static_assert(Shape::kRegisters <= kMaxHeldRegisters,
                "cluster_regs: at most 64 values per thread (128 of 16 bits held as loaded)");
  __shared__ RowSlots slots;  // by row parity: one cluster barrier a row

  const unsigned rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_end = slice_begin + kSliceCols < Cols ? slice_begin + kSliceCols : Cols;
  if constexpr (kSliceCols * sizeof(In) >= 24 * 1024) {
    if (threadIdx.x == 0) prefetch_block_slice<In, ClusterBlocks>(params, slice_begin, slice_end);
  }
  start_after_prior_grids();
  // Clusters stay resident and walk the rows: cluster scheduling is costly, and every block of a
  // cluster runs the same number of iterations, so the cluster barriers always match.
  const long long clusters = gridDim.x / ClusterBlocks;
  int parity = 0;
  for (long long row = blockIdx.x / ClusterBlocks; row < params.rows; row += clusters, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride;
    Held held;
    load_share(held, in, slice_begin + threadIdx.x * PackSize, BlockThreads * PackSize, slice_end);
    float first = held.own_first();
    float finished = 0.0f, factor = 0.0f;
    if constexpr (Math::kTwoStats) {
      // One exchange: each thread's (max, sum) against its own max, merged over the cluster.
      const float own_max = first;
      OnlineStats row_stats = block_merge_once<BlockThreads>(OnlineStats{own_max, held.own_sum(own_max)}, parity);
      row_stats = cluster_merge<ClusterBlocks>(row_stats, slots, parity);
      first = row_stats.max;
      finished = Math::finish(row_stats.sum);
      if constexpr (Op == kOpSoftmax) factor = Math::own_factor(own_max, first, finished);
    } else {
      first = row_all_reduce<BlockThreads, ClusterBlocks>(first, slots, parity, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
#pragma unroll
    for (int p = 0; p < kPacks; ++p)
      held.store(p, out, slice_begin + (p * BlockThreads + threadIdx.x) * PackSize, slice_end, first,
                 finished, factor);
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
