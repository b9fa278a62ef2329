// SPDX-License-Identifier: Apache-2.0
// Rows too wide to keep on chip, read twice: one pass keeps the running (max, sum), a second
// pass reads the row again and writes. A block (ClusterBlocks == 1) or (sm_90) a cluster of
// blocks per row, each block one slice; blocks or clusters stay resident and walk the rows.
//
// The second read is meant to come from L2: the first read asks L2 to keep the lines and the
// second read and the output ask it to evict theirs first, and the grid holds only as many rows
// in flight as the resident blocks need (rowwise_grid), so the slices being re-read still fit.
// Any width.
#pragma once

#include "l2_hints.cuh"
#include "pack.cuh"
#include "row_math.cuh"

namespace kjit {

template <int Op, typename IoTypes, int Cols, int PackSize, int BlockThreads, int ClusterBlocks>
__global__ void __launch_bounds__(BlockThreads)
block_online(const RowParams params) {
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(PackSize * sizeof(In) <= 16 && PackSize * sizeof(Out) <= 16,
                "block_online: a pack is at most 16 bytes");
  static_assert(ClusterBlocks >= 1 && ClusterBlocks <= 16, "block_online: 1..16 blocks per row");
  // Slices start on pack boundaries so that vector loads stay aligned.
  constexpr int kSliceCols =
      ((Cols + ClusterBlocks - 1) / ClusterBlocks + PackSize - 1) / PackSize * PackSize;
  static_assert((ClusterBlocks - 1) * kSliceCols < Cols, "block_online: a cluster block would get no columns");
  constexpr int kPacks = (kSliceCols + PackSize - 1) / PackSize;
  // Loads each thread has in flight before it waits: 32 values, measured best on the H100 for
  // 4- and 8-value packs alike.
  constexpr int kBatch = 32 / PackSize;
  // Two sets of cluster slots, one per row parity: a block writes a row's slots only after the
  // previous row's cluster barrier, which every block passes only after reading the slots of
  // the row before it, so one barrier per row is enough.
  __shared__ float slots[2][2];

  unsigned rank = 0;
  if constexpr (ClusterBlocks > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_cols = Cols - slice_begin < kSliceCols ? Cols - slice_begin : kSliceCols;
  const L2Policy keep = l2_keep_policy(), stream = l2_stream_policy();
  const long long groups = gridDim.x / ClusterBlocks;
  int parity = 0;
  for (long long row = blockIdx.x / ClusterBlocks; row < params.rows; row += groups, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
    float* slot = slots[parity];
    float first = Math::first_identity();
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      OnlineStats stats = OnlineStats::empty();
      for (int base = threadIdx.x; base < kPacks; base += BlockThreads * kBatch) {
        float v[kBatch][PackSize];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          const int p = base + b * BlockThreads;
          load_pack_with_policy<In, PackSize>(in, p * PackSize, p < kPacks ? slice_cols : 0,
                                              neg_inf(), v[b], keep);
        }
        stats.add<kBatch * PackSize>(&v[0][0]);  // one rescale per batch
      }
      stats = block_merge<BlockThreads>(stats);
      if constexpr (ClusterBlocks > 1) stats = cluster_merge<ClusterBlocks>(stats, slot);
      first = stats.max;
      finished = Math::finish(stats.sum);
    } else {
      for (int base = threadIdx.x; base < kPacks; base += BlockThreads * kBatch) {
        float v[kBatch][PackSize];
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          const int p = base + b * BlockThreads;
          load_pack_with_policy<In, PackSize>(in, p * PackSize, p < kPacks ? slice_cols : 0,
                                              Math::first_identity(), v[b], keep);
        }
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
          for (int i = 0; i < PackSize; ++i)
            first = typename Math::FirstOp()(first, Math::first_term(v[b][i]));
      }
      first = row_all_reduce<BlockThreads, ClusterBlocks>(first, slot, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
    for (int base = threadIdx.x; base < kPacks; base += BlockThreads * kBatch) {
      float v[kBatch][PackSize];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * BlockThreads;
        load_pack_with_policy<In, PackSize>(in, p * PackSize, p < kPacks ? slice_cols : 0, 0.0f,
                                            v[b], stream);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * BlockThreads;
        if (p >= kPacks) break;
#pragma unroll
        for (int i = 0; i < PackSize; ++i) v[b][i] = Math::apply(v[b][i], first, finished);
        store_pack_with_policy<Out, PackSize>(out, p * PackSize, slice_cols, v[b], stream);
      }
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && threadIdx.x == 0) params.scale_out[row] = first;
    }
  }
  // No block may leave while another can still read its slots.
  if constexpr (ClusterBlocks > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

}  // namespace kjit
