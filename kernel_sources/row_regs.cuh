// SPDX-License-Identifier: Apache-2.0
// A group of GroupThreads threads per row with the whole row in registers: a part of a warp or
// a warp (GroupThreads <= 32, several rows per block), or the whole block (GroupThreads ==
// BlockThreads). One read and one write of the row; see HeldRow for how values are held.
#pragma once

#include "grid_dependency.cuh"
#include "held_row.cuh"
#include "l2_prefetch.cuh"
#include "row_layout.cuh"

namespace kjit {

/// A thread's share of the row: values, whether they stay as loaded words, their registers.
template <typename In, int Cols, int PackSize, int GroupThreads, int BlockThreads>
struct RowRegsShape : HeldShape<In, PackSize, GroupThreads,
                                static_cast<int>(row_share_values(Cols, PackSize, GroupThreads)), BlockThreads> {
  static constexpr int kValues = static_cast<int>(row_share_values(Cols, PackSize, GroupThreads));
};

/// Asks L2 for the block's first rows, one a thread, before the grid-dependency wait
/// (l2_prefetch.cuh); 16-bit rows only. Measured on the H100 (the C++ benchmark, softmax, us,
/// before and after, one machine, alternated): bf16 65536x128 12.83-12.84 -> 12.00-12.03,
/// 16384x1024 24.04-24.09 -> 23.25-23.26, block_regs 8192x4096 46.17-46.18 -> 45.16-45.43;
/// fp32 rows gained nothing or lost (16384x1024 45.92-45.95 -> 46.56-46.57, 65536x128 level).
template <typename In, int Cols, int Rows>
__device__ __forceinline__ void prefetch_block_rows(const RowParams& params) {
  const long long row = static_cast<long long>(blockIdx.x) * Rows + threadIdx.x;
  if (threadIdx.x < Rows && row < params.rows)
    prefetch_l2(static_cast<const In*>(params.in) + row * params.in_stride, Cols * sizeof(In));
}

template <int Op, typename IoTypes, int Cols, int PackSize, int GroupThreads, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads, RowRegsShape<typename IoTypes::in, Cols, PackSize, GroupThreads, BlockThreads>::kMinBlocks)
row_regs(const RowParams params) {
  if constexpr (sizeof(typename IoTypes::in) == 2)
    prefetch_block_rows<typename IoTypes::in, Cols, BlockThreads / GroupThreads>(params);
  start_after_prior_grids();
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  typedef RowRegsShape<In, Cols, PackSize, GroupThreads, BlockThreads> Shape;
  static_assert(BlockThreads % GroupThreads == 0, "row_regs: BlockThreads % GroupThreads != 0");
  static_assert(GroupThreads <= 32 || GroupThreads == BlockThreads,
                "row_regs: a group is part of a warp or the whole block");
  static_assert(PackSize * sizeof(In) <= kMaxPackBytes && PackSize * sizeof(Out) <= kMaxPackBytes,
                "row_regs: a pack is at most 16 bytes");
  static_assert(Shape::kRegisters <= kMaxHeldRegisters,
                "row_regs: at most 64 values per thread in registers (128 of 16 bits held as loaded)");
  constexpr int kPacks = Shape::kValues / PackSize;
  constexpr int kGroupsPerBlock = BlockThreads / GroupThreads;

  const int lane = threadIdx.x % GroupThreads;
  const long long row_step = static_cast<long long>(gridDim.x) * kGroupsPerBlock;
  // The loop runs on the block's first row, so every thread of a block runs the same number of
  // iterations and block-wide barriers inside the group reductions are reached by all threads;
  // rows past the end are computed but not stored. Counting the iterations instead took a 64-bit
  // division before every block's first load (bf16 16384x1024 24.22 -> 24.17 us, within noise).
  for (long long block_row = static_cast<long long>(blockIdx.x) * kGroupsPerBlock; block_row < params.rows;
       block_row += row_step) {
    const long long row = block_row + threadIdx.x / GroupThreads;
    const bool live = row < params.rows;
    const In* in = static_cast<const In*>(params.in) + (live ? row : 0) * params.in_stride;
    HeldRow<Op, In, kPacks, PackSize, Shape::kWords> held;
    load_share(held, in, lane * PackSize, GroupThreads * PackSize, live ? Cols : 0);
    float first = held.own_first();
    float finished = 0.0f, factor = 0.0f;
    if constexpr (Math::kTwoStats) {
      float own_max = first;
      OnlineStats row_stats;
      if constexpr (GroupThreads <= 32) {
        // Within a warp, a max and then a sum take fewer instructions than merging (max, sum)
        // pairs, which costs exponentials at every step.
        own_max = warp_all_reduce<GroupThreads>(own_max, MaxOp());
        row_stats = {own_max, warp_all_reduce<GroupThreads>(held.own_sum(own_max), SumOp())};
      } else {
        // Across warps, one exchange instead of two: each thread's (max, sum) against its own max.
        row_stats = block_merge<BlockThreads>(OnlineStats{own_max, held.own_sum(own_max)});
      }
      first = row_stats.max;
      finished = Math::finish(row_stats.sum);
      if constexpr (Op == kOpSoftmax) factor = Math::own_factor(own_max, first, finished);
    } else {
      first = group_all_reduce<GroupThreads, BlockThreads>(first, typename Math::FirstOp());
    }
    if (!live) continue;
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
#pragma unroll
    for (int p = 0; p < kPacks; ++p)
      held.store(p, out, (p * GroupThreads + lane) * PackSize, Cols, first, finished, factor);
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && lane == 0) params.scale_out[row] = first;
    }
  }
}

}  // namespace kjit
