// SPDX-License-Identifier: Apache-2.0
// What both top-K kernels require of their template arguments, how they split a row over a
// cluster, and how many keys their shared-memory buffers hold: the kernels and the host's
// validity check and launch (runtime/ops/topk/) read it from here.
#pragma once

#include "host_device.cuh"
#include "row_layout.cuh"

namespace kjit {

/// Bytes of a TopkKey (topk_keys.cuh), the unit of the kernels' buffers.
constexpr int kTopkKeyBytes = 8;
/// The most values a thread of the resident kernel holds: 32 registers of the row.
constexpr int kTopkResidentMostValues = 32;
/// The smallest k bucket: k buckets are powers of two from here.
constexpr int kTopkMinBucket = 32;

/// Threads of a top-K block: whole warps, 64 to 1024 (the select has warps 0 and 1 work side
/// by side).
KJIT_HOST_DEVICE constexpr bool topk_threads_fit(int threads) {
  return threads % 32 == 0 && threads >= 64 && threads <= 1024;
}

template <typename In, int KBucket, int Pack, int Threads, int Cluster>
KJIT_HOST_DEVICE constexpr void check_topk_shape() {
  static_assert(topk_threads_fit(Threads), "top-K kernel: whole warps, 64 to 1024 threads");
  static_assert(KBucket >= kTopkMinBucket && (KBucket & (KBucket - 1)) == 0,
                "top-K kernel: KBucket is a power of two >= 32");
  static_assert(Pack * sizeof(In) <= kMaxPackBytes, "top-K kernel: a pack is at most 16 bytes");
  static_assert(Cluster >= 1 && Cluster <= kMaxClusterBlocks, "top-K kernel: 1..16 blocks per row");
}

/// Keys a block's cut list holds: the candidates past its threshold, twice the k bucket.
KJIT_HOST_DEVICE constexpr int topk_list_cap(int k_bucket) { return 2 * k_bucket; }

/// Keys the stream kernel keeps beside its tile: those above its rising threshold.
KJIT_HOST_DEVICE constexpr int topk_stream_room(int k_bucket) { return 4 * k_bucket; }

/// Keys the stream kernel's buffer holds: its room and a tile (a pass of every thread's packs).
KJIT_HOST_DEVICE constexpr int topk_stream_buffer_keys(int k_bucket, int threads, int pack, int unroll) {
  return topk_stream_room(k_bucket) + threads * pack * unroll;
}

/// Keys the resident kernel's buffer holds: the cluster's candidates, then the block's own
/// staged for sorting, a list each.
KJIT_HOST_DEVICE constexpr int topk_resident_buffer_keys(int k_bucket) { return 2 * topk_list_cap(k_bucket); }

}  // namespace kjit
