// SPDX-License-Identifier: Apache-2.0
// The row kept in (dynamic, opt-in above 48 KB) shared memory in its input type: one read of
// global memory that also keeps the running statistics, then the output from shared memory.
// With Cluster == 1 one block holds a whole row (the block_smem kernel); with more (sm_90
// clusters: the cluster_smem kernel) each block holds a slice and the row's statistics are
// combined through distributed shared memory. Registers stay few, so an SM holds several such
// blocks and one block's barriers overlap another's loads. Peeled (Io::peel), each slice lies on
// its own vector grid (row_peel.cuh), a vector more than its packs; an output that starts
// elsewhere on the grid is read back from shared memory on its own grid, so that it too moves in
// whole vectors.
#pragma once

#include "grid_dependency.cuh"
#include "pack.cuh"
#include "peeled_pack.cuh"
#include "row_layout.cuh"
#include "row_math.cuh"

namespace kjit {

/// The N inputs of the output vector that starts `offset` (lead - out_lead, -(N-1)..N-1) elements
/// past vector `w` of a slice held in shared memory as `packs` vectors on the input's grid: the
/// rest of one vector and the start of the next, moved in registers (shifted_words). Vectors
/// outside the slice read as zeros; the columns they give are not stored.
template <typename In, int N>
__device__ __forceinline__ PackBits<In, N> shifted_from_smem(const PackOf<In, N>* cached, int packs, int w,
                                                             int offset) {
  const int base = offset < 0 ? w - 1 : w;
  const int shift = offset < 0 ? offset + N : offset;
  PackBits<In, N> own, next, window;
  if (offset == 0) {  // the output's grid is the input's
    own.pack = cached[w];
    return own;
  }
#pragma unroll
  for (int i = 0; i < PackBits<In, N>::kBytes / 4; ++i) own.words[i] = next.words[i] = 0u;
  if (base >= 0) own.pack = cached[base];
  if (base + 1 < packs) next.pack = cached[base + 1];
  shifted_words<In, N>(own.words, next.words, shift, window.words);
  return window;
}

/// The body of the block_smem and cluster_smem kernels, which launch it with
/// __launch_bounds__(Threads). It takes the parameters by value, as a kernel does: taken by
/// reference they changed the machine code of the cluster_smem kernels.
template <int Op, typename Io, int Cols, int Pack, int Threads, int Cluster>
__device__ __forceinline__ void row_smem(const RowParams params) {
  start_after_prior_grids();
  typedef typename Io::in In;
  typedef typename Io::out Out;
  static_assert(!Io::peel || PackBits<In, Pack>::kBytes >= 4, "row_smem: peeled packs are a word or more");
  typedef RowMath<Op> Math;
  static_assert(Pack * sizeof(In) <= kMaxPackBytes && Pack * sizeof(Out) <= kMaxPackBytes,
                "row_smem: a pack is at most 16 bytes");
  static_assert(Cluster >= 1 && Cluster <= kMaxClusterBlocks, "row_smem: 1..16 blocks per row");
  // Slices start on pack boundaries so that vector loads stay aligned (peeled, so that every
  // slice of a row has the row's lead).
  constexpr int kSliceCols = static_cast<int>(pack_slice_cols(Cols, Pack, Cluster));
  constexpr int kPacks = kSliceCols / Pack;
  // 128-byte aligned, as block_split's (see there).
  extern __shared__ __align__(128) unsigned char smem_raw[];
  PackOf<In, Pack>* cached = reinterpret_cast<PackOf<In, Pack>*>(smem_raw);
  __shared__ RowSlots slots;  // by row parity: one cluster barrier a row

  unsigned rank = 0;
  if constexpr (Cluster > 1) rank = cluster_block_rank();
  const int slice_begin = static_cast<int>(rank) * kSliceCols;
  const int slice_cols = Cols - slice_begin < kSliceCols ? Cols - slice_begin : kSliceCols;
  // Blocks (or clusters) stay resident and walk the rows; all blocks of a cluster run the same
  // iterations, so the cluster barriers always match.
  const long long groups = gridDim.x / Cluster;
  int parity = 0;
  for (long long row = blockIdx.x / Cluster; row < params.rows; row += groups, parity ^= 1) {
    const In* in = static_cast<const In*>(params.in) + row * params.in_stride + slice_begin;
    const int lead = Io::peel ? row_lead(reinterpret_cast<unsigned long long>(in), sizeof(In), Pack) : 0;
    const int packs = Io::peel ? static_cast<int>(peeled_vectors(slice_cols, Pack, lead)) : kPacks;
    float first = Math::first_identity();
    OnlineStats stats = OnlineStats::empty();  // softmax family: (max, sum) in the same pass
    // Loads go out kBatch at a time before any is stored, so each thread keeps several in flight.
    constexpr int kBatch = 4;
    const In fill = from_float<In>(Math::first_identity());
    for (int base = threadIdx.x; base < packs; base += Threads * kBatch) {
      PackOf<In, Pack> raw[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * Threads;
        const int cols = p < packs ? slice_cols : 0;
        if constexpr (Io::peel) raw[b] = load_peeled_raw_pack<In, Pack>(in, p * Pack - lead, cols, fill);
        else raw[b] = load_raw_pack<In, Pack>(in, p * Pack, cols, fill);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int p = base + b * Threads;
        if (p < packs) cached[p] = raw[b];
        float v[Pack];
#pragma unroll
        for (int i = 0; i < Pack; ++i) v[i] = to_float(raw[b].v[i]);
        if constexpr (Math::kTwoStats) {
          stats.add<Pack>(v);
        } else {
#pragma unroll
          for (int i = 0; i < Pack; ++i)
            first = typename Math::FirstOp()(first, Math::first_term(v[i]));
        }
      }
    }
    float finished = 0.0f;
    if constexpr (Math::kTwoStats) {
      stats = block_merge<Threads>(stats);
      if constexpr (Cluster > 1) stats = cluster_merge<Cluster>(stats, slots, parity);
      first = stats.max;
      finished = Math::finish(stats.sum);
    } else {
      first = row_all_reduce<Threads, Cluster>(first, slots, parity, typename Math::FirstOp());
    }
    Out* out = static_cast<Out*>(params.out) + row * params.out_stride + slice_begin;
    if constexpr (Io::peel) {
      // Each output vector of the slice on the output's own grid, whole wherever it is inside.
      const int out_lead = row_lead(reinterpret_cast<unsigned long long>(out), sizeof(Out), Pack);
      const int out_packs = static_cast<int>(peeled_vectors(slice_cols, Pack, out_lead));
      for (int w = threadIdx.x; w < out_packs; w += Threads) {
        const PackBits<In, Pack> raw = shifted_from_smem<In, Pack>(cached, packs, w, lead - out_lead);
        float o[Pack];
#pragma unroll
        for (int i = 0; i < Pack; ++i) o[i] = Math::apply(to_float(raw.pack.v[i]), first, finished);
        store_peeled_words<Out, Pack>(out, w * Pack - out_lead, slice_cols, o, true);
      }
    } else {
      for (int p = threadIdx.x; p < kPacks; p += Threads) {
        const PackOf<In, Pack> raw = cached[p];
        float o[Pack];
#pragma unroll
        for (int i = 0; i < Pack; ++i) o[i] = Math::apply(to_float(raw.v[i]), first, finished);
        store_pack_words<Out, Pack>(out, p * Pack, slice_cols, o);
      }
    }
    if constexpr (Op == kOpReduceScale) {
      if (params.scale_out != nullptr && rank == 0 && threadIdx.x == 0) params.scale_out[row] = first;
    }
    __syncthreads();  // the next row overwrites the cache
  }
  // No block may leave while another can still read its slots.
  if constexpr (Cluster > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

}  // namespace kjit
