// SPDX-License-Identifier: Apache-2.0
// Rows too wide to keep on chip, read twice: one pass keeps the running (max, sum), a second
// pass reads the row again and writes. A block (Cluster == 1) or (sm_90) a cluster of
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

template <int Op, typename Io, int Cols, int Pack, int Threads, int Cluster>
__global__ void __launch_bounds__(Threads)
block_online(const RowParams params) {
  start_after_prior_grids();
  typedef typename Io::in In;
  typedef typename Io::out Out;
  static_assert(!Io::peel, "block_online: rows are not peeled (KernelConfig::peel)");
  typedef RowMath<Op> Math;
  static_assert(Pack * sizeof(In) <= kMaxPackBytes && Pack * sizeof(Out) <= kMaxPackBytes,
                "block_online: a pack is at most 16 bytes");
  static_assert(Cluster >= 1 && Cluster <= kMaxClusterBlocks, "block_online: 1..16 blocks per row");
  // Slices start on pack boundaries so that vector loads stay aligned.
  constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, Pack, Cluster));
  static_assert((Cluster - 1) * kSliceCols < Cols, "block_online: a cluster block would get no columns");
  constexpr int kPacks = (kSliceCols + Pack - 1) / Pack;
  // Bytes each thread has in flight before it waits, held as loaded (16-bit values two to a
  // register) until used: about 128 KB an SM with the blocks that fit, where 64 KB left the
  // kernel waiting on memory latency (docs/experiments/wide-row-kernels.md).
  constexpr int kBatchBytes = Threads <= 256 ? 256 : 128;
  constexpr int kPackBytes = Pack * static_cast<int>(sizeof(In));
  constexpr int kBatch = kBatchBytes / kPackBytes > 0 ? kBatchBytes / kPackBytes : 1;
  __shared__ RowSlots slots;  // by row parity: one cluster barrier a row

  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_cols = Cols - slice_begin < kSliceCols ? Cols - slice_begin : kSliceCols;
  // A thread's batch: packs base, base + Threads, ...; packs past the slice hold `fill`.
  auto load_batch = [&](const In* in, int base, In fill, L2Policy policy,
                        WordPack<In, Pack> (&raw)[kBatch]) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int p = base + b * Threads;
      raw[b] = p < kPacks ? load_words_with_policy<In, Pack>(in, p * Pack, slice_cols, fill, policy)
                          : filled_words<In, Pack>(fill);
    }
  };
  const L2Policy normal = l2_normal_policy(), stream = l2_stream_policy();
  const long long groups = gridDim.x / Cluster;
  int parity = 0;
  for (long long row = blockIdx.x / Cluster; row < params.rows; row += groups, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
    float first = Math::first_identity();
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      OnlineStats stats = OnlineStats::empty();
      for (int base = threadIdx.x; base < kPacks; base += Threads * kBatch) {
        WordPack<In, Pack> raw[kBatch];
        load_batch(in, base, from_float<In>(neg_inf()), normal, raw);
        // One rescale per pack: widening the whole batch at once would take the registers
        // the batch saves.
#pragma unroll
        for (int b = 0; b < kBatch; ++b) {
          float v[Pack];
#pragma unroll
          for (int i = 0; i < Pack; ++i) v[i] = raw[b].at(i);
          stats.add<Pack>(v);
        }
      }
      stats = block_merge<Threads>(stats);
      if constexpr (Cluster > 1) stats = cluster_merge<Cluster>(stats, slots, parity);
      first = stats.max;
      finished = Math::finish(stats.sum);
    } else {
      for (int base = threadIdx.x; base < kPacks; base += Threads * kBatch) {
        WordPack<In, Pack> raw[kBatch];
        load_batch(in, base, from_float<In>(Math::first_identity()), normal, raw);
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
          for (int i = 0; i < Pack; ++i)
            first = typename Math::FirstOp()(first, Math::first_term(raw[b].at(i)));
      }
      first = row_all_reduce<Threads, Cluster>(first, slots, parity, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
    for (int base = threadIdx.x; base < kPacks; base += Threads * kBatch) {
      WordPack<In, Pack> raw[kBatch];
      load_batch(in, base, from_float<In>(0.0f), stream, raw);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * Threads;
        if (p >= kPacks) break;
        float v[Pack];
#pragma unroll
        for (int i = 0; i < Pack; ++i) v[i] = Math::apply(raw[b].at(i), first, finished);
        store_pack_with_policy<Out, Pack>(out, p * Pack, slice_cols, v, stream);
      }
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && threadIdx.x == 0) params.scale_out[row] = first;
    }
  }
  // No block may leave while another can still read its slots.
  if constexpr (Cluster > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

}  // namespace kjit
