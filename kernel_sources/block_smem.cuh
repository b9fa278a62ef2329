// SPDX-License-Identifier: Apache-2.0
// One block per row with the row kept in (dynamic, opt-in above 48 KB) shared memory in its
// input type: one read of global memory, then the statistics and the output from shared memory.
#pragma once

#include "pack.cuh"
#include "row_math.cuh"

namespace kjit {

template <int Op, typename IoTypes, int Cols, int PackSize, int BlockThreads>
__global__ void __launch_bounds__(BlockThreads)
block_smem(const RowParams params) {
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(PackSize * sizeof(In) <= 16 && PackSize * sizeof(Out) <= 16,
                "block_smem: a pack is at most 16 bytes");
  constexpr int kColsRounded = (Cols + PackSize - 1) / PackSize * PackSize;
  constexpr int kPacks = kColsRounded / PackSize;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Pack<In, PackSize>* cached = reinterpret_cast<Pack<In, PackSize>*>(smem_raw);

  for (long long row = blockIdx.x; row < params.rows; row += gridDim.x) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride;
    float first = Math::first_identity();
    for (int p = threadIdx.x; p < kPacks; p += BlockThreads) {
      float v[PackSize];
      load_pack<In, PackSize>(in, p * PackSize, Cols, Math::first_identity(), v);
      Pack<In, PackSize> raw;
#pragma unroll
      for (int i = 0; i < PackSize; ++i) {
        raw.v[i] = from_float<In>(v[i]);  // exact: v came from In
        first = typename Math::FirstOp()(first, Math::first_term(v[i]));
      }
      cached[p] = raw;
    }
    first = block_all_reduce<BlockThreads>(first, typename Math::FirstOp());
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      float sum = 0.0f;
      for (int p = threadIdx.x; p < kPacks; p += BlockThreads) {
        const Pack<In, PackSize> raw = cached[p];
#pragma unroll
        for (int i = 0; i < PackSize; ++i)
          if (p * PackSize + i < Cols) sum += Math::second_term(to_float(raw.v[i]), first);
      }
      sum = block_all_reduce<BlockThreads>(sum, SumOp());
      finished = Math::finish(sum);
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride;
    for (int p = threadIdx.x; p < kPacks; p += BlockThreads) {
      const Pack<In, PackSize> raw = cached[p];
      float o[PackSize];
#pragma unroll
      for (int i = 0; i < PackSize; ++i) o[i] = Math::apply(to_float(raw.v[i]), first, finished);
      store_pack<Out, PackSize>(out, p * PackSize, Cols, o);
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && threadIdx.x == 0) params.scale_out[row] = first;
    }
    __syncthreads();  // the next row overwrites the cache
  }
}

}  // namespace kjit
