// SPDX-License-Identifier: Apache-2.0
// What both top-K kernels require of their template arguments, and how they split a row over
// a cluster.
#pragma once

namespace kjit {

template <typename In, int KBucket, int Pack, int Threads, int ClusterBlocks>
__device__ __forceinline__ constexpr void check_topk_shape() {
  static_assert(Threads % 32 == 0 && Threads >= 64 && Threads <= 1024,
                "top-K kernel: whole warps, 64 to 1024 threads");
  static_assert(KBucket >= 32 && (KBucket & (KBucket - 1)) == 0,
                "top-K kernel: KBucket is a power of two >= 32");
  static_assert(Pack * sizeof(In) <= 16, "top-K kernel: a pack is at most 16 bytes");
  static_assert(ClusterBlocks >= 1 && ClusterBlocks <= 16, "top-K kernel: 1..16 blocks per row");
}

/// Columns of each cluster block's slice of a row: whole packs, the last slice shorter.
template <int Cols, int ClusterBlocks, int Pack>
__host__ __device__ constexpr int topk_slice_cols() {
  return ((Cols + ClusterBlocks - 1) / ClusterBlocks + Pack - 1) / Pack * Pack;
}

}  // namespace kjit
