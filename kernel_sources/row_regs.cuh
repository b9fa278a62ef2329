// SPDX-License-Identifier: Apache-2.0
// The row in registers, held by a group of Group threads: a part of a warp or a warp (Group
// <= 32, several rows per block: the warp kernel), or the whole block (Group == Threads: the
// block_regs kernel). One read and one write of the row; see HeldRow for how values are held.
#pragma once

#include "grid_dependency.cuh"
#include "held_row.cuh"
#include "l2_prefetch.cuh"
#include "row_layout.cuh"
#include "row_peel.cuh"

namespace kjit {

/// reduce_scale divides rows of at least this many columns through their reciprocal, prepared
/// once a row (RowMath::prepare_divisor); on the H200 that ran up to 1.49x faster (bf16 16384 x
/// 1000 in the warp kernel: 25.1 -> 19.1 us), while rows of 2-8 columns, where each lane divides
/// a few values, ran 12-14% slower than dividing each value.
constexpr int kPreparedDivisorMinCols = 9;

/// A thread's share of the row: values, whether they stay as loaded words, their registers.
template <typename In, int Cols, int Pack, int Threads, int Group>
struct RowRegsShape : HeldShape<In, Pack, Threads, Group, static_cast<int>(row_share_values(Cols, Pack, Group))> {
  static constexpr int kValues = static_cast<int>(row_share_values(Cols, Pack, Group));
};

/// Columns a thread's share is sized for: the row, or a peeled row's span at its worst shift.
template <typename Io, int Cols, int Pack>
constexpr int kShareCols = Io::peel ? static_cast<int>(peeled_cols(Cols, Pack)) : Cols;

/// The shape of a thread's share for an Io's kernel (the launch bounds take it too).
template <typename Io, int Cols, int Pack, int Threads, int Group>
using RowRegsShapeOf = RowRegsShape<typename Io::in, kShareCols<Io, Cols, Pack>, Pack, Threads, Group>;

/// Loads a thread's share of the row at `in` (`lane` of Group); returns the row's lead on its
/// vector grid (row_peel.cuh), 0 unless Peel.
template <bool Peel, int Pack, int Group, typename Held>
__device__ __forceinline__ int load_row_share(Held& held, const typename Held::Input* in, int lane, int cols) {
  if constexpr (Peel) {
    const int lead = row_lead(reinterpret_cast<unsigned long long>(in), sizeof(*in), Pack);
    load_peeled_share(held, in, static_cast<int>(vector_column(lane, Pack, lead)), Group * Pack, cols);
    return lead;
  } else {
    load_share(held, in, lane * Pack, Group * Pack, cols);
    return 0;
  }
}

/// Writes a thread's share of a peeled row whose output starts off the input's lead, realigned:
/// each lane stores the output vector that starts realign_shift into its pack, completed by the
/// next lane's values (a shuffle), and the lanes at a run's ends the parts no such vector covers
/// (realigned_store).
template <int Pack, int Group, typename Held, typename Out>
__device__ __forceinline__ void store_realigned_share(const Held& held, Out* out, int cols, int lane, int in_lead,
                                                      int shift, float first, float finished, float factor) {
  constexpr int kRun = shuffle_run(Group);
  static_assert(32 % kRun == 0, "store_realigned_share: groups split warps evenly");
  const RealignedStore part = realigned_store(lane % kRun, kRun);
  // The run's own lanes, which share a row: groups past the last row have left the loop.
  const unsigned run_lanes = kRun == 32 ? 0xffffffffu : ((1u << kRun) - 1) << (threadIdx.x % 32 / kRun * kRun);
#pragma unroll
  for (int p = 0; p < Held::kPacks; ++p) {
    const int col = static_cast<int>(vector_column(p * Group + lane, Pack, in_lead));
    float values[Pack];
    held.outputs(p, first, finished, factor, values);
    store_realigned_pack<Out, Pack, kRun>(out, col, cols, values, shift, part, run_lanes);
  }
}

/// Writes a thread's share of a peeled row (or slice) of `cols`: each pack whole where the output
/// shares the input's grid (output_on_input_grid), realigned where it does not (packs of a word or
/// more, Realign).
template <int Pack, int Group, bool Realign, typename Held, typename Out>
__device__ __forceinline__ void store_peeled_share(const Held& held, Out* out, int cols, int lane, int in_lead,
                                                   float first, float finished, float factor) {
  const int out_lead = row_lead(reinterpret_cast<unsigned long long>(out), sizeof(Out), Pack);
  const bool on_grid = output_on_input_grid(in_lead, out_lead);
  if constexpr (Realign && Pack > 1 && PackBits<Out, Pack>::kBytes >= 4) {
    if (!on_grid) {
      store_realigned_share<Pack, Group>(held, out, cols, lane, in_lead, realign_shift(in_lead, out_lead, Pack),
                                         first, finished, factor);
      return;
    }
  }
#pragma unroll
  for (int p = 0; p < Held::kPacks; ++p)
    held.store_peeled(p, out, static_cast<int>(vector_column(p * Group + lane, Pack, in_lead)), cols, first,
                      finished, factor, on_grid);
}

/// Asks L2 for the block's first rows, one a thread, before the grid-dependency wait
/// (l2_prefetch.cuh); 16-bit rows only: fp32 rows gained nothing or lost
/// (docs/experiments/prefetch-and-dependent-launch.md).
template <typename In, int Cols, int Rows>
__device__ __forceinline__ void prefetch_block_rows(const RowParams& params) {
  const long long row = static_cast<long long>(blockIdx.x) * Rows + threadIdx.x;
  if (threadIdx.x < Rows && row < params.rows)
    prefetch_l2(static_cast<const In*>(params.in) + row * params.in_stride, Cols * sizeof(In));
}

/// The body of the warp and block_regs kernels, which launch it with
/// __launch_bounds__(Threads, RowRegsShapeOf<...>::kMinBlocks). It takes the parameters by value,
/// as a kernel does, so that it compiles as the kernel's own code would (see row_smem).
template <int Op, typename Io, int Cols, int Pack, int Threads, int Group>
__device__ __forceinline__ void row_regs(const RowParams params) {
  if constexpr (sizeof(typename Io::in) == 2)
    prefetch_block_rows<typename Io::in, Cols, Threads / Group>(params);
  start_after_prior_grids();
  typedef typename Io::in In;
  typedef typename Io::out Out;
  typedef RowMath<Op> Math;
  typedef RowRegsShapeOf<Io, Cols, Pack, Threads, Group> Shape;
  static_assert(Threads % Group == 0, "row_regs: Threads % Group != 0");
  static_assert(Group <= 32 || Group == Threads,
                "row_regs: a group is part of a warp or the whole block");
  static_assert(Pack * sizeof(In) <= kMaxPackBytes && Pack * sizeof(Out) <= kMaxPackBytes,
                "row_regs: a pack is at most 16 bytes");
  static_assert(Shape::kRegisters <= kMaxHeldRegisters,
                "row_regs: at most 64 values per thread in registers (128 of 16 bits held as loaded)");
  constexpr int kPacks = Shape::kValues / Pack;
  constexpr int kGroupsPerBlock = Threads / Group;
  constexpr bool kPreparedDivisor = Cols >= kPreparedDivisorMinCols;

  const int lane = threadIdx.x % Group;
  const long long row_step = static_cast<long long>(gridDim.x) * kGroupsPerBlock;
  // The loop runs on the block's first row, so every thread of a block runs the same number of
  // iterations and block-wide barriers inside the group reductions are reached by all threads;
  // rows past the end are computed but not stored, and no 64-bit division of the row count
  // comes before the first load.
  for (long long block_row = static_cast<long long>(blockIdx.x) * kGroupsPerBlock; block_row < params.rows;
       block_row += row_step) {
    const long long row = block_row + threadIdx.x / Group;
    const bool live = row < params.rows;
    const In* in = static_cast<const In*>(params.in) + (live ? row : 0) * params.in_stride;
    // reduce_scale divides through the row's reciprocal, prepared once the row's max|x| is known,
    // but for rows of a few columns (kPreparedDivisorMinCols).
    HeldRow<Op, In, kPacks, Pack, Shape::kWords, kPreparedDivisor> held;
    const int lead = load_row_share<Io::peel, Pack, Group>(held, in, lane, live ? Cols : 0);
    float first = held.own_first();
    float finished = 0.0f, factor = 0.0f;
    if constexpr (Math::kTwoStats) {
      float own_max = first;
      OnlineStats row_stats;
      if constexpr (Group <= 32) {
        // Within a warp, a max and then a sum take fewer instructions than merging (max, sum)
        // pairs, which costs exponentials at every step.
        own_max = warp_all_reduce<Group>(own_max, MaxOp());
        row_stats = {own_max, warp_all_reduce<Group>(held.own_sum(own_max), SumOp())};
      } else {
        // Across warps, one exchange instead of two: each thread's (max, sum) against its own max.
        row_stats = block_merge<Threads>(OnlineStats{own_max, held.own_sum(own_max)});
      }
      first = row_stats.max;
      finished = Math::finish(row_stats.sum);
      if constexpr (Op == kOpSoftmax) factor = Math::own_factor(own_max, first, finished);
    } else {
      first = group_all_reduce<Threads, Group>(first, typename Math::FirstOp());
      if constexpr (Op == kOpReduceScale && kPreparedDivisor) {
        const float2 divisor = Math::prepare_divisor(first);
        finished = divisor.x;
        factor = divisor.y;
      }
    }
    if (!live) continue;
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
    if constexpr (Io::peel) {
      constexpr bool kRealign = realigns_share(Shape::kRegisters, Shape::kWords);
      store_peeled_share<Pack, Group, kRealign>(held, out, Cols, lane, lead, first, finished, factor);
    } else {
#pragma unroll
      for (int p = 0; p < kPacks; ++p)
        held.store(p, out, (p * Group + lane) * Pack, Cols, first, finished, factor);
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && lane == 0) params.scale_out[row] = first;
    }
  }
}

}  // namespace kjit
