// SPDX-License-Identifier: Apache-2.0
// The row kept in (dynamic, opt-in above 48 KB) shared memory in its input type: one read of
// global memory that also keeps the running statistics, then the output from shared memory.
// With ClusterBlocks == 1 one block holds a whole row; with more (sm_90 clusters) each block
// holds a slice and the row's statistics are combined through distributed shared memory.
// Registers stay few, so an SM holds several such blocks and one block's barriers overlap
// another's loads.
#pragma once

#include "grid_dependency.cuh"
#include "pack.cuh"
#include "row_layout.cuh"
#include "row_math.cuh"

namespace kjit {

template <int Op, typename IoTypes, int Cols, int PackSize, int BlockThreads, int ClusterBlocks>
__global__ void __launch_bounds__(BlockThreads)
block_smem(const RowParams params) {
  start_after_prior_grids();
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(PackSize * sizeof(In) <= kMaxPackBytes && PackSize * sizeof(Out) <= kMaxPackBytes,
                "block_smem: a pack is at most 16 bytes");
  static_assert(ClusterBlocks >= 1 && ClusterBlocks <= kMaxClusterBlocks, "block_smem: 1..16 blocks per row");
  // Slices start on pack boundaries so that vector loads stay aligned.
  constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, PackSize, ClusterBlocks));
  constexpr int kPacks = kSliceCols / PackSize;
  // 128-byte aligned, as block_split's (which ran 8% slower at 16).
  extern __shared__ __align__(128) unsigned char smem_raw[];
  Pack<In, PackSize>* cached = reinterpret_cast<Pack<In, PackSize>*>(smem_raw);
  __shared__ RowSlots slots;  // by row parity: one cluster barrier a row

  unsigned rank = 0;
  if constexpr (ClusterBlocks > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_cols = Cols - slice_begin < kSliceCols ? Cols - slice_begin : kSliceCols;
  // Blocks (or clusters) stay resident and walk the rows; all blocks of a cluster run the same
  // iterations, so the cluster barriers always match.
  const long long groups = gridDim.x / ClusterBlocks;
  int parity = 0;
  for (long long row = blockIdx.x / ClusterBlocks; row < params.rows; row += groups, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
    float first = Math::first_identity();
    OnlineStats stats = OnlineStats::empty();  // softmax family: (max, sum) in the same pass
    // Loads go out kBatch at a time before any is stored, so each thread keeps several in flight.
    constexpr int kBatch = 4;
    const In fill = from_float<In>(Math::first_identity());
    for (int base = threadIdx.x; base < kPacks; base += BlockThreads * kBatch) {
      Pack<In, PackSize> raw[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * BlockThreads;
        raw[b] = load_raw_pack<In, PackSize>(in, p * PackSize, p < kPacks ? slice_cols : 0, fill);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * BlockThreads;
        if (p < kPacks) cached[p] = raw[b];
        float v[PackSize];
#pragma unroll
        for (int i = 0; i < PackSize; ++i) v[i] = to_float(raw[b].v[i]);
        if constexpr (Math::kTwoStats) {
          stats.add<PackSize>(v);
        } else {
#pragma unroll
          for (int i = 0; i < PackSize; ++i)
            first = typename Math::FirstOp()(first, Math::first_term(v[i]));
        }
      }
    }
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      stats = block_merge<BlockThreads>(stats);
      if constexpr (ClusterBlocks > 1) stats = cluster_merge<ClusterBlocks>(stats, slots, parity);
      first = stats.max;
      finished = Math::finish(stats.sum);
    } else {
      first = row_all_reduce<BlockThreads, ClusterBlocks>(first, slots, parity, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
    for (int p = threadIdx.x; p < kPacks; p += BlockThreads) {
      const Pack<In, PackSize> raw = cached[p];
      float o[PackSize];
#pragma unroll
      for (int i = 0; i < PackSize; ++i) o[i] = Math::apply(to_float(raw.v[i]), first, finished);
      store_pack_words<Out, PackSize>(out, p * PackSize, slice_cols, o);
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && threadIdx.x == 0) params.scale_out[row] = first;
    }
    __syncthreads();  // the next row overwrites the cache
  }
  // No block may leave while another can still read its slots.
  if constexpr (ClusterBlocks > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

}  // namespace kjit
