// SPDX-License-Identifier: Apache-2.0
// Launch arguments of the attention kernel. Included by the kernel (under NVRTC) and by the
// host, so both sides agree on the layout; plain types only.
#pragma once

namespace kjit {

/// One trivially-copyable argument block: every attention specialization has the same signature.
/// Strides are in elements: batch, head, row for q, k, v and o; head (window), row for bias and mask.
struct AttentionParams {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const void* bias;  ///< [heads, m, n], or null when the kernel has none
  const void* mask;  ///< [mask_windows, m, n], or null when the kernel has none
  long long problems;  ///< batch x heads
  long long heads;
  long long mask_windows;
  long long q_strides[3];
  long long k_strides[3];
  long long v_strides[3];
  long long o_strides[3];
  long long bias_strides[2];
  long long mask_strides[2];
  float scale_log2;  ///< scale x log2(e): scores go to exp2's domain in one multiply
};

}  // namespace kjit
