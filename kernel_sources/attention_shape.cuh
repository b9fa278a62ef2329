// SPDX-License-Identifier: Apache-2.0
// The geometry of the attention kernel (attention_tile.cuh): query strips, key blocks, the
// shared-memory stages that hold a problem's K and V, and what the kernel requires of its
// template arguments. The kernel and the host's validity check, fit and launch
// (runtime/ops/attention/) read it from here.
#pragma once

#include "host_device.cuh"

namespace kjit {

/// Rows of a query strip, keys of a step of the products: the mma.m16n8k16 tile's 16.
constexpr int kAttentionTile = 16;
/// Most query rows and keys a problem has.
constexpr int kAttentionMostTokens = 256;
/// Keys the scores of one online-softmax step cover: 64 scores a row are 32 registers a thread;
/// beside 128 output columns (64 accumulators a thread) 32 keys, where 64 spilled.
constexpr int kAttentionMostKeyBlock = 64;
constexpr int kAttentionWideKeyBlock = 32;
/// Elements a shared-memory row of K or V carries past its dimension: 16 bytes, so that the
/// eight rows an ldmatrix reads start in eight different bank quads.
constexpr int kAttentionRowPad = 8;
/// Elements of one asynchronous copy (16 bytes of 16-bit values): the unit the global rows,
/// their strides and the pointers are aligned to.
constexpr int kAttentionCopyElements = 8;

/// What an additive bias or mask is: absent, or its element type.
enum AttentionAddend { kAddendNone = 0, kAddendF32 = 1, kAddendF16 = 2, kAddendBF16 = 3 };

/// Tokens rounded up to whole 16-row tiles.
KJIT_HOST_DEVICE constexpr int attention_padded(int tokens) {
  return (tokens + kAttentionTile - 1) / kAttentionTile * kAttentionTile;
}

/// Query strips of a problem.
KJIT_HOST_DEVICE constexpr int attention_strips(int m) { return attention_padded(m) / kAttentionTile; }

/// Keys of an online-softmax step: the whole padded row when it is short, else 64 (32 for
/// dv = 128).
KJIT_HOST_DEVICE constexpr int attention_key_block(int n, int dv) {
  return attention_padded(n) < (dv >= 128 ? kAttentionWideKeyBlock : kAttentionMostKeyBlock)
             ? attention_padded(n)
             : (dv >= 128 ? kAttentionWideKeyBlock : kAttentionMostKeyBlock);
}

/// Whether a config's stages hold Q too: with two stages, the next problem's Q arrives with its
/// K and V while the current one computes; with one there is nothing to overlap (but see
/// attention_copies_query).
KJIT_HOST_DEVICE constexpr bool attention_stages_query(int stages) { return stages == 2; }

/// Whether, with one stage, each warp copies the Q of its next strip into rows of its own while
/// it computes the current strip (attention_warp_rows_bytes): where a warp takes several strips
/// of a problem (1-15% faster on the H100 at 160-224 tokens). Elsewhere Q goes from global memory
/// straight into registers: where each warp had one strip a problem, the copy ran 7-30% slower at
/// the fastest configs (more registers beside held addends; per-problem work on 16 x 16 tiles).
KJIT_HOST_DEVICE constexpr bool attention_copies_query(int m, int warps, int stages) {
  return !attention_stages_query(stages) && attention_strips(m) > warps;
}

/// Bytes of K [padded n, d] and V [padded n, dv] in a stage, 16-bit, rows padded; Q's rows
/// follow them where the stage holds Q.
KJIT_HOST_DEVICE constexpr int attention_kv_bytes(int n, int d, int dv) {
  return attention_padded(n) * ((d + kAttentionRowPad) + (dv + kAttentionRowPad)) * 2;
}

/// Bytes of one stage: K and V, then Q [padded m, d] where the stage holds it.
KJIT_HOST_DEVICE constexpr int attention_stage_bytes(int m, int n, int d, int dv, int stages) {
  return attention_kv_bytes(n, d, dv) + (attention_stages_query(stages) ? attention_padded(m) * (d + kAttentionRowPad) * 2 : 0);
}

/// Rows a warp moves through its own shared rows at once: half a query strip. O goes out
/// through them as whole 16-byte vectors of consecutive rows, where the fragments' layout would
/// have each store touch eight rows, 4 bytes a lane: half sectors, twice the requests to L2.
constexpr int kAttentionWarpRows = 8;

/// Bytes of a warp's rows of O: half a strip, padded like the stages' rows.
KJIT_HOST_DEVICE constexpr int attention_warp_output_bytes(int dv) {
  return kAttentionWarpRows * (dv + kAttentionRowPad) * 2;
}

/// Bytes of a warp's rows: those of O, then, where the warp copies its next strip's Q
/// (attention_copies_query), one strip of Q.
KJIT_HOST_DEVICE constexpr int attention_warp_rows_bytes(int m, int d, int dv, int warps, int stages) {
  return attention_warp_output_bytes(dv) +
         (attention_copies_query(m, warps, stages) ? kAttentionTile * (d + kAttentionRowPad) * 2 : 0);
}

/// Dynamic shared memory of a block: each problem group's stages, then each warp's rows.
KJIT_HOST_DEVICE constexpr int attention_block_smem(int m, int n, int d, int dv, int warps, int problems,
                                                    int stages) {
  return problems * stages * attention_stage_bytes(m, n, d, dv, stages) +
         warps * problems * attention_warp_rows_bytes(m, d, dv, warps, stages);
}

/// Whether a kernel holds its strip's bias + mask in registers for all its problems: with
/// addends, each warp owning one strip (warps == strips) whose keys are one key block. Its launch
/// keeps every problem of a group at the same head and mask window (attention_addend_period), so
/// the addends are read once a group rather than once a problem.
KJIT_HOST_DEVICE constexpr bool attention_holds_addends(int m, int n, int dv, int warps, bool addends) {
  return addends && warps == attention_strips(m) && attention_padded(n) <= attention_key_block(n, dv);
}

/// Problems apart that see the same bias head and mask window: problem i is batch entry i / heads
/// at head i % heads, and takes mask window (i / heads) % windows.
KJIT_HOST_DEVICE constexpr long long attention_addend_period(bool bias, bool mask, long long heads,
                                                             long long windows) {
  return (bias || mask ? heads : 1) * (mask ? windows : 1);
}

/// Warps a block has at most: 256 threads, so that ptxas may give each thread all 255
/// registers (the scores, the output and the addends' loads in flight take up to about 230).
constexpr int kAttentionMostBlockWarps = 8;

KJIT_HOST_DEVICE constexpr bool attention_dim_fits(int dim) {
  return dim == 16 || dim == 32 || dim == 64 || dim == 128;
}

/// Whole powers of two from 1 to 8 warps a problem, no more than its query strips (a warp
/// without a strip would idle).
KJIT_HOST_DEVICE constexpr bool attention_warps_fit(int warps, int m) {
  return (warps == 1 || warps == 2 || warps == 4 || warps == 8) && warps <= attention_strips(m);
}

template <int M, int N, int D, int Dv, int Warps, int Problems, int Stages>
KJIT_HOST_DEVICE constexpr void check_attention_shape() {
  static_assert(M >= 1 && M <= kAttentionMostTokens && N >= 1 && N <= kAttentionMostTokens,
                "attention kernel: m and n in 1..256");
  static_assert(attention_dim_fits(D) && attention_dim_fits(Dv), "attention kernel: d and dv in 16, 32, 64, 128");
  static_assert(attention_warps_fit(Warps, M), "attention kernel: 1, 2, 4 or 8 warps, at most one a query strip");
  static_assert(Problems >= 1 && Warps * Problems <= kAttentionMostBlockWarps,
                "attention kernel: at least one problem a block, at most 8 warps");
  static_assert(Stages == 1 || Stages == 2, "attention kernel: one or two stages");
}

}  // namespace kjit
