// SPDX-License-Identifier: Apache-2.0
// Argument checks every op family shares: the row limit, element alignment of every pointer,
// and overlap judged by the bytes each tensor actually touches (a strided view's rows, not the
// span from its first row to its last), so disjoint interleaved slices pass and true overlaps
// of any optional output do not.
#pragma once

#include <cstdint>

namespace kjit {

/// The bytes a batch of rows touches: `rows` rows of `row_bytes` bytes, `stride_bytes` apart,
/// from `base`.
struct TouchedRows {
  std::uintptr_t base = 0;
  std::uint64_t row_bytes = 0;
  std::uint64_t stride_bytes = 0;
  std::int64_t rows = 0;
};

/// `rows` rows of `cols` elements of `element_bytes` bytes, `stride` elements apart. The caller
/// has checked that (rows - 1) * stride + cols elements fit in 63 bits of bytes.
TouchedRows touched_rows(const void* base, std::int64_t rows, std::int64_t cols,
                         std::int64_t stride, int element_bytes) noexcept;
/// `elements` contiguous elements of `element_bytes` bytes (an output of [rows, k]).
TouchedRows touched_span(const void* base, std::int64_t elements, int element_bytes) noexcept;

/// True when some byte lies in a row of both. Exact, except that two batches of different
/// strides sharing more than 2^20 rows' worth of span are taken to overlap without proof.
bool touch_same_bytes(const TouchedRows& a, const TouchedRows& b) noexcept;

/// Throws Error(kErrorInvalidArgument) naming `name` unless `pointer` is a multiple of
/// `element_bytes` (a misaligned element faults on the GPU). A null pointer passes.
void require_aligned(const char* name, const void* pointer, int element_bytes);

/// Throws Error(kErrorInvalidArgument) naming `name` when the bytes `t` touches run past the end
/// of the address space (a pointer no allocation can have).
void require_addressable(const char* name, const TouchedRows& t);
/// Throws Error(kErrorInvalidArgument) naming rows unless 0 <= rows <= kMaxRows.
void require_rows(std::int64_t rows);

}  // namespace kjit
