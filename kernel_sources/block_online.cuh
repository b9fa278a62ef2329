// SPDX-License-Identifier: Apache-2.0
// One block per row for rows too wide to cache: one pass keeps the running (max, sum) of the
// row, a second pass reads it again and writes. Any width; the second read often hits L2.
#pragma once

#include "pack.cuh"
#include "row_math.cuh"

namespace kjit {

template <int Op, typename IoTypes, int Cols, int PackSize, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads)
block_online(const RowParams params) {
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(PackSize * sizeof(In) <= 16 && PackSize * sizeof(Out) <= 16,
                "block_online: a pack is at most 16 bytes");
  constexpr int kPacks = (Cols + PackSize - 1) / PackSize;

  for (long long row = blockIdx.x; row < params.rows; row += gridDim.x) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride;
    float first = Math::first_identity();
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      OnlineStats stats = OnlineStats::empty();
      for (int p = threadIdx.x; p < kPacks; p += BlockThreads) {
        float v[PackSize];
        load_pack<In, PackSize>(in, p * PackSize, Cols, neg_inf(), v);
        stats.add<PackSize>(v);
      }
      stats = block_merge<BlockThreads>(stats);
      first = stats.max;
      finished = Math::finish(stats.sum);
    } else {
      for (int p = threadIdx.x; p < kPacks; p += BlockThreads) {
        float v[PackSize];
        load_pack<In, PackSize>(in, p * PackSize, Cols, Math::first_identity(), v);
#pragma unroll
        for (int i = 0; i < PackSize; ++i)
          first = typename Math::FirstOp()(first, Math::first_term(v[i]));
      }
      first = block_all_reduce<BlockThreads>(first, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
    for (int p = threadIdx.x; p < kPacks; p += BlockThreads) {
      float v[PackSize];
      load_pack<In, PackSize>(in, p * PackSize, Cols, 0.0f, v);
#pragma unroll
      for (int i = 0; i < PackSize; ++i) v[i] = Math::apply(v[i], first, finished);
      store_pack<Out, PackSize>(out, p * PackSize, Cols, v);
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && threadIdx.x == 0) params.scale_out[row] = first;
    }
  }
}

}  // namespace kjit
