// SPDX-License-Identifier: Apache-2.0
// One warp's work on one 16-row query strip of one attention problem (attention_tile.cuh runs
// it): Q fragments from shared rows (or global memory) into registers, scores S = Q K^T by mma.sync
// with K from shared memory, kept in registers in the accumulator layout, scaled and offset
// by bias and mask there, an online softmax over key blocks whose row statistics go between
// the four lanes of a row by shuffles, P rounded in registers into the A fragments of the
// product with V, and O written from the accumulators through the warp's own shared rows, half a
// strip at a time, as whole 16-byte vectors of consecutive rows.
#pragma once

#include "attention_params.cuh"
#include "attention_shape.cuh"
#include "numeric.cuh"
#include "tensor_core.cuh"

namespace kjit {

/// One problem's tensors and addends, offset to its batch entry, head and mask window.
template <typename In>
struct AttentionView {
  const In* q;
  In* o;
  const void* bias;  ///< this head's [m, n]
  const void* mask;  ///< this window's [m, n]
  long long q_row, o_row, bias_row, mask_row;
  unsigned k_smem, v_smem, q_smem;  ///< shared addresses of the stage's K, V and Q (where it holds Q)
  unsigned char* rows;  ///< this warp's rows of O (attention_warp_output_bytes)
};

/// The type an addend of kind Kind holds.
template <int Kind> struct AddendType { typedef float type; };
template <> struct AddendType<kAddendF16> { typedef f16 type; };
template <> struct AddendType<kAddendBF16> { typedef bf16 type; };

/// An addend's base moved by `elements` of its kind.
template <int Kind>
__device__ __forceinline__ const void* addend_offset(const void* base, long long elements) {
  if constexpr (Kind == kAddendNone) return base;
  return static_cast<const typename AddendType<Kind>::type*>(base) + elements;
}

/// A thread's window onto an addend's row for one key block: element (row, kb0 + 2t + offset).
/// One pointer a row, so the block's loads take constant offsets from it.
template <int Kind>
struct AddendRow {
  const typename AddendType<Kind>::type* at;
  __device__ __forceinline__ AddendRow(const void* base, long long row_stride, int row, int column) {
    if constexpr (Kind == kAddendNone) at = nullptr;
    else at = static_cast<const typename AddendType<Kind>::type*>(base) + row * row_stride + column;
  }
  __device__ __forceinline__ float operator[](int offset) const {
    if constexpr (Kind == kAddendNone) return 0.0f;
    else return to_float(at[offset]);
  }
};

/// A strip's bias + mask in the scores' layout, times log2(e), read once for every problem of its
/// group (attention_holds_addends); empty where the strip reads them a problem at a time.
template <int KB, bool Held>
struct HeldAddends {
  float v[KB / 8][4];
};
template <int KB>
struct HeldAddends<KB, false> {};

/// One score's bias + mask times log2(e), read when called.
template <int BiasKind, int MaskKind>
struct ScoreAddend {
  const AddendRow<BiasKind>& bias;
  const AddendRow<MaskKind>& mask;
  int offset;
  __device__ __forceinline__ float operator()() const {
    constexpr float kLog2e = 1.4426950408889634f;
    return kLog2e * (bias[offset] + mask[offset]);
  }
};

/// Calls visit(tile, e, row, col, addend) for each of the strip at row0's scores in the key block
/// at kb0: accumulator entry (tile, e) of the lane holds row row0 + g (+ 8 for e >= 2) and column
/// kb0 + 2t + 8 tile + (e & 1), and addend() reads its bias + mask times log2(e) (rows past M read
/// row M - 1, never stored), only where the visit asks for it.
template <int M, int KB, int BiasKind, int MaskKind, typename In, typename Visit>
__device__ __forceinline__ void each_strip_score(const AttentionView<In>& view, int row0, int kb0, int lane,
                                                 Visit&& visit) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row = row0 + g + 8 * h;
    const int read_row = row < M ? row : M - 1;
    const AddendRow<BiasKind> bias(view.bias, view.bias_row, read_row, kb0 + 2 * t);
    const AddendRow<MaskKind> mask(view.mask, view.mask_row, read_row, kb0 + 2 * t);
#pragma unroll
    for (int tile = 0; tile < KB / 8; ++tile)
#pragma unroll
      for (int e = 2 * h; e < 2 * h + 2; ++e) {
        const int offset = tile * 8 + (e & 1);
        visit(tile, e, row, kb0 + 2 * t + offset, ScoreAddend<BiasKind, MaskKind>{bias, mask, offset});
      }
  }
}

