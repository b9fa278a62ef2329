// SPDX-License-Identifier: Apache-2.0
// A thread's share of a row kept in registers from its read to its write (row_regs.cuh and the
// cluster kernel). 16-bit inputs spread over more than a warp stay as loaded, two values to a
// register: a block then holds its row in half the registers, so an SM keeps twice as many
// rows in flight. The price is a second exponential per softmax value, which a warp's short
// rows, already many to an SM, do not repay (docs/experiments/held-words.md).
#pragma once

#include "pack.cuh"
#include "peeled_pack.cuh"
#include "row_layout.cuh"
#include "row_math.cuh"

namespace kjit {

/// Blocks an SM should hold, told to the compiler (__launch_bounds__) for threads of many held
/// values: as many as 64K registers hold at the held registers plus what the rest of a thread
/// needs (16 beside floats; 32 beside words, whose every pass converts them again). Left alone,
/// the compiler gave threads of 64 floats 128-150 registers (two blocks of 256 an SM instead of
/// three), and 256 threads of 64 bf16 values held as words 128 (two blocks an SM, not four).
template <int HeldRegisters, bool Words, int Threads>
struct HeldOccupancy {
  static constexpr int kOthers = Words ? 32 : 16;
  static constexpr int kByRegisters = 65536 / (Threads * (HeldRegisters + kOthers));
  static constexpr int kMinBlocks =
      HeldRegisters > (Words ? 16 : 32) && kByRegisters > 1 ? kByRegisters : 0;
};

/// How a thread of a row spread over Group threads holds its Values: as words or floats, in how
/// many registers, and the blocks of Threads threads an SM should hold.
template <typename In, int Pack, int Threads, int Group, int Values>
struct HeldShape {
  static constexpr bool kWords = holds_input_words(sizeof(In), Pack, Group);
  static constexpr int kRegisters = static_cast<int>(held_registers(kWords, Values));
  static constexpr int kMinBlocks = HeldOccupancy<kRegisters, kWords, Threads>::kMinBlocks;
};

/// Loads a thread's share of a row into `held` (a HeldRow): pack p at column first_col + p *
/// col_step of a row of `cols`, 16-bit shares with one bounds check (see load_packs).
template <typename Held>
__device__ __forceinline__ void load_share(Held& held, const typename Held::Input* row, int first_col, int col_step,
                                           int cols) {
  load_packs<typename Held::Input, Held::kPackSize, Held::kPacks>(
      [&](int p) { return first_col + p * col_step; }, cols,
      [&](int p, int col, int end) { held.load(p, row, col, end); });
}

/// Values held as floats. Softmax replaces each by exp(x - own max) in own_sum, so the output
/// takes a multiply (see RowMath::own_sum and own_factor). PreparedDivisor: reduce_scale divides
/// through the row's reciprocal and scale, passed as `finished` and `factor`
/// (RowMath::prepare_divisor, apply_prepared).
template <int Op, typename In, int Packs, int Pack, bool Words, bool PreparedDivisor = false>
struct HeldRow {
  typedef RowMath<Op> Math;
  typedef In Input;
  static constexpr int kPacks = Packs, kPackSize = Pack;
  static constexpr bool kHoldsWords = false;
  static constexpr int kRegisters = Packs * Pack;
  float v[Packs][Pack];

