// SPDX-License-Identifier: Apache-2.0
// The attention kernel: softmax(Q K^T * scale + bias + mask) V for many small problems, each
// specialized on its exact sizes (M, N, D, Dv), the bias and mask kinds and causality.
//
// A block holds Problems groups of Warps warps; each group walks the problems persistently
// (problem group + Problems x block, then a grid's worth further on) through Stages
// shared-memory stages: while it computes one problem, the cp.async copies of the next
// problem's Q, K and V (Stages = 2) are in flight; with one stage, Q goes from global memory into
// registers, or, where a warp takes several strips of a problem, each warp copies the Q of its
// next strip into rows of its own while it computes the current one (attention_copies_query).
// Within a group, each warp takes query strips of 16 rows (attention_strip.cuh), so the group's
// warps share the staged K and V. Bias and mask are read where they lie (shared by every batch
// entry, they stay in L2), or, where each warp owns one strip of one key block, held in registers
// for all the group's problems, which the launch keeps at one head and mask window
// (attention_holds_addends). After the groups' stages, each warp has rows of its own through
// which O goes out (and its next strip's Q comes in, where it copies Q).
#pragma once

#include "async_copy.cuh"
#include "attention_params.cuh"
#include "attention_shape.cuh"
#include "attention_strip.cuh"
#include "grid_dependency.cuh"

namespace kjit {

/// The group's warps meet: a warp alone needs no barrier, several take their group's named
/// barrier (barrier 0 stays free for whole-block use).
template <int Warps>
__device__ __forceinline__ void group_sync(int group) {
  if constexpr (Warps == 1) {
    __syncwarp();
  } else {
    asm volatile("bar.sync %0, %1;" ::"r"(group + 1), "n"(Warps * 32) : "memory");
  }
}

/// Where a stage keeps a problem's tensors, in bytes from its start: K, V, then Q where the
/// stage holds it (attention_stages_query).
template <int M, int N, int D, int Dv, int Stages>
struct StageLayout {
  static constexpr int kKRow = D + kAttentionRowPad, kVRow = Dv + kAttentionRowPad, kQRow = D + kAttentionRowPad;
  static constexpr int kK = 0;
  static constexpr int kV = attention_padded(N) * kKRow * 2;
  static constexpr int kQ = attention_kv_bytes(N, D, Dv);
  static constexpr bool kHoldsQuery = attention_stages_query(Stages);
  static constexpr int kBytes = attention_stage_bytes(M, N, D, Dv, Stages);
};

/// Zeroes rows [First, End) of a shared-memory region of RowElements 16-bit elements a row.
template <int First, int End, int RowElements, int Threads>
__device__ __forceinline__ void zero_rows(unsigned char* region, int thread) {
  constexpr int kWords = (End - First) * RowElements / 2;
  unsigned* words = reinterpret_cast<unsigned*>(region + First * RowElements * 2);
  for (int i = thread; i < kWords; i += Threads) words[i] = 0u;
}

/// Sets the padded rows (N, and M where a stage holds Q, up to the next 16) of every stage to
/// zero once: copies never write them, P's zeros times V's padding must stay zero, and Q's
/// padding rows give finite scores that are never stored.
template <int M, int N, int D, int Dv, int Stages, int Threads>
__device__ __forceinline__ void zero_padding(unsigned char* stages, int thread) {
  using L = StageLayout<M, N, D, Dv, Stages>;
  for (int s = 0; s < Stages; ++s) {
    unsigned char* stage = stages + s * L::kBytes;
    zero_rows<N, attention_padded(N), L::kKRow, Threads>(stage + L::kK, thread);
    zero_rows<N, attention_padded(N), L::kVRow, Threads>(stage + L::kV, thread);
    if constexpr (L::kHoldsQuery) zero_rows<M, attention_padded(M), L::kQRow, Threads>(stage + L::kQ, thread);
  }
}

/// Starts copying Rows rows of Dim 16-bit elements into shared rows of Dim + pad, 16 bytes a copy.
template <typename In, int Rows, int Dim, int Threads>
__device__ __forceinline__ void copy_rows(unsigned to, const In* from, long long row_stride, int thread) {
  constexpr int kChunks = Dim / kAttentionCopyElements;
  for (int c = thread; c < Rows * kChunks; c += Threads) {
    const int row = c / kChunks, chunk = c - row * kChunks;
    copy_async<16>(to + (row * (Dim + kAttentionRowPad) + chunk * kAttentionCopyElements) * 2,
                   from + row * row_stride + chunk * kAttentionCopyElements);
  }
}

/// Starts the copies of problem `index`'s K and V (and Q, where the stage holds it) into `stage`.
template <typename In, int M, int N, int D, int Dv, int Stages, int Threads>
__device__ __forceinline__ void load_problem(const AttentionParams& p, long long index, unsigned char* stage,
                                             int thread) {
  using L = StageLayout<M, N, D, Dv, Stages>;
  const long long b = index / p.heads, h = index - b * p.heads;
  const In* k = static_cast<const In*>(p.k) + b * p.k_strides[0] + h * p.k_strides[1];
  const In* v = static_cast<const In*>(p.v) + b * p.v_strides[0] + h * p.v_strides[1];
  const unsigned to = shared_address(stage);
  copy_rows<In, N, D, Threads>(to + L::kK, k, p.k_strides[2], thread);
  copy_rows<In, N, Dv, Threads>(to + L::kV, v, p.v_strides[2], thread);
  if constexpr (L::kHoldsQuery) {
    const In* q = static_cast<const In*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1];
    copy_rows<In, M, D, Threads>(to + L::kQ, q, p.q_strides[2], thread);
  }
}

