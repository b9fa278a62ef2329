// SPDX-License-Identifier: Apache-2.0
// racecheck_probe: the ring kernel's two hand-offs of a shared-memory chunk, alone in one block,
// through the same helpers (kernel_sources/bulk_copy.cuh), ordered as the PTX memory model
// requires. scripts/sanitize_gpu.sh runs it plainly and under racecheck: what racecheck reports
// here, on hand-offs that are right, tells which of its reports on the ring are the tool's.
//   racecheck_probe [warp|thread] [ROUNDS]
// warp: each consumer thread fences its shared accesses for the async proxy, its warp meets at
//   __syncwarp, and lane 0's arrival releases them to the producer (racecheck flags it).
// thread (the ring's way): every consumer thread arrives itself, so no ordering runs through
//   __syncwarp.
// Even rounds hand the chunk back written (bulk stores: outputs staged, read out by a bulk
// store, then the slot refilled), odd rounds read only (register stores, then the refill).
// Prints "probe: ok (..., producer thread N, ...)" and exits 0 when every round's output is
// right; 1 when not; 2 for bad arguments; 3 without a usable sm_90 GPU.
// Built by scripts/sanitize_gpu.sh: nvcc -arch=sm_90 -I. -o PROBE tests/gpu/racecheck_probe.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "kernel_sources/bulk_copy.cuh"

namespace {

constexpr int kConsumers = 64;  // two consumer warps; thread kConsumers is the producer
constexpr int kChunkBytes = kConsumers * 16;

__host__ __device__ unsigned transform(unsigned word, int round) { return word * 2654435761u + round + 1; }

__device__ void produce(const uint4* in, uint4* out, int rounds, unsigned char* chunk, kjit::BulkBarrier& landed,
                        kjit::CountBarrier& drained) {
  landed.expect_bytes(kChunkBytes);
  kjit::bulk_load(chunk, in, kChunkBytes, landed);
#pragma unroll 1
  for (int r = 0; r < rounds; ++r) {
    drained.wait(r & 1);
    if (r % 2 == 0) {
      kjit::bulk_store(out + r * kConsumers, chunk, kChunkBytes);
      kjit::bulk_commit();
      // The store has read the chunk out before the refill overwrites it.
      kjit::bulk_wait_read<0>();
    }
    if (r + 1 < rounds) {
      landed.expect_bytes(kChunkBytes);
      kjit::bulk_load(chunk, in + (r + 1) * kConsumers, kChunkBytes, landed);
    }
  }
  kjit::bulk_wait_all();  // the last store has read shared memory before the block exits
}

template <bool kThreadArrivals>
__device__ void consume(uint4* out, int rounds, unsigned char* chunk, kjit::BulkBarrier& landed,
                        kjit::CountBarrier& drained) {
  const int t = threadIdx.x;
  const unsigned mine = kjit::shared_address(chunk) + t * 16u;
#pragma unroll 1
  for (int r = 0; r < rounds; ++r) {
    landed.wait(r & 1);
    unsigned w[4];
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "r"(mine) : "memory");
    for (unsigned& word : w) word = transform(word, r);
    if (r % 2 == 0) {
      kjit::store_shared_v4(mine, w);
      // The staged outputs, before the producer's bulk copies (async proxy) read and overwrite them.
      kjit::fence_before_bulk_copy();
    } else {
      out[r * kConsumers + t] = make_uint4(w[0], w[1], w[2], w[3]);
    }
    if constexpr (kThreadArrivals) {
      drained.arrive();
    } else {
      __syncwarp();
      if (t % 32 == 0) drained.arrive();
    }
  }
}

template <bool kThreadArrivals>
__device__ void handoff(const uint4* in, uint4* out, int rounds) {
  __shared__ __align__(128) unsigned char chunk[kChunkBytes];
  __shared__ kjit::BulkBarrier landed;
  __shared__ kjit::CountBarrier drained;
  if (threadIdx.x == 0) {
    landed.init();
    drained.init(kThreadArrivals ? kConsumers : kConsumers / 32);
  }
  __syncthreads();
  if (threadIdx.x < kConsumers) consume<kThreadArrivals>(out, rounds, chunk, landed, drained);
  else if (threadIdx.x == kConsumers) produce(in, out, rounds, chunk, landed, drained);
}

// A kernel of its own name for each way, so that racecheck's reports say which it was.
__global__ void __launch_bounds__(kConsumers + 32, 1) handoff_by_warps(const uint4* in, uint4* out, int rounds) {
  handoff<false>(in, out, rounds);
}
__global__ void __launch_bounds__(kConsumers + 32, 1) handoff_by_threads(const uint4* in, uint4* out, int rounds) {
  handoff<true>(in, out, rounds);
}

bool cuda_ok(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return true;
  std::fprintf(stderr, "probe: %s: %s\n", what, cudaGetErrorString(status));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const bool thread_arrivals = argc > 1 && std::strcmp(argv[1], "thread") == 0;
  if (argc > 1 && !thread_arrivals && std::strcmp(argv[1], "warp") != 0) {
    std::fprintf(stderr, "usage: racecheck_probe [warp|thread] [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 8;
  if (rounds < 2 || rounds > 1000) {
    std::fprintf(stderr, "probe: ROUNDS from 2 to 1000\n");
    return 2;
  }
  cudaDeviceProp props{};
  if (cudaGetDeviceProperties(&props, 0) != cudaSuccess || props.major < 9) {
    std::fprintf(stderr, "probe: no sm_90 GPU\n");
    return 3;
  }
  const size_t words = static_cast<size_t>(rounds) * kConsumers * 4;
  std::vector<unsigned> in(words), out(words, 0u);
  for (size_t i = 0; i < words; ++i) in[i] = static_cast<unsigned>(i * 40503u + 17u);
  unsigned *d_in = nullptr, *d_out = nullptr;
  const size_t bytes = words * sizeof(unsigned);
  if (!cuda_ok(cudaMalloc(&d_in, bytes), "cudaMalloc") || !cuda_ok(cudaMalloc(&d_out, bytes), "cudaMalloc") ||
      !cuda_ok(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice), "upload") ||
      !cuda_ok(cudaMemset(d_out, 0, bytes), "cudaMemset"))
    return 1;
  const uint4* in4 = reinterpret_cast<const uint4*>(d_in);
  uint4* out4 = reinterpret_cast<uint4*>(d_out);
  if (thread_arrivals) handoff_by_threads<<<1, kConsumers + 32>>>(in4, out4, rounds);
  else handoff_by_warps<<<1, kConsumers + 32>>>(in4, out4, rounds);
  if (!cuda_ok(cudaGetLastError(), "launch") || !cuda_ok(cudaDeviceSynchronize(), "kernel") ||
      !cuda_ok(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost), "download"))
    return 1;
  size_t wrong = 0;
  for (size_t i = 0; i < words; ++i) {
    const int round = static_cast<int>(i / (kConsumers * 4));
    if (out[i] != transform(in[i], round) && wrong++ == 0)
      std::printf("probe: word %zu of round %d is %u, not %u\n", i, round, out[i], transform(in[i], round));
  }
  cudaFree(d_in);
  cudaFree(d_out);
  const char* mode = thread_arrivals ? "thread" : "warp";
  if (wrong != 0) {
    std::printf("probe: FAILED (%s arrivals): %zu of %zu words wrong\n", mode, wrong, words);
    return 1;
  }
  std::printf("probe: ok (%s arrivals, producer thread %d, %d rounds, every word right)\n", mode, kConsumers, rounds);
  return 0;
}
