// SPDX-License-Identifier: Apache-2.0
// Shared-memory addresses, and copies from global to shared memory that bypass registers
// (cp.async, sm_80+): a thread puts a whole share of a row in flight without holding any of it,
// so few registers keep many bytes loading.
#pragma once

namespace kjit {

/// The shared-memory window address of a generic pointer into shared memory.
__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  unsigned address;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }"
               : "=r"(address) : "l"(pointer));
  return address;
}

/// Starts copying the Bytes (4, 8 or 16) at `global` into shared memory at `to` (a shared_address).
/// Sixteen-byte copies skip L1 (.cg); the others may only go through it (.ca).
template <int Bytes>
__device__ __forceinline__ void copy_async(unsigned to, const void* global) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "copy_async: 4, 8 or 16 bytes");
  if constexpr (Bytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(to), "l"(global), "n"(Bytes)
                 : "memory");
}

/// Waits until every copy this thread started has landed (they are then visible to it).
__device__ __forceinline__ void wait_async_copies() {
  asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
}

/// Closes the group of copies this thread started since the last commit (possibly empty).
__device__ __forceinline__ void commit_async_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }

/// Waits until at most Pending of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void wait_async_copy_groups() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

}  // namespace kjit
