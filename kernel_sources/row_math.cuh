// SPDX-License-Identifier: Apache-2.0
// What each op computes from a row's statistics. Softmax and log-softmax use (max, sum of
// exp(x - max)); reduce_scale uses one statistic, max|x|, propagating NaN like torch's amax.
#pragma once

#include "numeric.cuh"
#include "pack.cuh"
#include "reduce.cuh"
#include "row_params.cuh"

namespace kjit {

template <int Op>
struct RowMath;

template <int Op>
struct SoftmaxFamily {
  static constexpr bool kTwoStats = true;
  __device__ __forceinline__ static float first_identity() { return neg_inf(); }
  typedef MaxOp FirstOp;
  __device__ __forceinline__ static float first_term(float x) { return x; }
  /// Folds (max, sum) into what `apply` needs: 1/sum for softmax, log(sum) for log-softmax.
  __device__ __forceinline__ static float finish(float sum) {
    return Op == kOpSoftmax ? 1.0f / sum : logf(sum);
  }
  __device__ __forceinline__ static float apply(float x, float max, float finished) {
    return Op == kOpSoftmax ? fast_exp(x - max) * finished : (x - max) - finished;
  }
  /// Sum of exp(x - own_max) over one thread's values, own_max being the largest of them, so
  /// the sum needs no exchange first: a row then takes one exchange of (max, sum) pairs instead
  /// of a max and then a sum. Softmax keeps each exp in place of its value (see own_factor).
  /// A thread of only -inf (or padding past the row, filled with -inf) takes exps against 0,
  /// which are 0, rather than exp(-inf - -inf) = NaN.
  template <int Packs, int N>
  __device__ __forceinline__ static float own_sum(float (&v)[Packs][N], float own_max) {
    const float reference = own_max == neg_inf() ? 0.0f : own_max;
    float sum = 0.0f;
#pragma unroll
    for (int p = 0; p < Packs; ++p) {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const float e = fast_exp(v[p][i] - reference);
        if (Op == kOpSoftmax) v[p][i] = e;
        sum += e;
      }
    }
    return sum;
  }
  /// Softmax: what turns a thread's exp(x - own_max) into exp(x - max) / sum. A thread holding
  /// only -inf (or padding) has exps of 0; in a row of only -inf, 0 * (1 / 0) gives NaN, as torch.
  __device__ __forceinline__ static float own_factor(float own_max, float max, float finished) {
    return (own_max == neg_inf() ? 0.0f : fast_exp(own_max - max)) * finished;
  }
  /// Same as apply, for a value that already holds exp(x - own max) (softmax only).
  __device__ __forceinline__ static float apply_exp(float e, float factor) { return e * factor; }
};

template <> struct RowMath<kOpSoftmax> : SoftmaxFamily<kOpSoftmax> {};
template <> struct RowMath<kOpLogSoftmax> : SoftmaxFamily<kOpLogSoftmax> {};

template <>
struct RowMath<kOpReduceScale> {
  static constexpr bool kTwoStats = false;
  __device__ __forceinline__ static float first_identity() { return 0.0f; }
  typedef MaxNanOp FirstOp;
  __device__ __forceinline__ static float first_term(float x) { return fabsf(x); }
  /// A row of zeros scales to zeros, not 0/0.
  __device__ __forceinline__ static float apply(float x, float absmax, float) {
    return absmax == 0.0f ? 0.0f : __fdiv_rn(x, absmax);
  }
  /// The row's scaled reciprocal (x) and scale (y) for apply_prepared, computed once a row where
  /// the row's values are held: left to the compiler, the reciprocal (a correctly rounded one, with
  /// its own slow path) was computed again for each guarded pack of the warp kernel's short rows,
  /// where the division ran faster (docs/experiments/row-statistics.md).
  __device__ __forceinline__ static float2 prepare_divisor(float absmax) {
    const float scale = divisor_scale(absmax);
    return make_float2(scaled_reciprocal(absmax, scale), scale);
  }
  /// apply through the row's prepared reciprocal and scale (divide_scaled).
  __device__ __forceinline__ static float apply_prepared(float x, float absmax, float reciprocal, float scale) {
    return absmax == 0.0f ? 0.0f : divide_scaled(x, absmax, scale, reciprocal);
  }
};

/// Online (max, sum) for one pass over a row. The guards keep a run of -inf (or an empty part)
/// from turning into exp(-inf - -inf) = NaN, while a real NaN or +inf still poisons the sum.
struct OnlineStats {
  float max;
  float sum;

  __device__ __forceinline__ static OnlineStats empty() { return {neg_inf(), 0.0f}; }

  __device__ __forceinline__ static float scaled(float sum, float from_max, float to_max) {
    return sum == 0.0f ? 0.0f : sum * fast_exp(from_max - to_max);
  }

  template <int N>
  __device__ __forceinline__ void add(const float* x) {
    float pack_max = x[0];
#pragma unroll
    for (int i = 1; i < N; ++i) pack_max = fmaxf(pack_max, x[i]);
    const float new_max = fmaxf(max, pack_max);
    float s = scaled(sum, max, new_max);
#pragma unroll
    for (int i = 0; i < N; ++i) s += x[i] == neg_inf() ? 0.0f : fast_exp(x[i] - new_max);
    max = new_max;
    sum = s;
  }

  __device__ __forceinline__ void merge(OnlineStats other) {
    const float new_max = fmaxf(max, other.max);
    sum = scaled(sum, max, new_max) + scaled(other.sum, other.max, new_max);
    max = new_max;
  }
};

