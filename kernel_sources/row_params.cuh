// SPDX-License-Identifier: Apache-2.0
// Launch arguments of every row-wise kernel. Included by the kernels (under NVRTC) and by the
// host, so both sides agree on the layout; plain types only.
#pragma once

namespace kjit {

/// One trivially-copyable argument block for every row-wise kernel: the launch signature is
/// the same for every specialization.
struct RowParams {
  const void* in;
  void* out;
  float* scale_out;       ///< reduce_scale: max|x| per row (may be null)
  long long rows;
  long long in_stride;    ///< elements between row starts
  long long out_stride;   ///< elements between row starts
  /// The ring: two counters (rows claimed, clusters done claiming) that are zero when the launch
  /// starts and that its last cluster sets back to zero; each cluster takes its first row by
  /// its index and claims the others one at a time. Null: each cluster takes every clusters-th
  /// row.
  unsigned* row_claims;
};

/// Op codes shared by host and device (template argument Op).
enum RowOpCode { kOpSoftmax = 0, kOpLogSoftmax = 1, kOpReduceScale = 2 };

}  // namespace kjit
