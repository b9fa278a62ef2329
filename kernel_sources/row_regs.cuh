// SPDX-License-Identifier: Apache-2.0
// A group of GroupThreads threads per row with the whole row in registers: a part of a warp or
// a warp (GroupThreads <= 32, several rows per block), or the whole block (GroupThreads ==
// BlockThreads). One read and one write of the row.
#pragma once

#include "pack.cuh"
#include "row_math.cuh"

namespace kjit {

/// Blocks an SM should hold, told to the compiler for threads of more than 32 values: as many
/// as 64K registers hold at the values plus 16 (addresses, statistics). Left alone, it gave
/// threads of 64 values 128-150 registers (two blocks of 256 an SM instead of three).
template <int Cols, int PackSize, int GroupThreads, int BlockThreads>
struct RowRegsOccupancy {
  static constexpr int kValues =
      (Cols + GroupThreads * PackSize - 1) / (GroupThreads * PackSize) * PackSize;
  static constexpr int kByRegisters = 65536 / (BlockThreads * (kValues + 16));
  static constexpr int kMinBlocks = kValues > 32 && kByRegisters > 1 ? kByRegisters : 0;
};

template <int Op, typename IoTypes, int Cols, int PackSize, int GroupThreads, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads, RowRegsOccupancy<Cols, PackSize, GroupThreads, BlockThreads>::kMinBlocks)
row_regs(const RowParams params) {
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(BlockThreads % GroupThreads == 0, "row_regs: BlockThreads % GroupThreads != 0");
  static_assert(GroupThreads <= 32 || GroupThreads == BlockThreads,
                "row_regs: a group is part of a warp or the whole block");
  static_assert(PackSize * sizeof(In) <= 16 && PackSize * sizeof(Out) <= 16,
                "row_regs: a pack is at most 16 bytes");
  constexpr int kPacks = RowRegsOccupancy<Cols, PackSize, GroupThreads, BlockThreads>::kValues / PackSize;
  static_assert(kPacks * PackSize <= 64, "row_regs: at most 64 values per thread in registers");
  constexpr int kGroupsPerBlock = BlockThreads / GroupThreads;

  const int lane = threadIdx.x % GroupThreads;
  const long long first_row = static_cast<long long>(blockIdx.x) * kGroupsPerBlock +
                              threadIdx.x / GroupThreads;
  const long long row_step = static_cast<long long>(gridDim.x) * kGroupsPerBlock;
  // Every thread of a block runs the same number of iterations, so block-wide barriers inside
  // the group reductions are reached by all threads; rows past the end are computed but not stored.
  const long long rows_rounded = (params.rows + row_step - 1) / row_step * row_step;
  for (long long row = first_row; row < rows_rounded; row += row_step) {
    const bool live = row < params.rows;
    const In* in = static_cast<const In*>(params.in) + (live ? row : 0) * params.in_stride;
    float v[kPacks][PackSize];
    float first = Math::first_identity();
#pragma unroll
    for (int p = 0; p < kPacks; ++p) {
      const int col = (p * GroupThreads + lane) * PackSize;
      load_pack<In, PackSize>(in, col, live ? Cols : 0, Math::first_identity(), v[p]);
#pragma unroll
      for (int i = 0; i < PackSize; ++i)
        first = typename Math::FirstOp()(first, Math::first_term(v[p][i]));
    }
    float finished = 0.0f, factor = 0.0f;
    if constexpr (Math::kTwoStats) {
      float own_max = first;
      OnlineStats row_stats;
      if constexpr (GroupThreads <= 32) {
        // Within a warp, a max and then a sum take fewer instructions than merging (max, sum)
        // pairs, which costs exponentials at every step.
        own_max = warp_all_reduce<GroupThreads>(own_max, MaxOp());
        row_stats = {own_max, warp_all_reduce<GroupThreads>(Math::own_sum(v, own_max), SumOp())};
      } else {
        // Across warps, one exchange instead of two: each thread's (max, sum) against its own max.
        row_stats = block_merge<BlockThreads>(OnlineStats{own_max, Math::own_sum(v, own_max)});
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
      store_held_pack<Op, Out, PackSize>(out, (p * GroupThreads + lane) * PackSize, Cols, v[p],
                                         first, finished, factor);
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && lane == 0) params.scale_out[row] = first;
    }
  }
}

}  // namespace kjit