/// Reads the strip at row0's held addends; entries past m or n are 0 (masked, or never stored),
/// and never read.
template <typename In, int M, int N, int KB, int BiasKind, int MaskKind>
__device__ __forceinline__ void load_held_addends(HeldAddends<KB, true>& held, const AttentionView<In>& view,
                                                  int row0, int lane) {
  each_strip_score<M, KB, BiasKind, MaskKind>(view, row0, 0, lane,
                                              [&](int tile, int e, int row, int col,
                                                  const ScoreAddend<BiasKind, MaskKind>& addend) {
                                                held.v[tile][e] = row < M && col < N ? addend() : 0.0f;
                                              });
}

/// Running maximum (log2 domain) and this lane's share of the sum, for the rows g and g + 8.
struct StripStats {
  float max[2];
  float sum[2];
};

/// The strip at row0's Q as A fragments, one a 16 columns of d, from shared rows of d + pad
/// (the stage's, or the warp's own; rows past M are zeros): matrices 0-3 of an ldmatrix are rows
/// 0-7 and 8-15 of columns 0-7, then of 8-15.
template <int D>
__device__ __forceinline__ void load_query_shared(unsigned (&qa)[D / 16][4], unsigned q_smem, int row0, int lane) {
  const int matrix = lane >> 3, row = row0 + (lane & 7) + (matrix & 1) * 8;
#pragma unroll
  for (int kd = 0; kd < D / 16; ++kd)
    load_matrices(qa[kd], q_smem + (row * (D + kAttentionRowPad) + kd * 16 + (matrix >> 1) * 8) * 2);
}

/// The same from global memory, 4 bytes a register; rows past M read as zeros.
template <typename In, int M, int D>
__device__ __forceinline__ void load_query(unsigned (&qa)[D / 16][4], const AttentionView<In>& view, int row0,
                                           int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + g + 8 * half;
    const In* from = view.q + row * view.q_row + 2 * t;
#pragma unroll
    for (int kd = 0; kd < D / 16; ++kd) {
      qa[kd][half] = row < M ? *reinterpret_cast<const unsigned*>(from + kd * 16) : 0u;
      qa[kd][2 + half] = row < M ? *reinterpret_cast<const unsigned*>(from + kd * 16 + 8) : 0u;
    }
  }
}

/// S = Q K^T for the key block at kb0: 16 keys (two C tiles) at a time, pairs at or past
/// key_end left at zero (they are masked next).
template <typename In, int D, int KB>
__device__ __forceinline__ void block_scores(float (&s)[KB / 8][4], const unsigned (&qa)[D / 16][4],
                                             unsigned k_smem, int kb0, int key_end, int lane) {
  const int matrix = lane >> 3, row = lane & 7;
#pragma unroll
  for (int j = 0; j < KB / 16; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) s[2 * j][e] = s[2 * j + 1][e] = 0.0f;
    if (kb0 + 16 * j >= key_end) continue;
    const int key = kb0 + 16 * j + row + (matrix >> 1) * 8;
#pragma unroll
    for (int kd = 0; kd < D / 16; ++kd) {
      unsigned b[4];
      const int col = kd * 16 + (matrix & 1) * 8;
      load_matrices(b, k_smem + (key * (D + kAttentionRowPad) + col) * 2);
      mma_16x8x16<In>(s[2 * j], qa[kd], b[0], b[1]);
      mma_16x8x16<In>(s[2 * j + 1], qa[kd], b[2], b[3]);
    }
  }
}

/// Scores to logits in exp2's domain: x * scale * log2(e) + (bias + mask) * log2(e); keys past
/// N (where the block may hold some: PastN) and (causal) keys after the query are -inf. Rows past
/// M take no addend (never stored).
template <typename In, int M, int N, int KB, int HeldKB, int BiasKind, int MaskKind, bool Causal, bool PastN,
          bool Held>
__device__ __forceinline__ void to_logits(float (&s)[KB / 8][4], const AttentionView<In>& view,
                                          const HeldAddends<HeldKB, Held>& held, float scale_log2, int row0,
                                          int kb0, int lane) {
  constexpr bool kReads = !Held && (BiasKind != kAddendNone || MaskKind != kAddendNone);
  constexpr int kBias = kReads ? BiasKind : kAddendNone, kMask = kReads ? MaskKind : kAddendNone;
  each_strip_score<M, KB, kBias, kMask>(
      view, row0, kb0, lane, [&](int tile, int e, int row, int col, const ScoreAddend<kBias, kMask>& addend) {
        const bool masked = (PastN && col >= N) || (Causal && col > row);
        float x = s[tile][e] * scale_log2;
        if constexpr (Held) {
          if (!masked) x += held.v[tile][e];
        } else if (kReads && !masked) {
          x += addend();
        }
        s[tile][e] = masked ? neg_inf() : x;
      });
}

