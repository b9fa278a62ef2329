// SPDX-License-Identifier: Apache-2.0
// Rows too wide to keep on chip, read twice: one pass keeps the running (max, sum), a second
// pass reads the row again and writes. A block (Cluster == 1) or (sm_90) a cluster of
// blocks per row, each block one slice; blocks or clusters stay resident and walk the rows.
//
// The second read is meant to come from L2: the second read and the output ask it to evict
// their lines first, so they do not push out lines still to be read again (l2_hints.cuh says
// why the first read does not ask L2 to keep its lines). Any width. Peeled (Io::peel), each
// slice lies on its own vector grid (row_peel.cuh): whole 16-byte vectors wherever the row
// covers them, whatever the row's shift, and outputs that start elsewhere on the grid than
// their inputs stored realigned.
#pragma once

#include "grid_dependency.cuh"
#include "l2_hints.cuh"
#include "pack.cuh"
#include "row_layout.cuh"
#include "row_math.cuh"
#include "row_peel.cuh"

namespace kjit {

/// A thread's batch of a slice of `cols`: packs base, base + Threads, ...; pack p is the vector
/// at column p * Pack - lead (its own grid where Peel, else lead 0); packs past `packs` hold
/// `fill`. Peeled, a batch wholly inside the row takes one check, so that its loads all go out
/// before the first is used (as load_packs: checked pack by pack, each load waited in its branch).
template <bool Peel, int Pack, int Threads, int Count, typename In>
__device__ __forceinline__ void load_online_batch(const In* in, int base, int packs, int lead, int cols, In fill,
                                                  L2Policy policy, WordPack<In, Pack> (&raw)[Count]) {
  if constexpr (Peel) {
    const int first = base * Pack - lead;
    if (first >= 0 && first + (Count - 1) * Threads * Pack + Pack <= cols) {
#pragma unroll
      for (int b = 0; b < Count; ++b) {
        const int col = first + b * Threads * Pack;
        raw[b] = load_words_with_policy<In, Pack>(in, col, col + Pack, fill, policy);  // the check folds away
      }
      return;
    }
  }
#pragma unroll
  for (int b = 0; b < Count; ++b) {
    const int p = base + b * Threads;
    if (p >= packs) {
      raw[b] = filled_words<In, Pack>(fill);
    } else if constexpr (Peel) {
      raw[b] = load_peeled_words_with_policy<In, Pack>(in, p * Pack - lead, cols, fill, policy);
    } else {
      raw[b] = load_words_with_policy<In, Pack>(in, p * Pack, cols, fill, policy);
    }
  }
}

/// The second pass's walk over a thread's packs of a slice: visit(p, raw) for each pack p the
/// slice has, a batch of Count loaded at a time (load_online_batch). WholeWarp: every lane of a
/// warp takes each batch while any lane of it has a pack, so that all are there for shuffles.
template <bool Peel, int Pack, int Threads, int Count, bool WholeWarp, typename In, typename Visit>
__device__ __forceinline__ void each_output_pack(const In* in, int packs, int lead, int cols, L2Policy policy,
                                                 Visit&& visit) {
  const int lane = WholeWarp ? static_cast<int>(threadIdx.x % 32) : 0;
  for (int base = threadIdx.x; base - lane < packs; base += Threads * Count) {
    WordPack<In, Pack> raw[Count];
    load_online_batch<Peel, Pack, Threads>(in, base, packs, lead, cols, from_float<In>(0.0f), policy, raw);
#pragma unroll
    for (int b = 0; b < Count; ++b) {
      const int p = base + b * Threads;
      if (p - lane >= packs) break;  // WholeWarp: the same for the whole warp
      visit(p, raw[b]);
    }
  }
}

template <int Op, typename Io, int Cols, int Pack, int Threads, int Cluster>
__global__ void __launch_bounds__(Threads)
block_online(const RowParams params) {
  start_after_prior_grids();
  typedef typename Io::in In;
  typedef typename Io::out Out;
  typedef RowMath<Op> Math;
  static_assert(Pack * sizeof(In) <= kMaxPackBytes && Pack * sizeof(Out) <= kMaxPackBytes,
                "block_online: a pack is at most 16 bytes");
  static_assert(Cluster >= 1 && Cluster <= kMaxClusterBlocks, "block_online: 1..16 blocks per row");
  // Slices start on pack boundaries so that vector loads stay aligned.
  constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, Pack, Cluster));
  static_assert((Cluster - 1) * kSliceCols < Cols, "block_online: a cluster block would get no columns");
  constexpr int kPacks = (kSliceCols + Pack - 1) / Pack;
  // Peeled outputs that start elsewhere on the grid than the inputs are stored realigned.
  constexpr bool kRealigns = Io::peel && PackBits<Out, Pack>::kBytes >= 4;
  // Bytes each thread has in flight before it waits, held as loaded (16-bit values two to a
  // register) until used: about 128 KB an SM with the blocks that fit, where 64 KB left the
  // kernel waiting on memory latency (docs/experiments/wide-row-kernels.md).
  constexpr int kBatchBytes = Threads <= 256 ? 256 : 128;
  constexpr int kPackBytes = Pack * static_cast<int>(sizeof(In));
  constexpr int kBatch = kBatchBytes / kPackBytes > 0 ? kBatchBytes / kPackBytes : 1;
  // Realigned stores take registers of their own: where a thread has 64 (1024 threads), the
  // second pass, whose reads come from L2, takes half batches (reduce_scale still spills 36-40
  // bytes, some softmax widths 16).
  constexpr int kRealignBatch = Threads > 512 && kBatch > 1 ? kBatch / 2 : kBatch;
  __shared__ RowSlots slots;  // by row parity: one cluster barrier a row

  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_cols = Cols - slice_begin < kSliceCols ? Cols - slice_begin : kSliceCols;
  // A pack's outputs from its inputs and the row's statistics.
  auto apply_pack = [](const WordPack<In, Pack>& raw, float first, float finished, float (&v)[Pack]) {
#pragma unroll
    for (int i = 0; i < Pack; ++i) v[i] = Math::apply(raw.at(i), first, finished);
  };
  // The second pass: values from the batch's inputs, stored on the output's grid where it is
  // the input's.
  auto write = [&](const In* in, Out* out, int packs, int lead, float first, float finished, L2Policy policy) {
    each_output_pack<Io::peel, Pack, Threads, kBatch, false>(
        in, packs, lead, slice_cols, policy, [&](int p, const WordPack<In, Pack>& raw) {
          float v[Pack];
          apply_pack(raw, first, finished, v);
          if constexpr (Io::peel) store_peeled_pack_with_policy<Out, Pack>(out, p * Pack - lead, slice_cols, v, policy);
          else store_pack_with_policy<Out, Pack>(out, p * Pack, slice_cols, v, policy);
        });
  };
  // The same where a peeled row's output starts elsewhere on the grid: each lane stores the
  // output vector that starts realign_shift into its own, completed by the next vector's values:
  // the next lane's (a shuffle; the whole warp takes each batch), or, for the warp's last lane,
  // read again (from L1 or L2).
  auto write_realigned = [&](const In* in, Out* out, int packs, int lead, int shift, float first, float finished,
                             L2Policy policy) {
    if constexpr (kRealigns) {
      constexpr int kWords = PackBits<Out, Pack>::kBytes / 4;
      const int lane = threadIdx.x % 32;
      auto outputs = [&](const WordPack<In, Pack>& raw, unsigned (&words)[kWords]) {
        float v[Pack];
        apply_pack(raw, first, finished, v);
        pack_words<Out, Pack>(v, words);
      };
      each_output_pack<Io::peel, Pack, Threads, kRealignBatch, true>(
          in, packs, lead, slice_cols, policy, [&](int p, const WordPack<In, Pack>& raw) {
            PackBits<Out, Pack> own;
            outputs(raw, own.words);
            unsigned next[kWords];
#pragma unroll
            for (int w = 0; w < kWords; ++w) next[w] = __shfl_down_sync(~0u, own.words[w], 1);
            if (lane == 31 && p + 1 < packs)
              outputs(load_peeled_words_with_policy<In, Pack>(in, (p + 1) * Pack - lead, slice_cols, In{}, policy),
                      next);
            store_window<Out, Pack>(out, p * Pack - lead, slice_cols, own, next, shift, p == 0);
          });
    }
  };
  const L2Policy normal = l2_normal_policy(), stream = l2_stream_policy();
  const long long groups = gridDim.x / Cluster;
  int parity = 0;
  for (long long row = blockIdx.x / Cluster; row < params.rows; row += groups, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
    const int lead = Io::peel ? row_lead(reinterpret_cast<unsigned long long>(in), sizeof(In), Pack) : 0;
    const int packs = Io::peel ? static_cast<int>(peeled_vectors(slice_cols, Pack, lead)) : kPacks;
    float first = Math::first_identity();
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      OnlineStats stats = OnlineStats::empty();
      for (int base = threadIdx.x; base < packs; base += Threads * kBatch) {
        WordPack<In, Pack> raw[kBatch];
        load_online_batch<Io::peel, Pack, Threads>(in, base, packs, lead, slice_cols, from_float<In>(neg_inf()),
                                                    normal, raw);
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
      for (int base = threadIdx.x; base < packs; base += Threads * kBatch) {
        WordPack<In, Pack> raw[kBatch];
        load_online_batch<Io::peel, Pack, Threads>(in, base, packs, lead, slice_cols,
                                                    from_float<In>(Math::first_identity()), normal, raw);
#pragma unroll
        for (int b = 0; b < kBatch; ++b)
#pragma unroll
          for (int i = 0; i < Pack; ++i)
            first = typename Math::FirstOp()(first, Math::first_term(raw[b].at(i)));
      }
      first = row_all_reduce<Threads, Cluster>(first, slots, parity, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
    const int out_lead = Io::peel ? row_lead(reinterpret_cast<unsigned long long>(out), sizeof(Out), Pack) : 0;
    bool realigned = false;
    if constexpr (kRealigns) {
      realigned = !output_on_input_grid(lead, out_lead);
      if (realigned)
        write_realigned(in, out, packs, lead, realign_shift(lead, out_lead, Pack), first, finished, stream);
    }
    if (!realigned) write(in, out, packs, lead, first, finished, stream);
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
