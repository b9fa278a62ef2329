// SPDX-License-Identifier: Apache-2.0
// Launch arguments of the fused softmax + top-K kernels. Included by the kernels (under NVRTC)
// and by the host, so both sides agree on the layout; plain types only.
#pragma once

namespace kjit {

/// One trivially-copyable argument block: every top-K specialization has the same signature.
struct TopkParams {
  const void* logits;
  float* probs;              ///< [rows, k]
  void* indices;             ///< [rows, k] of the kernel's index type
  const int* k_per_row;      ///< may be null: every row keeps k
  long long rows;
  long long row_stride;      ///< elements between row starts
  int k;                     ///< slots per output row
  float log2e_over_t;        ///< log2(e) / temperature, clamped to the largest finite float
  unsigned flags;            ///< TopkFlagBits
};

/// Flag bits shared by host and device (the values of KJIT_TOPK_*).
enum TopkFlagBits { kTopkFlagLogProbs = 1, kTopkFlagRenorm = 2 };

}  // namespace kjit
