// SPDX-License-Identifier: Apache-2.0
// Asking L2 for a kernel's first rows before its grid-dependency wait (sm_90+). A kernel
// launched as a dependent may be resident while the kernel before it drains, with DRAM half
// idle; a prefetch then lets its first loads after the wait find their lines in L2 or on their
// way. It is safe before the wait: a prefetch brings nothing into the block, and L2, through
// which every access to device memory goes (the previous kernel's writes included), never
// holds a stale line, so what it fetched early is what the loads after the wait read.
#pragma once

namespace kjit {

/// Asks L2 for the `bytes` bytes at `begin` in global memory, widened to whole 16-byte units (a
/// unit never spans two pages, so only pages the bytes are on are touched). Does nothing before
/// sm_90.
__device__ __forceinline__ void prefetch_l2(const void* begin, unsigned long long bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned long long first = reinterpret_cast<unsigned long long>(begin) & ~15ull;
  const unsigned long long end = (reinterpret_cast<unsigned long long>(begin) + bytes + 15ull) & ~15ull;
  if (end > first)
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(first), "r"(static_cast<unsigned>(end - first))
                 : "memory");
#else
  (void)begin;
  (void)bytes;
#endif
}

}  // namespace kjit
