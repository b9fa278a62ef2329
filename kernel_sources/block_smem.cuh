// SPDX-License-Identifier: Apache-2.0
// The block_smem algorithm: a row per block, kept in shared memory (row_smem.cuh).
#pragma once

#include "row_smem.cuh"

namespace kjit {

template <int Op, typename Io, int Cols, int Pack, int Threads>
__global__ void __launch_bounds__(Threads)
block_smem(const RowParams params) {
  row_smem<Op, Io, Cols, Pack, Threads, 1>(params);
}

}  // namespace kjit