/// Merges OnlineStats across aligned groups of Width lanes: the maximum first, then each lane's
/// sum scaled to it once and added up, one exponential a lane where merging pair by pair takes
/// two a step (ten over a warp) on the row's critical path.
template <int Width>
__device__ __forceinline__ OnlineStats warp_merge(OnlineStats s) {
  float max = s.max;
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2)
    max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, offset, Width));
  float sum = OnlineStats::scaled(s.sum, s.max, max);
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, offset, Width);
  return {max, sum};
}

/// Shared memory of a merge over the warps of Threads threads.
template <int Threads>
struct WarpStats {
  OnlineStats partial[Threads / 32];
  OnlineStats result;
};

/// Merges OnlineStats over Threads consecutive threads starting at a multiple of Threads, which
/// meet at `sync()` (a barrier of exactly those threads); safe to call back to back on the same
/// `partials`, as warps_all_reduce.
template <int Threads, typename Sync>
__device__ __forceinline__ OnlineStats warps_merge(OnlineStats s, WarpStats<Threads>& partials, Sync sync) {
  static_assert(Threads % 32 == 0 && Threads <= 1024,
                "warps_merge: Threads must be a multiple of 32, at most 1024");
  s = warp_merge<32>(s);
  if (Threads == 32) return s;
  const int warp = (threadIdx.x % Threads) / 32, lane = threadIdx.x % 32;
  if (lane == 0) partials.partial[warp] = s;
  sync();
  if (warp == 0) {
    OnlineStats w = lane < Threads / 32 ? partials.partial[lane] : OnlineStats::empty();
    w = warp_merge<32>(w);
    if (lane == 0) partials.result = w;
  }
  sync();
  return partials.result;
}

/// Merges OnlineStats across the whole block.
template <int Threads>
__device__ __forceinline__ OnlineStats block_merge(OnlineStats s) {
  __shared__ WarpStats<Threads> partials;
  return warps_merge<Threads>(s, partials, BlockSync());
}

/// Two sets of one pair a warp, for merges with one barrier (warps_merge_once).
template <int Threads>
struct AlternatingWarpStats {
  OnlineStats pairs[2][Threads / 32];
};

/// Merges OnlineStats over Threads consecutive threads that meet at `sync()`, with one barrier:
/// every warp merges all the warps' pairs itself, where one warp merging them and a second
/// barrier to hand on its result lengthened a row's way to its output
/// (docs/experiments/row-statistics.md). Calls alternate between the two sets (`call`: the
/// caller's count of calls on these `sets`): a warp reaches the next call on the same set only
/// past the barrier of the call between, which every warp reaches after reading.
template <int Threads, typename Sync>
__device__ __forceinline__ OnlineStats warps_merge_once(OnlineStats s, AlternatingWarpStats<Threads>& sets,
                                                        long long call, Sync sync) {
  constexpr int kWarps = Threads / 32;
  static_assert(Threads % 32 == 0 && Threads <= 1024, "warps_merge_once: whole warps, at most 1024 threads");
  s = warp_merge<32>(s);
  if constexpr (kWarps == 1) {
    return s;
  } else {
    constexpr int kWidth = segment_lanes(kWarps);
    OnlineStats(&pairs)[kWarps] = sets.pairs[call & 1];
    const int lane = threadIdx.x % 32;
    if (lane == 0) pairs[(threadIdx.x % Threads) / 32] = s;
    sync();
    const int warp = lane % kWidth;
    return warp_merge<kWidth>(warp < kWarps ? pairs[warp] : OnlineStats::empty());
  }
}

/// Merges OnlineStats across the whole block with one barrier; `call` counts the caller's calls.
template <int Threads>
__device__ __forceinline__ OnlineStats block_merge_once(OnlineStats s, long long call) {
  __shared__ AlternatingWarpStats<Threads> sets;
  return warps_merge_once<Threads>(s, sets, call, BlockSync());
}

/// Merges (max, sum) over the cluster: each block's thread 0 publishes its pair in its set of
/// `slots` for this parity, every warp then reads all of them (see RowSlots for when a set may
/// be written again).
template <int Cluster>
__device__ __forceinline__ OnlineStats cluster_merge(OnlineStats s, RowSlots& slots, int parity) {
  if (threadIdx.x == 0) {
    slots.publish(parity, 0, s.max);
    slots.publish(parity, 1, s.sum);
  }
  cluster_arrive();
  cluster_wait();
  const unsigned lane = threadIdx.x % 32;
  OnlineStats mine = OnlineStats::empty();
  if (lane < Cluster) mine = {slots.remote(parity, 0, lane), slots.remote(parity, 1, lane)};
  return warp_merge<32>(mine);
}

/// The output for one value of a row: RowMath's apply, or where PreparedDivisor reduce_scale's
/// apply_prepared, `finished` and `factor` then holding prepare_divisor's reciprocal and scale.
template <int Op, bool PreparedDivisor>
__device__ __forceinline__ float row_output(float x, float first, float finished, float factor) {
  if constexpr (Op == kOpReduceScale && PreparedDivisor) return RowMath<Op>::apply_prepared(x, first, finished, factor);
  else return RowMath<Op>::apply(x, first, finished);
}

/// The output for one value of a row held in registers: `v` holds exp(x - own max) for softmax
/// (see own_sum; `factor` from own_factor), x for the other ops.
template <int Op, bool PreparedDivisor = false>
__device__ __forceinline__ float held_output(float v, float first, float finished, float factor) {
  if constexpr (Op == kOpSoftmax) return RowMath<Op>::apply_exp(v, factor);
  else return row_output<Op, PreparedDivisor>(v, first, finished, factor);
}

}  // namespace kjit
