// SPDX-License-Identifier: Apache-2.0
// Programmatic dependent launch (sm_90+): the runtime may launch a kernel while the previous
// kernel in its stream is still finishing, so its blocks are resident and ready when that
// kernel's memory becomes visible, instead of paying the launch after it. Every kjit kernel
// calls start_after_prior_grids() before its first global access, most of them first thing;
// before sm_90, and for a launch made without the attribute, both instructions do nothing.
// Some ask L2 for their first rows just before it (l2_prefetch.cuh), which is safe there.
#pragma once

namespace kjit {

/// Waits until every grid this one depends on has completed and its writes are visible, then
/// lets the next kernel in the stream launch its blocks (they wait the same way before touching
/// memory). Called before the kernel's first global access, read or write: the previous kernel
/// may still be reading what this one overwrites.
__device__ __forceinline__ void start_after_prior_grids() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace kjit