/// Problem `index` as its strips see it, its K and V (and Q) in `stage`, the warp's own rows at
/// `rows`.
template <typename In, int M, int N, int D, int Dv, int Stages, int BiasKind, int MaskKind>
__device__ __forceinline__ AttentionView<In> view_of(const AttentionParams& p, long long index,
                                                     const unsigned char* stage, unsigned char* rows) {
  using L = StageLayout<M, N, D, Dv, Stages>;
  const long long b = index / p.heads, h = index - b * p.heads;
  AttentionView<In> view;
  view.q = static_cast<const In*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1];
  view.o = static_cast<In*>(p.o) + b * p.o_strides[0] + h * p.o_strides[1];
  view.bias = addend_offset<BiasKind>(p.bias, h * p.bias_strides[0]);
  view.mask = addend_offset<MaskKind>(p.mask, (MaskKind == kAddendNone ? 0 : b % p.mask_windows) * p.mask_strides[0]);
  view.q_row = p.q_strides[2];
  view.o_row = p.o_strides[2];
  view.bias_row = p.bias_strides[1];
  view.mask_row = p.mask_strides[1];
  const unsigned at = shared_address(stage);
  view.k_smem = at + L::kK;
  view.v_smem = at + L::kV;
  view.q_smem = at + L::kQ;
  view.rows = rows;
  return view;
}

/// Starts copying the Q rows of problem `index`'s strip at row0 into a warp's Q rows at `rows`;
/// rows past M are set to zero there (finite scores, never stored).
template <typename In, int M, int D>
__device__ __forceinline__ void copy_query_strip(const AttentionParams& p, long long index, int row0,
                                                 unsigned char* rows, int lane) {
  constexpr int kChunks = D / kAttentionCopyElements;
  const long long b = index / p.heads, h = index - b * p.heads;
  const In* q = static_cast<const In*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1] + row0 * p.q_strides[2];
  for (int c = lane; c < kAttentionTile * kChunks; c += 32) {
    const int row = c / kChunks, chunk = c - row * kChunks;
    unsigned char* to = rows + (row * (D + kAttentionRowPad) + chunk * kAttentionCopyElements) * 2;
    if (row0 + row < M) copy_async<16>(shared_address(to), q + row * p.q_strides[2] + chunk * kAttentionCopyElements);
    else *reinterpret_cast<uint4*>(to) = make_uint4(0u, 0u, 0u, 0u);
  }
}

/// The strip at row0's Q fragments: from the stage where it holds Q; from global memory where the
/// warp does not copy Q; else from the warp's Q rows, which then take the copy of the warp's next
/// strip (`next_index`, `next_row0`; none past the problems).
template <typename In, int M, int D, int Warps, int Stages>
__device__ __forceinline__ void take_query_strip(unsigned (&qa)[D / 16][4], const AttentionParams& p,
                                                 const AttentionView<In>& view, int row0, unsigned char* query_rows,
                                                 long long next_index, int next_row0, int lane) {
  if constexpr (attention_stages_query(Stages)) {
    load_query_shared<D>(qa, view.q_smem, row0, lane);
  } else if constexpr (!attention_copies_query(M, Warps, Stages)) {
    load_query<In, M, D>(qa, view, row0, lane);
  } else {
    wait_async_copy_groups<0>();
    __syncwarp();  // every lane's copies have landed
    load_query_shared<D>(qa, shared_address(query_rows), 0, lane);
    __syncwarp();  // every lane holds its fragments before the rows are refilled
    if (next_index < p.problems) copy_query_strip<In, M, D>(p, next_index, next_row0, query_rows, lane);
    commit_async_copies();
  }
}