  __device__ __forceinline__ void load(int p, const In* row, int col, int cols) {
    load_pack<In, Pack>(row, col, cols, Math::first_identity(), v[p]);
  }
  /// Pack p as the vector at column `col` of a peeled row (peeled_pack.cuh).
  __device__ __forceinline__ void load_peeled(int p, const In* row, int col, int cols) {
    load_peeled_pack<In, Pack>(row, col, cols, Math::first_identity(), v[p]);
  }
  /// Pack p from a whole pack in shared memory.
  __device__ __forceinline__ void take(int p, const PackOf<In, Pack>* source) {
    const PackOf<In, Pack> raw = *source;
#pragma unroll
    for (int i = 0; i < Pack; ++i) v[p][i] = to_float(raw.v[i]);
  }
  /// The thread's max (softmax family) or max |x| (reduce_scale).
  __device__ __forceinline__ float own_first() const {
    float first = Math::first_identity();
#pragma unroll
    for (int p = 0; p < Packs; ++p)
#pragma unroll
      for (int i = 0; i < Pack; ++i) first = typename Math::FirstOp()(first, Math::first_term(v[p][i]));
    return first;
  }
  /// Sum of exp(x - reference_max) over the thread's values (softmax family).
  __device__ __forceinline__ float own_sum(float reference_max) { return Math::own_sum(v, reference_max); }
  /// The outputs of pack p (first, finished: the row's; factor: own_factor against the max
  /// own_sum was given).
  __device__ __forceinline__ void outputs(int p, float first, float finished, float factor,
                                          float (&o)[Pack]) const {
#pragma unroll
    for (int i = 0; i < Pack; ++i) o[i] = held_output<Op, PreparedDivisor>(v[p][i], first, finished, factor);
  }
  /// Writes pack p at column `col` of a row of `cols` (first, finished, factor: as `outputs`).
  template <typename Out>
  __device__ __forceinline__ void store(int p, Out* row, int col, int cols, float first, float finished,
                                        float factor) const {
    float o[Pack];
    outputs(p, first, finished, factor, o);
    store_pack<Out, Pack>(row, col, cols, o);
  }
  /// Writes pack p as the vector at column `col` of a peeled row; `on_grid`: see store_peeled_pack.
  template <typename Out>
  __device__ __forceinline__ void store_peeled(int p, Out* row, int col, int cols, float first, float finished,
                                               float factor, bool on_grid) const {
    float o[Pack];
    outputs(p, first, finished, factor, o);
    store_peeled_pack<Out, Pack>(row, col, cols, o, on_grid);
  }
};

/// Both halves' maxima of two words of 16-bit values: NaN losing (as fmaxf) or winning.
template <bool NanWins>
__device__ __forceinline__ unsigned max_pair(unsigned a, unsigned b, bf16) {
  if constexpr (NanWins) asm("max.NaN.bf16x2 %0, %0, %1;" : "+r"(a) : "r"(b));
  else asm("max.bf16x2 %0, %0, %1;" : "+r"(a) : "r"(b));
  return a;
}
template <bool NanWins>
__device__ __forceinline__ unsigned max_pair(unsigned a, unsigned b, f16) {
  if constexpr (NanWins) asm("max.NaN.f16x2 %0, %0, %1;" : "+r"(a) : "r"(b));
  else asm("max.f16x2 %0, %0, %1;" : "+r"(a) : "r"(b));
  return a;
}

/// Folds a word into a running pair of first statistics: the max for the softmax family, max
/// |x| with NaN winning for reduce_scale (as MaxNanOp).
template <int Op, typename In>
__device__ __forceinline__ unsigned fold_first_pair(unsigned acc, unsigned w) {
  if constexpr (RowMath<Op>::kTwoStats) return max_pair<false>(acc, w, In{});
  else return max_pair<true>(acc, w & 0x7fff7fffu, In{});  // |x| of both halves; NaN stays NaN
}

/// How each pass over held words widens them without the compilers merging two passes'
/// conversions, which keeps every float of the first alive into the second (NVVM and ptxas both
/// did, and log-softmax spilled): an empty asm statement between passes claims to change the
/// words, which stops NVVM; bfloat16's sum pass widens with a byte permute, which ptxas cannot
/// equate with the other passes' shift and mask; half-precision widening has one form only, so
/// its words pass through an identity byte permute instead (docs/experiments/held-words.md).
template <typename In>
struct WordWidening;

template <>
struct WordWidening<bf16> {
  __device__ __forceinline__ static float for_sum(unsigned word, bool upper) {
    unsigned bits;
    if (upper) asm("prmt.b32 %0, %1, 0, 0x3244;" : "=r"(bits) : "r"(word));  // bytes 3, 2, then zeros
    else asm("prmt.b32 %0, %1, 0, 0x1044;" : "=r"(bits) : "r"(word));        // bytes 1, 0, then zeros
    return __uint_as_float(bits);
  }
  __device__ __forceinline__ static void between_passes(unsigned& word) { asm volatile("" : "+r"(word)); }
};

template <>
struct WordWidening<f16> {
  __device__ __forceinline__ static float for_sum(unsigned word, bool upper) {
    return WordPack<f16, 2>{{word}}.at(upper ? 1 : 0);
  }
  __device__ __forceinline__ static void between_passes(unsigned& word) {
    asm volatile("prmt.b32 %0, %0, 0, 0x3210;" : "+r"(word));
  }
};

/// Values held as the loaded 32-bit words of 16-bit inputs; every pass widens them again.
template <int Op, typename In, int Packs, int Pack, bool PreparedDivisor>
struct HeldRow<Op, In, Packs, Pack, true, PreparedDivisor> {
  typedef RowMath<Op> Math;
  typedef In Input;
  static constexpr int kPacks = Packs, kPackSize = Pack;
  static constexpr bool kHoldsWords = true;
  static constexpr int kWords = WordPack<In, Pack>::kWords;
  static constexpr int kRegisters = Packs * kWords;
  WordPack<In, Pack> packs[Packs];

