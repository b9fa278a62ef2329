// SPDX-License-Identifier: Apache-2.0
// A tensor of attention as the argument checks see it: up to three strided dimensions (batch,
// head, row) over contiguous rows, which bytes it touches, and whether it overlaps another.
#pragma once

#include <cstdint>

#include "runtime/ops/argument_checks.h"

namespace kjit {

struct AttentionTensor {
  const char* name = "";
  const void* base = nullptr;
  int element_bytes = 2;
  int dims = 3;                       ///< 3 (batch, head, row) or 2 (head or window, row)
  std::int64_t extents[3] = {1, 1, 1};
  std::int64_t strides[3] = {0, 0, 0};  ///< elements
  std::int64_t row = 1;               ///< contiguous elements of a row
};

/// Throws Error(kErrorInvalidArgument) naming the tensor and stride when a stride of a
/// dimension of more than one entry is negative, a row stride is shorter than a row, the span
/// in bytes overflows 62 bits or runs past the end of the address space.
void require_sane_layout(const AttentionTensor& t);
/// Throws unless every stride of a dimension of more than one entry is a multiple of `elements`.
void require_stride_multiple(const AttentionTensor& t, std::int64_t elements);
/// Throws unless no two of the tensor's rows share a byte (an output must not overlap itself).
void require_disjoint_rows(const AttentionTensor& t);
/// Whether two tensors may share a byte: exact where both are rows at one stride, else judged
/// by their spans (a layout too irregular to tell counts as overlapping).
bool may_overlap(const AttentionTensor& a, const AttentionTensor& b);

}  // namespace kjit
