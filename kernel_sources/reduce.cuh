// SPDX-License-Identifier: Apache-2.0
// Warp, block and (sm_90) thread-block-cluster all-reductions of one float.
#pragma once

#include "numeric.cuh"

namespace kjit {

// Each op knows its identity: lanes past the last warp's partial contribute it.
struct MaxOp {
  __device__ __forceinline__ static float identity() { return neg_inf(); }
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
/// max of |x| values (all >= 0), NaN-propagating.
struct MaxNanOp {
  __device__ __forceinline__ static float identity() { return 0.0f; }
  __device__ __forceinline__ float operator()(float a, float b) const {
    return max_propagate_nan(a, b);
  }
};
struct SumOp {
  __device__ __forceinline__ static float identity() { return 0.0f; }
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

/// The lanes of the smallest power-of-two segment (2 to 32) that holds n values, one a lane, for
/// shuffles within segments.
__host__ __device__ constexpr int segment_lanes(int n) {
  int lanes = 2;
  while (lanes < n && lanes < 32) lanes *= 2;
  return lanes;
}

/// All-reduce over aligned groups of Width lanes (Width a power of two, at most 32).
template <int Width, typename Op>
__device__ __forceinline__ float warp_all_reduce(float v, Op op) {
  static_assert(Width >= 1 && Width <= 32 && (Width & (Width - 1)) == 0,
                "warp_all_reduce: Width must be a power of two in [1, 32]");
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset, Width));
  return v;
}

/// Shared memory of an all-reduce over the warps of Threads threads.
template <int Threads>
struct WarpPartials {
  float partial[Threads / 32];
  float result;
};

/// All-reduce over Threads consecutive threads starting at a multiple of Threads, which meet at
/// `sync()` (a barrier of exactly those threads). Safe to call back to back on the same
/// `partials`: a thread can only overwrite a partial after every thread has passed the barrier
/// that ends the last call.
template <int Threads, typename Op, typename Sync>
__device__ __forceinline__ float warps_all_reduce(float v, Op op, WarpPartials<Threads>& partials,
                                                  Sync sync) {
  static_assert(Threads % 32 == 0 && Threads <= 1024,
                "warps_all_reduce: Threads must be a multiple of 32, at most 1024");
  v = warp_all_reduce<32>(v, op);
  if (Threads == 32) return v;
  const int warp = (threadIdx.x % Threads) / 32, lane = threadIdx.x % 32;
  if (lane == 0) partials.partial[warp] = v;
  sync();
  if (warp == 0) {
    float w = lane < Threads / 32 ? partials.partial[lane] : Op::identity();
    w = warp_all_reduce<32>(w, op);
    if (lane == 0) partials.result = w;
  }
  sync();
  return partials.result;
}

/// The block barrier, for the reductions over the whole block.
struct BlockSync {
  __device__ __forceinline__ void operator()() const { __syncthreads(); }
};

/// All-reduce over the whole block of Threads threads; safe to call back to back.
template <int Threads, typename Op>
__device__ __forceinline__ float block_all_reduce(float v, Op op) {
  __shared__ WarpPartials<Threads> partials;
  return warps_all_reduce<Threads>(v, op, partials, BlockSync());
}

/// All-reduce over a group of Group consecutive threads: a part of a warp, or the block.
template <int Threads, int Group, typename Op>
__device__ __forceinline__ float group_all_reduce(float v, Op op) {
  static_assert(Group <= 32 || Group == Threads,
                "group_all_reduce: a group is part of a warp or the whole block");
  if constexpr (Group <= 32) return warp_all_reduce<Group>(v, op);
  else return block_all_reduce<Threads>(v, op);
}

// ---- Thread-block clusters (sm_90): distributed shared memory through PTX, no toolkit headers.

__device__ __forceinline__ unsigned cluster_block_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

/// Blocks from this many threads arrive with one fence for the whole block (cluster_arrive).
constexpr unsigned kOneFenceThreads = 512;

// The .aligned forms need every thread of the warp to execute them together. Callers reach
// them right after code where one thread did extra work (published a value, issued copies);
// without the __syncwarp the warp can arrive split, and the cluster's barrier phases then no
// longer line up across blocks.
//
// A releasing arrive fences in every warp. In a block of kOneFenceThreads or more, one thread
// fences for the block after a block barrier instead (the block barrier orders every thread's
// memory operations before that fence), and the others arrive relaxed: cheaper there, though
// not at 128 threads (docs/experiments/clusters.md). Call with the whole block.
__device__ __forceinline__ void cluster_arrive() {
  if (blockDim.x >= kOneFenceThreads) {
    __syncthreads();
    if (threadIdx.x == 0) asm volatile("fence.acq_rel.cluster;" ::: "memory");
    __syncwarp();
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  } else {
    __syncwarp();
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  }
}
/// Arrives at the cluster barrier releasing only this thread's writes to its own block's shared
/// memory (`fence.release.sync_restrict::shared::cta.cluster`): enough where the other blocks
/// only need this block's own state set up before they write into it or read it, and much
/// cheaper than a full release (cluster_arrive; docs/experiments/clusters.md). Call with the
/// whole block.
__device__ __forceinline__ void cluster_arrive_own_writes() {
  asm volatile("fence.release.sync_restrict::shared::cta.cluster;" ::: "memory");
  __syncwarp();
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  __syncwarp();
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/// A barrier of the cluster, or of the block when a row has one block (its memory operations
/// before it are seen by every thread of the cluster after it).
template <int Cluster>
__device__ __forceinline__ void row_barrier() {
  if constexpr (Cluster > 1) {
    cluster_arrive();
    cluster_wait();
  } else {
    __syncthreads();
  }
}

/// The shared::cluster address of `local`'s counterpart in block `rank` of the cluster.
__device__ __forceinline__ unsigned cluster_address(const void* local, unsigned rank) {
  unsigned local_addr, remote_addr;
  asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }"
               : "=r"(local_addr) : "l"(local));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote_addr) : "r"(local_addr), "r"(rank));
  return remote_addr;
}

