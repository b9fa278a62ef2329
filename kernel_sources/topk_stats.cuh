// SPDX-License-Identifier: Apache-2.0
// The online softmax statistics of the top-K kernels, with the temperature folded into the
// exponent's scale, and their warp-wide merge.
#pragma once

#include "numeric.cuh"

namespace kjit {

/// (max, sum of 2^((x - max) * c)) of part of a row, with c = log2(e) / temperature.
struct TemperedStats {
  float max;
  float sum;

  __device__ __forceinline__ static TemperedStats empty() { return {neg_inf(), 0.0f}; }
  /// A zero sum stays zero, so an all -inf part never computes -inf - -inf.
  __device__ __forceinline__ static float rescaled(float sum, float from, float to, float c) {
    return sum == 0.0f ? 0.0f : sum * fast_exp2((from - to) * c);
  }
};

/// The warp's merged statistics, in every lane: the maximum first, then each lane's sum scaled
/// to it once and added up (one exponential a lane, where merging pair by pair takes two a
/// step).
__device__ __forceinline__ TemperedStats warp_merge_tempered(TemperedStats s, float c) {
  float max = s.max;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    max = fmaxf(max, __shfl_xor_sync(0xffffffffu, max, offset));
  float sum = TemperedStats::rescaled(s.sum, s.max, max, c);
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  return {max, sum};
}

/// The block's merged statistics, in every thread; `warp_max` and `warp_sum` are shared arrays
/// of one slot per warp.
template <int Threads>
__device__ TemperedStats block_merge_tempered(TemperedStats s, float c, float* warp_max,
                                              float* warp_sum) {
  s = warp_merge_tempered(s, c);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) {
    warp_max[warp] = s.max;
    warp_sum[warp] = s.sum;
  }
  __syncthreads();
  s = lane < Threads / 32 ? TemperedStats{warp_max[lane], warp_sum[lane]} : TemperedStats::empty();
  return warp_merge_tempered(s, c);
}

}  // namespace kjit
