// SPDX-License-Identifier: Apache-2.0
// The attention kernel's additive bias and mask: their element types, a strip's view of them
// where they lie in global memory, and the group's staging of a problem's bias + mask into
// shared memory (attention_addends_staged in attention_shape.cuh says when).
#pragma once

#include "attention_params.cuh"
#include "attention_shape.cuh"
#include "numeric.cuh"

namespace kjit {

constexpr float kAttentionLog2e = 1.4426950408889634f;

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

/// One thread's share of a problem's bias + mask, times log2(e): element thread + i x Threads
/// of the row-major [M, N]. Loaded for the next problem before this one computes (the loads stay
/// in flight meanwhile) and stored into the group's rows once this one is done with them.
template <int M, int N, int BiasKind, int MaskKind, int Threads>
struct StagedAddends {
  static constexpr int kCount = M * N;
  static constexpr int kEach = (kCount + Threads - 1) / Threads;
  float value[kEach];

  __device__ __forceinline__ void load(const AttentionParams& p, long long index, int thread) {
    const long long b = index / p.heads, h = index - b * p.heads;
    const void* bias = addend_offset<BiasKind>(p.bias, h * p.bias_strides[0]);
    const void* mask = addend_offset<MaskKind>(p.mask, (MaskKind == kAddendNone ? 0 : b % p.mask_windows) * p.mask_strides[0]);
#pragma unroll
    for (int i = 0; i < kEach; ++i) {
      const int e = thread + i * Threads;
      const int row = e / N, col = e - row * N;
      value[i] = 0.0f;
      if (kCount % Threads == 0 || e < kCount)
        value[i] = kAttentionLog2e * (AddendRow<BiasKind>(bias, p.bias_strides[1], row, col)[0] +
                                      AddendRow<MaskKind>(mask, p.mask_strides[1], row, col)[0]);
    }
  }

  /// Into rows of attention_addend_row(N) floats; columns past N stay unwritten (never used).
  __device__ __forceinline__ void store(float* rows, int thread) const {
#pragma unroll
    for (int i = 0; i < kEach; ++i) {
      const int e = thread + i * Threads;
      const int row = e / N, col = e - row * N;
      if (kCount % Threads == 0 || e < kCount) rows[row * attention_addend_row(N) + col] = value[i];
    }
  }
};

}  // namespace kjit
