// SPDX-License-Identifier: Apache-2.0
// Rows too wide to keep on chip, read twice: one pass keeps the running (max, sum), a second
// pass reads the row again and writes. A block (ClusterBlocks == 1) or (sm_90) a cluster of
// blocks per row, each block one slice; blocks or clusters stay resident and walk the rows.
//
// The second read is meant to come from L2: the second read and the output ask it to evict
// their lines first, so they do not push out lines still to be read again (l2_hints.cuh says
// why the first read does not ask L2 to keep its lines). Any width.
#pragma once

#include "grid_dependency.cuh"
#include "l2_hints.cuh"
#include "pack.cuh"
#include "row_layout.cuh"
#include "row_math.cuh"

namespace kjit {

template <int Op, typename IoTypes, int Cols, int PackSize, int BlockThreads, int ClusterBlocks>
__global__ void __launch_bounds__(BlockThreads)
block_online(const RowParams params) {
  start_after_prior_grids();
  typedef typename IoTypes::in In;
  typedef typename IoTypes::out Out;
  typedef RowMath<Op> Math;
  static_assert(PackSize * sizeof(In) <= kMaxPackBytes && PackSize * sizeof(Out) <= kMaxPackBytes,
                "block_online: a pack is at most 16 bytes");
  static_assert(ClusterBlocks >= 1 && ClusterBlocks <= kMaxClusterBlocks, "block_online: 1..16 blocks per row");
  // Slices start on pack boundaries so that vector loads stay aligned.
  constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, PackSize, ClusterBlocks));
  static_assert((ClusterBlocks - 1) * kSliceCols < Cols, "block_online: a cluster block would get no columns");
  constexpr int kPacks = (kSliceCols + PackSize - 1) / PackSize;
  // Bytes each thread has in flight before it waits, held as loaded (16-bit values two to a
  // register) until used: about 128 KB an SM with the blocks that fit. Measured on the H100:
  // these kernels wait on memory latency with 64 KB in flight (bf16 64x262144 36 -> 33 us,
  // fp32 65 -> 58 us with 128 KB); 256 bytes a thread at 512 threads left one block an SM
  // and ran slower (bf16 512x65536 62 -> 81 us).
  constexpr int kBatchBytes = BlockThreads <= 256 ? 256 : 128;
  constexpr int kPackBytes = PackSize * static_cast<int>(sizeof(In));
  constexpr int kBatch = kBatchBytes / kPackBytes > 0 ? kBatchBytes / kPackBytes : 1;
  __shared__ RowSlots slots;  // by row parity: one cluster barrier a row

  unsigned rank = 0;
  if constexpr (ClusterBlocks > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_cols = Cols - slice_begin < kSliceCols ? Cols - slice_begin : kSliceCols;
  // A thread's batch: packs base, base + BlockThreads, ...; packs past the slice hold `fill`.
  auto load_batch = [&](const In* in, int base, In fill, L2Policy policy,
                        WordPack<In, PackSize> (&raw)[kBatch]) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int p = base + b * BlockThreads;
      raw[b] = p < kPacks ? load_words_with_policy<In, PackSize>(in, p * PackSize, slice_cols, fill, policy)
                          : filled_words<In, PackSize>(fill);
    }
  };
  const L2Policy normal = l2_normal_policy(), stream = l2_stream_policy();
  const long long groups = gridDim.x / ClusterBlocks;
  int parity = 0;
  for (long long row = blockIdx.x / ClusterBlocks; row < params.rows; row += groups, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
    float first = Math::first_identity();
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      OnlineStats stats = OnlineStats::empty();
      for (int base = threadIdx.x; base < kPacks; base += BlockThreads * kBatch) {
        WordPack<In, PackSize> raw[kBatch];
        load_batch(in, base, from_float<In>(neg_inf()), normal, raw);
        // One rescale per pack: widening the whole batch at once would take the registers
        // the batch saves.
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          float v[PackSize];
#pragma unroll
          for (int i = 0; i < PackSize; ++i) v[i] = raw[b].at(i);
          stats.add<PackSize>(v);
        }
      }
      stats = block_merge<BlockThreads>(stats);
      if constexpr (ClusterBlocks > 1) stats = cluster_merge<ClusterBlocks>(stats, slots, parity);
      first = stats.max;
      finished = Math::finish(stats.sum);
    } else {
      for (int base = threadIdx.x; base < kPacks; base += BlockThreads * kBatch) {
        WordPack<In, PackSize> raw[kBatch];
        load_batch(in, base, from_float<In>(Math::first_identity()), normal, raw);
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
          for (int i = 0; i < PackSize; ++i)
            first = typename Math::FirstOp()(first, Math::first_term(raw[b].at(i)));
      }
      first = row_all_reduce<BlockThreads, ClusterBlocks>(first, slots, parity, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
    for (int base = threadIdx.x; base < kPacks; base += BlockThreads * kBatch) {
      WordPack<In, PackSize> raw[kBatch];
      load_batch(in, base, from_float<In>(0.0f), stream, raw);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * BlockThreads;
        if (p >= kPacks) break;
        float v[PackSize];
#pragma unroll
        for (int i = 0; i < PackSize; ++i) v[i] = Math::apply(raw[b].at(i), first, finished);
        store_pack_with_policy<Out, PackSize>(out, p * PackSize, slice_cols, v, stream);
      }
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && threadIdx.x == 0) params.scale_out[row] = first;
    }
  }
  // No block may leave while another can still read its slots.
  if constexpr (ClusterBlocks > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

}  // namespace kjit