template <typename In, int M, int N, int D, int Dv, int BiasKind, int MaskKind, bool Causal, int Warps, int Problems,
          int Stages>
__global__ void __launch_bounds__(Warps * Problems * 32, 1) attention_tile(const AttentionParams p) {
  check_attention_shape<M, N, D, Dv, Warps, Problems, Stages>();
  constexpr int kGroupThreads = Warps * 32;
  constexpr int kStage = StageLayout<M, N, D, Dv, Stages>::kBytes;
  extern __shared__ __align__(128) unsigned char attention_smem[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int group = warp / Warps, warp_in_group = warp - group * Warps;
  const int thread = threadIdx.x - group * kGroupThreads;
  unsigned char* stages = attention_smem + group * Stages * kStage;
  unsigned char* warp_rows =
      attention_smem + Problems * Stages * kStage + warp * attention_warp_rows_bytes(M, D, Dv, Warps, Stages);
  unsigned char* query_rows = warp_rows + attention_warp_output_bytes(Dv);  // where the warp copies Q
  zero_padding<M, N, D, Dv, Stages, kGroupThreads>(stages, thread);
  start_after_prior_grids();

  const long long step = static_cast<long long>(gridDim.x) * Problems;
  const long long first = static_cast<long long>(blockIdx.x) * Problems + group;
  // The launch makes `step` a multiple of attention_addend_period: every problem of the group
  // has its first problem's bias head and mask window.
  constexpr bool kHeld =
      attention_holds_addends(M, N, Dv, Warps, BiasKind != kAddendNone || MaskKind != kAddendNone);
  HeldAddends<attention_key_block(N, Dv), kHeld> held;
  if constexpr (kHeld) {
    if (first < p.problems)
      load_held_addends<In, M, N, attention_key_block(N, Dv), BiasKind, MaskKind>(
          held, view_of<In, M, N, D, Dv, Stages, BiasKind, MaskKind>(p, first, stages, warp_rows),
          warp_in_group * kAttentionTile, lane);
  }
  if constexpr (attention_copies_query(M, Warps, Stages)) {
    if (first < p.problems) copy_query_strip<In, M, D>(p, first, warp_in_group * kAttentionTile, query_rows, lane);
    commit_async_copies();
  }
#pragma unroll
  for (int s = 0; s + 1 < Stages; ++s) {
    if (first + s * step < p.problems)
      load_problem<In, M, N, D, Dv, Stages, kGroupThreads>(p, first + s * step, stages + s * kStage, thread);
    commit_async_copies();
  }
  int slot = 0;
  for (long long index = first; index < p.problems; index += step) {
    const long long ahead = index + (Stages - 1) * step;
    if (ahead < p.problems)
      load_problem<In, M, N, D, Dv, Stages, kGroupThreads>(p, ahead, stages + (slot + Stages - 1) % Stages * kStage,
                                                           thread);
    commit_async_copies();
    wait_async_copy_groups<Stages - 1>();
    group_sync<Warps>(group);
    const AttentionView<In> view =
        view_of<In, M, N, D, Dv, Stages, BiasKind, MaskKind>(p, index, stages + slot * kStage, warp_rows);
#pragma unroll 1
    for (int strip = warp_in_group; strip < attention_strips(M); strip += Warps) {
      // The warp's next strip: the next of this problem, else its first of the group's next.
      const bool last = strip + Warps >= attention_strips(M);
      unsigned qa[D / 16][4];
      take_query_strip<In, M, D, Warps, Stages>(qa, p, view, strip * kAttentionTile, query_rows,
                                                last ? index + step : index,
                                                (last ? warp_in_group : strip + Warps) * kAttentionTile, lane);
      attend_strip<In, M, N, D, Dv, BiasKind, MaskKind, Causal, kHeld>(qa, view, held, p.scale_log2,
                                                                       strip * kAttentionTile, lane);
    }
    group_sync<Warps>(group);  // the stage is refilled next
    slot = (slot + 1) % Stages;
  }
}

}  // namespace kjit
