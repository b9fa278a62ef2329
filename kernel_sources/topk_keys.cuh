// SPDX-License-Identifier: Apache-2.0
// Sort keys of the top-K: one unsigned 64-bit integer per element whose order is the output
// order, the logit descending and then the column ascending. Every key of a row is distinct,
// so selection never meets a tie and the result is deterministic.
#pragma once

#include "topk_shape.cuh"

namespace kjit {

typedef unsigned long long TopkKey;
static_assert(sizeof(TopkKey) == kTopkKeyBytes, "TopkKey: the unit the host sizes the buffers by");

/// The float's bits mapped so that unsigned order is float order; every NaN becomes one value
/// above +inf (torch.topk ranks NaN first too), and -0 becomes +0 (they are equal, so the column
/// decides). Adding +0 does both at once: -0 + 0 is +0, and the GPU's float arithmetic returns
/// its one canonical NaN (0x7fffffff) for any NaN operand, whatever its sign or payload: three
/// instructions a value, where tests and selects took eight.
__device__ __forceinline__ unsigned ordered_bits(float x) {
  const unsigned bits = __float_as_uint(__fadd_rn(x, 0.0f));
  return bits ^ (static_cast<unsigned>(static_cast<int>(bits) >> 31) | 0x80000000u);
}

__device__ __forceinline__ float float_of_ordered(unsigned ordered) {
  return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered);
}

/// Larger key = earlier in the output. The low half is ~col so that, for equal logits, the
/// smaller column wins. A real element's key is never 0: 0 marks "no element".
__device__ __forceinline__ TopkKey make_key(float x, int col) {
  return (static_cast<TopkKey>(ordered_bits(x)) << 32) | static_cast<unsigned>(~col);
}

/// The low bits of a key that differ between the columns [0, cols): above them, ~col is all ones.
__host__ __device__ constexpr int key_column_bits(int cols) {
  int bits = 0;
  while (bits < 31 && (1 << bits) < cols) ++bits;
  return bits;
}

__device__ __forceinline__ float key_value(TopkKey key) {
  return float_of_ordered(static_cast<unsigned>(key >> 32));
}

__device__ __forceinline__ int key_col(TopkKey key) {
  return static_cast<int>(~static_cast<unsigned>(key));
}

}  // namespace kjit
