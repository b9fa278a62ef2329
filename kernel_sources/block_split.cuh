// SPDX-License-Identifier: Apache-2.0
// A block per row, the row split between registers and shared memory. Most of a thread's share
// (its last Staged packs) goes straight to shared memory by asynchronous copies, which hold
// no registers while in flight; the packs before stay in registers (see HeldRow), so that shared
// memory does not cap the blocks an SM holds. The host stages as many packs as let the most
// threads stay resident: on a full SM (2048 threads, 32 registers each) every byte of every
// row is in flight at once, and one block's barriers hide behind the others' loads
// (docs/experiments/block-split.md).
#pragma once

#include "async_copy.cuh"
#include "grid_dependency.cuh"
#include "held_row.cuh"
#include "row_layout.cuh"
#include "row_peel.cuh"

namespace kjit {

/// Staged packs a pass over shared memory reads ahead. Unrolled whole, the compiler read them
/// all at once into registers and spilled at 32 registers a thread.
constexpr int kStagedUnroll = 2;

/// How a thread of block_split lays out its share of a row (row_layout.cuh).
template <int Op, typename In, int Cols, int Pack, int Threads, int Staged>
struct SplitShape {
  static constexpr int kPacks = static_cast<int>(split_thread_packs(Cols, Pack, Threads));
  static constexpr int kHeldPacks = kPacks - Staged;
  static constexpr bool kWords = holds_input_words(sizeof(In), Pack, Threads);
  static constexpr int kHeldRegisters =
      static_cast<int>(split_held_registers(Cols, sizeof(In), Pack, Threads, Staged));
  /// Blocks an SM should hold, told to the compiler so it keeps within their registers.
  static constexpr int kByRegisters = static_cast<int>(split_blocks_by_registers(Op, Threads, kHeldRegisters));
  static constexpr int kByThreads = 2048 / Threads;
  static constexpr int kMinBlocks =
      kByRegisters < 1 ? 1 : (kByRegisters < kByThreads ? kByRegisters : kByThreads);
};

/// The shape of block_split's threads for an Io: a peeled row's span at its worst shift
/// (row_peel.cuh), or the row.
template <int Op, typename Io, int Cols, int Pack, int Threads, int Staged>
using SplitShapeOf = SplitShape<Op, typename Io::in, Io::peel ? static_cast<int>(peeled_cols(Cols, Pack)) : Cols, Pack,
                                Threads, Staged>;

/// Where a thread's staged packs live: pack p of thread t at slot p * Threads + t, as
/// 32-bit shared-window addresses computed once (generic pointers cost a conversion a pack).
template <typename In, int Pack, int Threads>
struct StagedSlots {
  static constexpr unsigned kPackBytes = Pack * sizeof(In);
  unsigned base;  // this thread's first slot

  __device__ __forceinline__ explicit StagedSlots(const void* smem)
      : base(static_cast<unsigned>(__cvta_generic_to_shared(smem)) + threadIdx.x * kPackBytes) {}
  __device__ __forceinline__ unsigned at(int p) const { return base + p * Threads * kPackBytes; }

  /// Staged pack p as the words shared memory holds. Every pass reads shared memory again, by a
  /// volatile load: with plain loads the compiler kept the values of the first pass in
  /// registers for the next ones, which spilled (bf16 1024x32000 over 512 threads: 148 bytes).
  __device__ __forceinline__ WordPack<In, Pack> words(int p) const {
    WordPack<In, Pack> out;
    constexpr int kWords = WordPack<In, Pack>::kWords;
    if constexpr (kWords == 4)
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(out.w[0]), "=r"(out.w[1]), "=r"(out.w[2]), "=r"(out.w[3]) : "r"(at(p)));
    else if constexpr (kWords == 2)
      asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(out.w[0]), "=r"(out.w[1]) : "r"(at(p)));
    else
      asm volatile("ld.shared.u32 %0, [%1];" : "=r"(out.w[0]) : "r"(at(p)));
    return out;
  }
};

