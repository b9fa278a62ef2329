// SPDX-License-Identifier: Apache-2.0
// sm_90 bulk asynchronous copies (the TMA engine) between global and shared memory: loads
// completed through an mbarrier that counts the bytes, stores tracked by bulk async-groups. One
// thread puts a whole row slice in flight with one instruction, so the bytes in flight no longer
// depend on registers or thread count.
#pragma once

#include "async_copy.cuh"

namespace kjit {

/// Waits until the phase with this parity of the mbarrier at `address` (shared window) is
/// complete: 0 for its first use, then alternating.
__device__ __forceinline__ void mbarrier_wait_parity(unsigned address, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(address), "r"(parity) : "memory");
  }
}

/// An mbarrier whose phase completes when its one expected arrival and all the bytes the
/// copies announced have landed.
struct BulkBarrier {
  unsigned long long state;

  /// One thread, before any use; the block must synchronize before others wait on it.
  __device__ __forceinline__ void init() {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(&state)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }

  /// The producer's arrival: the phase completes once `bytes` more bytes have been copied in.
  __device__ __forceinline__ void expect_bytes(unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(shared_address(&state)), "r"(bytes) : "memory");
  }

  /// Waits for the phase with this parity (0 for the first use, then alternating).
  __device__ __forceinline__ void wait(unsigned parity) { mbarrier_wait_parity(shared_address(&state), parity); }
};

/// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from global to shared
/// memory, signalling `barrier` with the byte count as they land.
__device__ __forceinline__ void bulk_load(void* shared_dst, const void* global_src, unsigned bytes,
                                          BulkBarrier& barrier) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
      ::"r"(shared_address(shared_dst)), "l"(global_src), "r"(bytes),
        "r"(shared_address(&barrier.state)) : "memory");
}

/// An mbarrier whose phase completes when `count` threads (or warps' lanes 0) have arrived.
struct CountBarrier {
  unsigned long long state;

  /// One thread, before any use; the block must synchronize before others use it.
  __device__ __forceinline__ void init(unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(&state)), "r"(count) : "memory");
  }
  /// Releases this thread's earlier memory operations to whoever waits for the phase.
  __device__ __forceinline__ void arrive() {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(&state)) : "memory");
  }
  /// Waits for the phase with this parity (0 for the first use, then alternating).
  __device__ __forceinline__ void wait(unsigned parity) { mbarrier_wait_parity(shared_address(&state), parity); }
};

/// Copies `bytes` (a multiple of 16; both addresses 16-byte aligned) from shared to global
/// memory, in this thread's current bulk async-group (see bulk_commit).
__device__ __forceinline__ void bulk_store(void* global_dst, const void* shared_src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
               ::"l"(global_dst), "r"(shared_address(shared_src)), "r"(bytes) : "memory");
}
/// Closes this thread's current bulk async-group (an empty one too).
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
/// Waits until at most N of this thread's bulk async-groups still read shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
/// Waits until every bulk async-group of this thread is complete (its writes done).
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

/// One 16-byte store to shared memory at a shared-window address.
__device__ __forceinline__ void store_shared_v4(unsigned address, const unsigned (&words)[4]) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};"
               ::"r"(address), "r"(words[0]), "r"(words[1]), "r"(words[2]), "r"(words[3]) : "memory");
}

/// Orders this thread's earlier generic-proxy accesses to shared memory (after a barrier: the
/// whole block's) before the bulk copies it issues next, which write through the async proxy.
__device__ __forceinline__ void fence_before_bulk_copy() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

}  // namespace kjit