/// The shared::cluster address of `array[index]` in block `rank`. The offset is added to the
/// mapped address of the array itself: mapping a pointer that carried a run-time offset
/// (`&slots[parity][0]`) made loads that faulted with misaligned addresses under NVRTC (CUDA
/// 13.0), so every distributed-shared-memory access here maps a fixed address.
template <typename T>
__device__ __forceinline__ unsigned cluster_element(const T* array, unsigned rank, int index) {
  return cluster_address(array, rank) + static_cast<unsigned>(index) * static_cast<unsigned>(sizeof(T));
}

__device__ __forceinline__ float load_cluster_f32(unsigned address) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(address) : "memory");
  return v;
}
__device__ __forceinline__ int load_cluster_s32(unsigned address) {
  int v;
  asm volatile("ld.shared::cluster.s32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long load_cluster_u64(unsigned address) {
  unsigned long long v;
  asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(address) : "memory");
  return v;
}

__device__ __forceinline__ void store_cluster_u64(unsigned address, unsigned long long v) {
  asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(address), "l"(v) : "memory");
}
__device__ __forceinline__ void store_cluster_s32(unsigned address, int v) {
  asm volatile("st.shared::cluster.s32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}
__device__ __forceinline__ void store_cluster_u32(unsigned address, unsigned v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}
__device__ __forceinline__ void store_cluster_f32(unsigned address, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(address), "f"(v) : "memory");
}
__device__ __forceinline__ void store_cluster_v4(unsigned address, uint4 v) {
  asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};"
               ::"r"(address), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
/// Adds `v` to the unsigned at `address` (any block of the cluster), without waiting for it.
__device__ __forceinline__ void reduce_add_cluster_u32(unsigned address, unsigned v) {
  asm volatile("red.shared::cluster.add.u32 [%0], %1;" ::"r"(address), "r"(v) : "memory");
}
/// Adds `v` to the unsigned at `address` (any block of the cluster); returns the old value.
__device__ __forceinline__ unsigned atomic_add_cluster_u32(unsigned address, unsigned v) {
  unsigned old;
  asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;"
               : "=r"(old) : "r"(address), "r"(v) : "memory");
  return old;
}

/// Combines array[index] of every cluster block (already written, cluster barrier passed):
/// every warp reads the Blocks values with one lane each and reduces them, so no extra block
/// barrier is needed.
template <int Blocks, typename Op>
__device__ __forceinline__ float reduce_cluster_slots(const float* array, int index, Op op) {
  static_assert(Blocks >= 1 && Blocks <= 32, "a cluster holds at most 32 blocks here");
  const unsigned lane = threadIdx.x % 32;
  float v = lane < Blocks ? load_cluster_f32(cluster_element(array, lane, index)) : Op::identity();
  return warp_all_reduce<32>(v, op);
}

/// Each cluster block's statistics of a row (up to two), in two sets by row parity: a block
/// writes a row's set only after the previous row's cluster barrier, which every block passes
/// only after reading the set of the row before it, so one cluster barrier a row is enough.
/// Kernels with a barrier closing every row use parity 0 only.
struct RowSlots {
  float values[2][2];  // [parity][statistic]

  /// Where statistic `which` of the set for `parity` lies, counted from start().
  __device__ __forceinline__ static int index(int parity, int which) { return parity * 2 + which; }
  __device__ __forceinline__ const float* start() const { return &values[0][0]; }

  __device__ __forceinline__ void publish(int parity, int which, float value) {
    values[parity][which] = value;
  }
  /// Statistic `which` of block `rank`'s set.
  __device__ __forceinline__ float remote(int parity, int which, unsigned rank) const {
    return load_cluster_f32(cluster_element(start(), rank, index(parity, which)));
  }
};

/// Reduces `value` over the block and then, for Cluster > 1, over the cluster through
/// statistic 0 of `slots` (written by thread 0).
template <int Threads, int Cluster, typename Op>
__device__ __forceinline__ float row_all_reduce(float value, RowSlots& slots, int parity, Op op) {
  value = block_all_reduce<Threads>(value, op);
  if constexpr (Cluster == 1) {
    return value;
  } else {
    if (threadIdx.x == 0) slots.publish(parity, 0, value);
    cluster_arrive();
    cluster_wait();
    return reduce_cluster_slots<Cluster>(slots.start(), RowSlots::index(parity, 0), op);
  }
}

}  // namespace kjit