  __device__ __forceinline__ void load(int p, const In* row, int col, int cols) {
    packs[p] = load_word_pack<In, Pack>(row, col, cols, from_float<In>(Math::first_identity()));
  }
  __device__ __forceinline__ void load_peeled(int p, const In* row, int col, int cols) {
    packs[p] = load_peeled_word_pack<In, Pack>(row, col, cols, from_float<In>(Math::first_identity()));
  }
  /// Pack p from a whole 16-byte pack in shared memory.
  __device__ __forceinline__ void take(int p, const PackOf<In, Pack>* source) {
    static_assert(kWords == 4, "HeldRow::take: 16-byte packs");
    const uint4 q = *reinterpret_cast<const uint4*>(source);
    packs[p].w[0] = q.x, packs[p].w[1] = q.y, packs[p].w[2] = q.z, packs[p].w[3] = q.w;
  }
  __device__ __forceinline__ float own_first() {
    unsigned acc = Math::kTwoStats ? packs[0].w[0] : 0u;  // 0: |x| starts at +0 in both halves
#pragma unroll
    for (int p = 0; p < Packs; ++p)
#pragma unroll
      for (int k = 0; k < kWords; ++k) acc = fold_first_pair<Op, In>(acc, packs[p].w[k]);
    const WordPack<In, 2> pair{{acc}};
    forget_floats();
    return typename Math::FirstOp()(pair.at(0), pair.at(1));
  }
  __device__ __forceinline__ float own_sum(float reference_max) {
    // A thread of only -inf (or padding) takes exps against 0, which are 0, not NaN.
    const float reference = reference_max == neg_inf() ? 0.0f : reference_max;
    float sum = 0.0f;
#pragma unroll
    for (int p = 0; p < Packs; ++p)
#pragma unroll
      for (int i = 0; i < Pack; ++i)
        sum += fast_exp(WordWidening<In>::for_sum(packs[p].w[i / 2], i % 2 == 1) - reference);
    forget_floats();
    return sum;
  }
  __device__ __forceinline__ void outputs(int p, float first, float finished, float factor, float (&o)[Pack]) const {
#pragma unroll
    for (int i = 0; i < Pack; ++i) o[i] = row_output<Op, PreparedDivisor>(packs[p].at(i), first, finished, factor);
  }
  template <typename Out>
  __device__ __forceinline__ void store(int p, Out* row, int col, int cols, float first, float finished,
                                        float factor) const {
    float o[Pack];
    outputs(p, first, finished, factor, o);
    store_pack<Out, Pack>(row, col, cols, o);
  }
  /// Writes pack p as the vector at column `col` of a peeled row; `on_grid`: see store_peeled_pack.
  template <typename Out>
  __device__ __forceinline__ void store_peeled(int p, Out* row, int col, int cols, float first, float finished,
                                               float factor, bool on_grid) const {
    float o[Pack];
    outputs(p, first, finished, factor, o);
    store_peeled_pack<Out, Pack>(row, col, cols, o, on_grid);
  }

 private:
  __device__ __forceinline__ void forget_floats() {
#pragma unroll
    for (int p = 0; p < Packs; ++p)
#pragma unroll
      for (int k = 0; k < kWords; ++k) WordWidening<In>::between_passes(packs[p].w[k]);
  }
};

}  // namespace kjit
