// SPDX-License-Identifier: Apache-2.0
// Several blocks per row (sm_90 thread-block clusters): each of ClusterBlocks blocks keeps one
// slice of the row in registers, and the row's statistics are combined through distributed
// shared memory. For few very wide rows this puts ClusterBlocks SMs on each row instead of
// one, and still reads and writes every element once.
#pragma once

#include "pack.cuh"
#include "row_math.cuh"

namespace kjit {

template <int Op, typename IoTypes, int Cols, int PackSize, int BlockThreads, int ClusterBlocks>
__global__ void __launch_bounds__(BlockThreads)
cluster_regs(const RowParams params) {
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(ClusterBlocks >= 2 && ClusterBlocks <= 16, "cluster_regs: 2..16 blocks per row");
  static_assert(PackSize * sizeof(In) <= 16 && PackSize * sizeof(Out) <= 16,
                "cluster_regs: a pack is at most 16 bytes");
  // Slices start on pack boundaries so that vector loads stay aligned.
  constexpr int kSliceCols =
      ((Cols + ClusterBlocks - 1) / ClusterBlocks + PackSize - 1) / PackSize * PackSize;
  constexpr int kPacks = (kSliceCols + BlockThreads * PackSize - 1) / (BlockThreads * PackSize);
  static_assert(kPacks * PackSize <= 64, "cluster_regs: at most 64 values per thread");
  __shared__ float slots[2];

  const unsigned rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_end = slice_begin + kSliceCols < Cols ? slice_begin + kSliceCols : Cols;
  // Clusters stay resident and walk the rows: cluster scheduling is costly, and every block of a
  // cluster runs the same number of iterations, so the cluster barriers always match.
  const long long clusters = gridDim.x / ClusterBlocks;
  for (long long row = blockIdx.x / ClusterBlocks; row < params.rows; row += clusters) {
      const In* in = static_cast<const In*>(params.in) + row * params.in_stride;

      float v[kPacks][PackSize];
      float first = Math::first_identity();
    #pragma unroll
      for (int p = 0; p < kPacks; ++p) {
        const int col = slice_begin + (p * BlockThreads + threadIdx.x) * PackSize;
        load_pack<In, PackSize>(in, col, slice_end, Math::first_identity(), v[p]);
    #pragma unroll
        for (int i = 0; i < PackSize; ++i)
          first = typename Math::FirstOp()(first, Math::first_term(v[p][i]));
      }
      first = block_all_reduce<BlockThreads>(first, typename Math::FirstOp());
      if (threadIdx.x == 0) slots[0] = first;
      cluster_arrive();
      cluster_wait();
    first = reduce_cluster_slots<ClusterBlocks>(&slots[0], typename Math::FirstOp());
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      float sum = 0.0f;
#pragma unroll
      for (int p = 0; p < kPacks; ++p) {
#pragma unroll
        for (int i = 0; i < PackSize; ++i) {
          const int col = slice_begin + (p * BlockThreads + threadIdx.x) * PackSize + i;
          const float e = col < slice_end ? Math::second_term(v[p][i], first) : 0.0f;
          if (Op == kOpSoftmax) v[p][i] = e;
          sum += e;
        }
      }
      sum = block_all_reduce<BlockThreads>(sum, SumOp());
      if (threadIdx.x == 0) slots[1] = sum;
      cluster_arrive();
      cluster_wait();
      finished = Math::finish(reduce_cluster_slots<ClusterBlocks>(&slots[1], SumOp()));
    }
    // No block may leave, or overwrite its slots for the next row, while another can still read
    // them; the wait sits at the very end so the stores overlap with the slower blocks' reads.
    cluster_arrive();
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      float o[PackSize];
#pragma unroll
      for (int i = 0; i < PackSize; ++i) {
        if constexpr (Op == kOpSoftmax) o[i] = Math::apply_exp(v[p][i], finished);
        else o[i] = Math::apply(v[p][i], first, finished);
      }
      store_pack<Out, PackSize>(out, slice_begin + (p * BlockThreads + threadIdx.x) * PackSize,
                                slice_end, o);
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && threadIdx.x == 0) params.scale_out[row] = first;
    }
    cluster_wait();
  }
}

}  // namespace kjit
