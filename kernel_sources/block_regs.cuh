// SPDX-License-Identifier: Apache-2.0
// The block_regs algorithm: a row per block, held in registers (row_regs.cuh).
#pragma once

#include "row_regs.cuh"

namespace kjit {

template <int Op, typename Io, int Cols, int Pack, int Threads>
__global__ void __launch_bounds__(Threads, RowRegsShapeOf<Io, Cols, Pack, Threads, Threads>::kMinBlocks)
block_regs(const RowParams params) {
  row_regs<Op, Io, Cols, Pack, Threads, Threads>(params);
}

}  // namespace kjit
