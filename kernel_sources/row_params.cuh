// SPDX-License-Identifier: Apache-2.0
// Launch arguments of every row-wise kernel. Included by the kernels (under NVRTC) and by the
// host, so both sides agree on the layout; plain types only.
#pragma once

#include "kjit/row_op.hpp"

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

/// 32-bit words of one launch's row-claim counter (RowParams::row_claims).
constexpr int kRowClaimWords = 2;

/// The ops as the kernels' template argument Op takes them.
constexpr int kOpSoftmax = static_cast<int>(RowOp::kSoftmax);
constexpr int kOpLogSoftmax = static_cast<int>(RowOp::kLogSoftmax);
constexpr int kOpReduceScale = static_cast<int>(RowOp::kReduceScale);

}  // namespace kjit