/// Puts staged pack p in flight from column `col` of the row at `in` (on the row's own grid for
/// Peel, row_peel.cuh): a whole pack by an asynchronous copy, the row's end and past it (and a
/// peeled row's head) through registers.
template <bool Peel, int Cols, int Threads, typename In, int Pack>
__device__ __forceinline__ void stage_pack(const StagedSlots<In, Pack, Threads>& slots, unsigned char* smem, int p,
                                           const In* in, int col, In fill) {
  constexpr int kPackBytes = Pack * static_cast<int>(sizeof(In));
  PackOf<In, Pack>* staged = reinterpret_cast<PackOf<In, Pack>*>(smem);
  if constexpr (Peel) {
    if (whole_vector(col, Pack, Cols))
      copy_async<kPackBytes>(slots.at(p), in + col);
    else
      staged[p * Threads + threadIdx.x] = load_peeled_raw_pack<In, Pack>(in, col, Cols, fill);
  } else {
    if (col + Pack <= Cols)
      copy_async<kPackBytes>(slots.at(p), in + col);
    else
      staged[p * Threads + threadIdx.x] = load_raw_pack<In, Pack>(in, col, Cols, fill);
  }
}

/// The first statistic (max, or max |x|) of a thread's staged packs.
template <int Op, typename In, int Pack, int Threads, int Staged, bool Words>
__device__ __forceinline__ float staged_first(const StagedSlots<In, Pack, Threads>& slots) {
  typedef RowMath<Op> Math;
  if constexpr (Words) {
    // Pairs of 16-bit values compared as loaded: one instruction for two.
    unsigned acc = Math::kTwoStats ? filled_words<In, 2>(from_float<In>(neg_inf())).w[0] : 0u;
#pragma unroll kStagedUnroll
    for (int p = 0; p < Staged; ++p) {
      const WordPack<In, Pack> w = slots.words(p);
#pragma unroll
      for (int k = 0; k < WordPack<In, Pack>::kWords; ++k) acc = fold_first_pair<Op, In>(acc, w.w[k]);
    }
    const WordPack<In, 2> pair{{acc}};
    return typename Math::FirstOp()(pair.at(0), pair.at(1));
  } else {
    float first = Math::first_identity();
#pragma unroll kStagedUnroll
    for (int p = 0; p < Staged; ++p) {
      const WordPack<In, Pack> w = slots.words(p);
#pragma unroll
      for (int i = 0; i < Pack; ++i) first = typename Math::FirstOp()(first, Math::first_term(w.at(i)));
    }
    return first;
  }
}

/// Sum of exp(x - reference) over a thread's staged packs.
template <int Staged, typename In, int Pack, int Threads>
__device__ __forceinline__ float staged_sum(const StagedSlots<In, Pack, Threads>& slots,
                                            float reference) {
  float sum = 0.0f;
#pragma unroll kStagedUnroll
  for (int p = 0; p < Staged; ++p) {
    const WordPack<In, Pack> w = slots.words(p);
#pragma unroll
    for (int i = 0; i < Pack; ++i) sum += fast_exp(w.at(i) - reference);
  }
  return sum;
}

template <int Op, typename Io, int Cols, int Pack, int Threads, int Staged>
__global__ void __launch_bounds__(
    Threads, SplitShapeOf<Op, Io, Cols, Pack, Threads, Staged>::kMinBlocks)