/// The block's row maxima, merged over the four lanes that share a row.
template <int KB>
__device__ __forceinline__ void block_max(const float (&s)[KB / 8][4], float (&top)[2]) {
  top[0] = top[1] = neg_inf();
#pragma unroll
  for (int tile = 0; tile < KB / 8; ++tile)
#pragma unroll
    for (int e = 0; e < 4; ++e) top[e >> 1] = fmaxf(top[e >> 1], s[tile][e]);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    top[h] = fmaxf(top[h], __shfl_xor_sync(0xffffffffu, top[h], 1));
    top[h] = fmaxf(top[h], __shfl_xor_sync(0xffffffffu, top[h], 2));
  }
}

/// Online softmax step: new maxima, the output and sums rescaled to them, and the block's
/// logits replaced by exp2(x - max). A row still all -inf keeps max -inf and takes exp2
/// against 0, so its probabilities are 0, never NaN.
template <int KB, int Dv>
__device__ __forceinline__ void online_step(float (&s)[KB / 8][4], StripStats& stats, float (&o)[Dv / 8][4]) {
  float top[2], base[2];
  block_max<KB>(s, top);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float next = fmaxf(stats.max[h], top[h]);
    base[h] = next == neg_inf() ? 0.0f : next;
    const float alpha = fast_exp2(stats.max[h] - base[h]);
    stats.max[h] = next;
    stats.sum[h] *= alpha;
#pragma unroll
    for (int tile = 0; tile < Dv / 8; ++tile) {
      o[tile][2 * h] *= alpha;
      o[tile][2 * h + 1] *= alpha;
    }
  }
#pragma unroll
  for (int tile = 0; tile < KB / 8; ++tile)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[tile][e] = fast_exp2(s[tile][e] - base[e >> 1]);
      stats.sum[e >> 1] += s[tile][e];
    }
}

/// O += P V for the key block: each 16 keys of P, rounded to 16 bits, are an A fragment as the
/// scores' two C tiles stand; V's B fragments come transposed from shared memory.
template <typename In, int Dv, int KB>
__device__ __forceinline__ void accumulate_values(const float (&s)[KB / 8][4], float (&o)[Dv / 8][4],
                                                  unsigned v_smem, int kb0, int key_end, int lane) {
  const int matrix = lane >> 3, row = lane & 7;
#pragma unroll
  for (int j = 0; j < KB / 16; ++j) {
    if (kb0 + 16 * j >= key_end) continue;
    const unsigned a[4] = {pair_from_floats<In>(s[2 * j][0], s[2 * j][1]),
                           pair_from_floats<In>(s[2 * j][2], s[2 * j][3]),
                           pair_from_floats<In>(s[2 * j + 1][0], s[2 * j + 1][1]),
                           pair_from_floats<In>(s[2 * j + 1][2], s[2 * j + 1][3])};
    const int key = kb0 + 16 * j + row + (matrix & 1) * 8;
#pragma unroll
    for (int nv = 0; nv < Dv / 16; ++nv) {
      unsigned b[4];
      const int col = nv * 16 + (matrix >> 1) * 8;
      load_matrices_transposed(b, v_smem + (key * (Dv + kAttentionRowPad) + col) * 2);
      mma_16x8x16<In>(o[2 * nv], a, b[0], b[1]);
      mma_16x8x16<In>(o[2 * nv + 1], a, b[2], b[3]);
    }
  }
}

