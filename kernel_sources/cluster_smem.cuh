// SPDX-License-Identifier: Apache-2.0
// The cluster_smem algorithm (sm_90): a row per thread-block cluster, each block keeping its
// slice in shared memory (row_smem.cuh).
#pragma once

#include "row_smem.cuh"

namespace kjit {

template <int Op, typename Io, int Cols, int Pack, int Threads, int Cluster>
__global__ void __launch_bounds__(Threads)
cluster_smem(const RowParams params) {
  static_assert(Cluster >= 2, "cluster_smem: 2..16 blocks per row");
  row_smem<Op, Io, Cols, Pack, Threads, Cluster>(params);
}

}  // namespace kjit
