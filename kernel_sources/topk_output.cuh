// SPDX-License-Identifier: Apache-2.0
// Writing the top-K outputs: a winner's probability (or log-probability) and index in its
// slot, and the slots past a row's own k.
#pragma once

#include "numeric.cuh"
#include "topk_keys.cuh"
#include "topk_params.cuh"

namespace kjit {

/// The slots row `row` fills: its own k (clamped to [0, k]) or k.
__device__ __forceinline__ int row_slots(const TopkParams& p, long long row) {
  if (p.k_per_row == nullptr) return p.k;
  const int k_row = p.k_per_row[row];
  return k_row < 0 ? 0 : (k_row > p.k ? p.k : k_row);
}

template <typename Idx>
__device__ __forceinline__ void write_slot(const TopkParams& p, long long row, int slot,
                                           TopkKey key, float row_max, float norm) {
  const long long at = row * p.k + slot;
  const float scaled = (key_value(key) - row_max) * p.log2e_over_t;
  p.probs[at] = (p.flags & kTopkFlagLogProbs)
                    ? (scaled - fast_log2(norm)) * 0.6931471805599453f
                    : fast_exp2(scaled) / norm;
  static_cast<Idx*>(p.indices)[at] = static_cast<Idx>(key_col(key));
}

template <typename Idx, int Threads>
__device__ void write_unused_slots(const TopkParams& p, long long row, int k_row) {
  const float empty = (p.flags & kTopkFlagLogProbs) ? neg_inf() : 0.0f;
  for (int slot = k_row + static_cast<int>(threadIdx.x); slot < p.k; slot += Threads) {
    p.probs[row * p.k + slot] = empty;
    static_cast<Idx*>(p.indices)[row * p.k + slot] = static_cast<Idx>(-1);
  }
}

}  // namespace kjit
