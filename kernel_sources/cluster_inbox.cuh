// SPDX-License-Identifier: Apache-2.0
// Sending to the blocks of a cluster without a cluster barrier (sm_90). A block's inbox is an
// mbarrier in its shared memory: each sender announces the bytes it sends, and every store or
// add it sends (st.async / red.async) completes its bytes there, so a receiver waits for its
// own data only and no sender fences: much cheaper than a cluster barrier for a few bytes
// (docs/experiments/clusters.md).
#pragma once

#include "bulk_copy.cuh"
#include "reduce.cuh"

namespace kjit {

/// An mbarrier whose phase completes once every sender has announced its bytes and all of them
/// have landed. The bytes a phase receives may land before their announcement (the count of
/// bytes to come goes below zero), but the phase waits for every sender's.
struct ClusterInbox {
  unsigned long long state;

  /// One thread, before the cluster barrier that precedes every send.
  __device__ __forceinline__ void init(unsigned senders) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(&state)),
                 "r"(senders) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }

  /// Waits for the phase with this parity (0 for the first use, then alternating); what was
  /// sent to this block in it is then seen by the calling thread.
  __device__ __forceinline__ void wait(unsigned parity) const {
    unsigned done = 0;
    while (!done) {
      asm volatile(
          "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; "
          "selp.u32 %0, 1, 0, p; }"
          : "=r"(done) : "r"(shared_address(&state)), "r"(parity) : "memory");
    }
  }
};

/// This block's one arrival at block `rank`'s inbox, announcing the bytes it sends there in
/// this phase.
__device__ __forceinline__ void announce_bytes(const ClusterInbox& inbox, unsigned rank,
                                               unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.relaxed.cluster.shared::cluster.b64 _, [%0], %1;"
               ::"r"(cluster_address(&inbox.state, rank)), "r"(bytes) : "memory");
}

/// This block's own arrival at its inbox, releasing what it stored there before (for a block
/// that is its own cluster).
__device__ __forceinline__ void arrive_local(const ClusterInbox& inbox) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(shared_address(&inbox.state)) : "memory");
}

/// Stores 16 bytes at array[index] of block `rank` (16-byte aligned), completing them on that
/// block's inbox.
template <typename T>
__device__ __forceinline__ void send_16_bytes(const T* array, int index, unsigned rank, uint4 v,
                                              const ClusterInbox& inbox) {
  static_assert(sizeof(T) == 16, "send_16_bytes: one 16-byte element");
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%2, %3, %4, %5}, [%1];"
      ::"r"(cluster_element(array, rank, index)), "r"(cluster_address(&inbox.state, rank)),
        "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

/// Stores 8 bytes at array[index] of block `rank` (8-byte aligned), completing them on that
/// block's inbox.
__device__ __forceinline__ void send_8_bytes(const float2* array, int index, unsigned rank, float2 v,
                                             const ClusterInbox& inbox) {
  asm volatile(
      "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%2, %3}, [%1];"
      ::"r"(cluster_element(array, rank, index)), "r"(cluster_address(&inbox.state, rank)),
        "f"(v.x), "f"(v.y) : "memory");
}

/// Adds `v` to array[index] of block `rank`, completing 4 bytes on that block's inbox.
__device__ __forceinline__ void send_add_u32(const unsigned* array, int index, unsigned rank,
                                             unsigned v, const ClusterInbox& inbox) {
  asm volatile(
      "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%0], %2, "
      "[%1];"
      ::"r"(cluster_element(array, rank, index)), "r"(cluster_address(&inbox.state, rank)),
        "r"(v) : "memory");
}

}  // namespace kjit
