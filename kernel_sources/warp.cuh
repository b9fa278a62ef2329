// SPDX-License-Identifier: Apache-2.0
// The warp algorithm: a row per group of Group threads (a warp or a part of one), several rows
// per block, each row held in registers (row_regs.cuh).
#pragma once

#include "row_regs.cuh"

namespace kjit {

template <int Op, typename Io, int Cols, int Pack, int Threads, int Group>
__global__ void __launch_bounds__(Threads, RowRegsShapeOf<Io, Cols, Pack, Threads, Group>::kMinBlocks)
warp(const RowParams params) {
  static_assert(Group <= 32, "warp: a group is a warp or a part of one");
  row_regs<Op, Io, Cols, Pack, Threads, Group>(params);
}

}  // namespace kjit