block_split(const RowParams params) {
  start_after_prior_grids();
  typedef typename Io::in In;
  typedef typename Io::out Out;
  typedef RowMath<Op> Math;
  typedef SplitShapeOf<Op, Io, Cols, Pack, Threads, Staged> Shape;
  constexpr int kPackBytes = Pack * static_cast<int>(sizeof(In));
  static_assert(kPackBytes >= 4 && kPackBytes <= kMaxPackBytes && Pack * sizeof(Out) <= kMaxPackBytes,
                "block_split: an input pack is 4 to 16 bytes (asynchronous copies), an output pack "
                "at most 16");
  static_assert(Staged >= 1 && Staged <= Shape::kPacks,
                "block_split: 1..(a thread's packs) staged");
  static_assert(Shape::kHeldRegisters <= kMaxHeldRegisters, "block_split: at most 64 registers a thread held");
  constexpr int kHeld = Shape::kHeldPacks;
  constexpr int kStaged = Staged;
  // 128-byte aligned: at 16 (after 80 bytes of static shared memory) the asynchronous copies and
  // 16-byte loads of the staged packs ran slower (docs/experiments/block-split.md).
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const StagedSlots<In, Pack, Threads> slots(smem_raw);
  // Held packs come first in the row, staged ones after: pack p of a thread is at column
  // (p * Threads + thread) * Pack either way.
  auto column = [](int p) { return (p * Threads + static_cast<int>(threadIdx.x)) * Pack; };
  const In fill = from_float<In>(Math::first_identity());

  for (long long row = blockIdx.x; row < params.rows; row += gridDim.x) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride;
    // Peeled rows: every column on the row's own grid (row_peel.cuh), `lead` before it.
    const int lead = Io::peel ? row_lead(reinterpret_cast<unsigned long long>(in), sizeof(In), Pack) : 0;
#pragma unroll
    for (int p = 0; p < kStaged; ++p)
      stage_pack<Io::peel, Cols, Threads>(slots, smem_raw, p, in, column(kHeld + p) - lead, fill);
    HeldRow<Op, In, (kHeld > 0 ? kHeld : 1), Pack, Shape::kWords> held;
    float own_first = Math::first_identity();
    if constexpr (kHeld > 0) {
      // Pack by pack, not load_share: level with it in bf16, slower in fp32
      // (docs/experiments/memory-access.md).
#pragma unroll
      for (int p = 0; p < kHeld; ++p) {
        if constexpr (Io::peel) held.load_peeled(p, in, column(p) - lead, Cols);
        else held.load(p, in, column(p), Cols);
      }
      own_first = held.own_first();  // while the staged packs land
    }
    wait_async_copies();
    own_first = typename Math::FirstOp()(
        own_first, staged_first<Op, In, Pack, Threads, kStaged, Shape::kWords>(slots));

    float first = own_first, finished = 0.0f, factor = 0.0f;
    if constexpr (Math::kTwoStats) {
      // One exchange of (max, sum) pairs, each thread's sum against its own max.
      const float reference = own_first == neg_inf() ? 0.0f : own_first;
      float own_sum = staged_sum<kStaged>(slots, reference);
      if constexpr (kHeld > 0) own_sum += held.own_sum(own_first);
      const OnlineStats row_stats = block_merge<Threads>(OnlineStats{own_first, own_sum});
      first = row_stats.max;
      finished = Math::finish(row_stats.sum);
      if constexpr (Op == kOpSoftmax) factor = Math::own_factor(own_first, first, finished);
    } else {
      first = block_all_reduce<Threads>(first, typename Math::FirstOp());
    }

    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
    const bool on_grid =
        Io::peel && output_on_input_grid(lead, row_lead(reinterpret_cast<unsigned long long>(out), sizeof(Out), Pack));
    if constexpr (kHeld > 0) {
#pragma unroll
      for (int p = 0; p < kHeld; ++p) {
        if constexpr (Io::peel) held.store_peeled(p, out, column(p) - lead, Cols, first, finished, factor, on_grid);
        else held.store(p, out, column(p), Cols, first, finished, factor);
      }
    }
    // reduce_scale's exact division takes registers of its own: one pack at a time.
    constexpr int kOutputUnroll = Op == kOpReduceScale ? 1 : kStagedUnroll;
#pragma unroll kOutputUnroll
    for (int p = 0; p < kStaged; ++p) {
      const WordPack<In, Pack> w = slots.words(p);
      float o[Pack];
#pragma unroll
      for (int i = 0; i < Pack; ++i) o[i] = Math::apply(w.at(i), first, finished);
      if constexpr (Io::peel) store_peeled_words<Out, Pack>(out, column(kHeld + p) - lead, Cols, o, on_grid);
      else store_pack_words<Out, Pack>(out, column(kHeld + p), Cols, o);
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && threadIdx.x == 0) params.scale_out[row] = first;
    }
    // Each thread reads back only the slots it copied into, so the next row needs no barrier.
  }
}

}  // namespace kjit