/// O / sum for the strip's rows below M, half a strip at a time: the fragments' pairs into the
/// warp's rows, then each row out as 16-byte vectors by consecutive lanes. A row whose keys were
/// all masked has sum 0 and gives zeros; a NaN sum stays NaN.
template <typename In, int M, int Dv>
__device__ __forceinline__ void store_output(const float (&o)[Dv / 8][4], StripStats& stats,
                                             const AttentionView<In>& view, int row0, int lane) {
  constexpr int kVectors = Dv / kAttentionCopyElements;
  constexpr int kRow = Dv + kAttentionRowPad;
  constexpr int kSteps = (kAttentionWarpRows * kVectors + 31) / 32;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    stats.sum[h] += __shfl_xor_sync(0xffffffffu, stats.sum[h], 1);
    stats.sum[h] += __shfl_xor_sync(0xffffffffu, stats.sum[h], 2);
    const float inverse = stats.sum[h] == 0.0f ? 0.0f : 1.0f / stats.sum[h];
    if (row0 + h * kAttentionWarpRows >= M) break;  // the half and those after it hold no row
#pragma unroll
    for (int tile = 0; tile < Dv / 8; ++tile)
      *reinterpret_cast<unsigned*>(view.rows + (g * kRow + tile * 8 + 2 * t) * 2) =
          pair_from_floats<In>(o[tile][2 * h] * inverse, o[tile][2 * h + 1] * inverse);
    __syncwarp();
#pragma unroll
    for (int i = 0; i < kSteps; ++i) {
      const int v = i * 32 + lane, r = v / kVectors, c = v - r * kVectors;
      const int row = row0 + h * kAttentionWarpRows + r;
      if (v < kAttentionWarpRows * kVectors && row < M)
        *reinterpret_cast<uint4*>(view.o + row * view.o_row + c * kAttentionCopyElements) =
            *reinterpret_cast<const uint4*>(view.rows + (r * kRow + c * kAttentionCopyElements) * 2);
    }
    __syncwarp();
  }
}

/// One online-softmax step of the strip over the KB keys at kb0: scores, logits, the softmax's
/// update and P V.
template <typename In, int M, int N, int D, int Dv, int KB, int HeldKB, int BiasKind, int MaskKind, bool Causal,
          bool PastN, bool Held>
__device__ __forceinline__ void attend_key_block(const unsigned (&qa)[D / 16][4], float (&o)[Dv / 8][4],
                                                 StripStats& stats, const AttentionView<In>& view,
                                                 const HeldAddends<HeldKB, Held>& held, float scale_log2, int row0,
                                                 int kb0, int key_end, int lane) {
  float s[KB / 8][4];
  block_scores<In, D, KB>(s, qa, view.k_smem, kb0, key_end, lane);
  to_logits<In, M, N, KB, HeldKB, BiasKind, MaskKind, Causal, PastN, Held>(s, view, held, scale_log2, row0, kb0,
                                                                           lane);
  online_step<KB, Dv>(s, stats, o);
  accumulate_values<In, Dv, KB>(s, o, view.v_smem, kb0, key_end, lane);
}

/// The whole strip at row0, its Q fragments loaded: key blocks up to the last key any of its rows
/// sees. Bias and mask come from `held` where the kernel holds them (Held), else from global
/// memory. Without causality the last block is cut to the keys left (whole 16s), so that its
/// exponentials and masks cover those alone, and only it masks keys past N; with causality each
/// strip's last key is its own.
template <typename In, int M, int N, int D, int Dv, int BiasKind, int MaskKind, bool Causal, bool Held>
__device__ __forceinline__ void attend_strip(const unsigned (&qa)[D / 16][4], const AttentionView<In>& view,
                                             const HeldAddends<attention_key_block(N, Dv), Held>& held,
                                             float scale_log2, int row0, int lane) {
  constexpr int kKeys = attention_padded(N);
  constexpr int KB = attention_key_block(N, Dv);
  constexpr int kLastBlock = kKeys - (kKeys - 1) / KB * KB;
  constexpr int kLastStart = kKeys - kLastBlock;
  float o[Dv / 8][4];
#pragma unroll
  for (int tile = 0; tile < Dv / 8; ++tile) o[tile][0] = o[tile][1] = o[tile][2] = o[tile][3] = 0.0f;
  StripStats stats{{neg_inf(), neg_inf()}, {0.0f, 0.0f}};
  if constexpr (Causal) {
    const int key_end = min(kKeys, row0 + kAttentionTile);
#pragma unroll 1
    for (int kb0 = 0; kb0 < key_end; kb0 += KB)
      attend_key_block<In, M, N, D, Dv, KB, KB, BiasKind, MaskKind, true, (N < kKeys), Held>(
          qa, o, stats, view, held, scale_log2, row0, kb0, key_end, lane);
  } else {
#pragma unroll 1
    for (int kb0 = 0; kb0 < kLastStart; kb0 += KB)
      attend_key_block<In, M, N, D, Dv, KB, KB, BiasKind, MaskKind, false, false, Held>(
          qa, o, stats, view, held, scale_log2, row0, kb0, kKeys, lane);
    attend_key_block<In, M, N, D, Dv, kLastBlock, KB, BiasKind, MaskKind, false, (N < kKeys), Held>(
        qa, o, stats, view, held, scale_log2, row0, kLastStart, kKeys, lane);
  }
  store_output<In, M, Dv>(o, stats, view, row0, lane);
}

}  // namespace kjit
