// SPDX-License-Identifier: Apache-2.0
// Sort keys of the top-K: one unsigned 64-bit integer per element whose order is the output
// order, the logit descending and then the column ascending. Every key of a row is distinct,
// so selection never meets a tie and the result is deterministic.
#pragma once

namespace kjit {

typedef unsigned long long TopkKey;

/// The float's bits mapped so that unsigned order is float order; every NaN becomes one value
/// above +inf (torch.topk ranks NaN first too), and -0 becomes +0 (they are equal, so the column
/// decides).
__device__ __forceinline__ unsigned ordered_bits(float x) {
  unsigned bits = __float_as_uint(x);
  if (x != x) bits = 0x7fc00000u;
  if (x == 0.0f) bits = 0u;
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

__device__ __forceinline__ float float_of_ordered(unsigned ordered) {
  return __uint_as_float((ordered & 0x80000000u) ? (ordered & 0x7fffffffu) : ~ordered);
}

/// Larger key = earlier in the output. The low half is ~col so that, for equal logits, the
/// smaller column wins. A real element's key is never 0: 0 marks "no element".
__device__ __forceinline__ TopkKey make_key(float x, int col) {
  return (static_cast<TopkKey>(ordered_bits(x)) << 32) | static_cast<unsigned>(~col);
}

__device__ __forceinline__ float key_value(TopkKey key) {
  return float_of_ordered(static_cast<unsigned>(key >> 32));
}

__device__ __forceinline__ int key_col(TopkKey key) {
  return static_cast<int>(~static_cast<unsigned>(key));
}

}  // namespace kjit
