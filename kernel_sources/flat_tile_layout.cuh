// SPDX-License-Identifier: Apache-2.0
// How the flat_tile kernel cuts dense rows (row stride == width, input and output alike): a
// block's run of consecutive rows is one contiguous span of the tensor, moved between global
// and shared memory in 16-byte units; the unit boundaries fall wherever the span's address puts
// them, so the first and last units may hold only part of the span (peeled, element by element)
// and no access reaches a byte outside the span. On chip, a group of lanes takes a row. The
// kernel and the host (runtime/ops/rowwise/) size everything with these functions; plain
// constexpr C++, no std headers.
#pragma once

#include "host_device.cuh"

namespace kjit {

/// The widest rows flat_tile takes: a group of at most 32 lanes holds them in a few registers.
constexpr int kFlatTileMaxCols = 256;
/// Values a lane holds of its row at most.
constexpr int kFlatTileMaxValues = 16;
/// Bytes of input a tile aims at: enough units in flight a block, few enough that several
/// blocks share an SM.
constexpr int kFlatTileTargetBytes = 8192;
/// Passes of a block's groups over its tile's rows at most (each pass a row a group).
constexpr int kFlatTileMaxPasses = 8;
/// The unit of the span's loads and stores: one vector access.
constexpr int kFlatTileUnitBytes = 16;
/// Static shared memory of a block without opting in: the two span buffers must fit.
constexpr int kFlatTileMaxSmemBytes = 48 * 1024;

/// Values a lane of a `group`-lane row holds: columns lane, lane + group, ...
KJIT_HOST_DEVICE constexpr int flat_tile_values(long long cols, int group) {
  return group > 0 ? static_cast<int>((cols + group - 1) / group) : 0;
}

/// Rows a block's tile holds: every group a row a pass, as many passes (up to
/// kFlatTileMaxPasses) as bring the input near kFlatTileTargetBytes.
KJIT_HOST_DEVICE constexpr int flat_tile_rows(long long cols, int in_bytes, int threads, int group) {
  if (group <= 0 || threads < group || cols <= 0) return 0;
  const long long rows_per_pass = threads / group;
  const long long pass_bytes = rows_per_pass * cols * in_bytes;
  long long passes = (kFlatTileTargetBytes + pass_bytes - 1) / pass_bytes;
  if (passes > kFlatTileMaxPasses) passes = kFlatTileMaxPasses;
  return static_cast<int>(rows_per_pass * passes);
}

/// Bytes of a shared-memory buffer that holds `elements` of `elem_bytes` starting at any
/// element-aligned byte of a unit: whole units, one more for the shift.
KJIT_HOST_DEVICE constexpr long long flat_tile_buffer_bytes(long long elements, int elem_bytes) {
  return (elements * elem_bytes + kFlatTileUnitBytes - 1) / kFlatTileUnitBytes * kFlatTileUnitBytes +
         kFlatTileUnitBytes;
}

/// Static shared memory of a flat_tile block: the input and the output span buffers.
KJIT_HOST_DEVICE constexpr long long flat_tile_smem_bytes(long long cols, int in_bytes, int out_bytes,
                                                          int tile_rows) {
  return flat_tile_buffer_bytes(tile_rows * cols, in_bytes) + flat_tile_buffer_bytes(tile_rows * cols, out_bytes);
}

/// One tile's span of one tensor (input or output).
struct FlatSpan {
  long long first;  ///< its first element in the tensor
  int elements;     ///< its elements: the tile's rows (fewer in the last tile) times cols
  int shift;        ///< bytes from the unit boundary at or below its start to its start
  int units;        ///< 16-byte units it touches, from that boundary on
};

/// The span of tile `tile` (tiles of `tile_rows` rows over `rows` dense rows of `cols`) in a
/// tensor of `elem_bytes` elements at `base` (its address, or just that modulo 16).
KJIT_HOST_DEVICE constexpr FlatSpan flat_span(long long tile, int tile_rows, long long rows, long long cols,
                                              int elem_bytes, unsigned long long base) {
  const long long first_row = tile * tile_rows;
  const long long span_rows = rows - first_row < tile_rows ? rows - first_row : tile_rows;
  const long long first = first_row * cols;
  const int shift = static_cast<int>((base + static_cast<unsigned long long>(first) * elem_bytes) %
                                     kFlatTileUnitBytes);
  const int elements = static_cast<int>(span_rows * cols);
  const int units = (shift + elements * elem_bytes + kFlatTileUnitBytes - 1) / kFlatTileUnitBytes;
  return {first, elements, shift, units};
}

/// Whether unit `unit` of the span lies wholly inside it (one vector access), rather than
/// holding its start or end (peeled element by element).
KJIT_HOST_DEVICE constexpr bool flat_unit_whole(const FlatSpan& span, int unit, int elem_bytes) {
  return unit * kFlatTileUnitBytes >= span.shift &&
         (unit + 1) * kFlatTileUnitBytes <= span.shift + span.elements * elem_bytes;
}

/// The first element of the span in unit `unit`.
KJIT_HOST_DEVICE constexpr int flat_unit_first(const FlatSpan& span, int unit, int elem_bytes) {
  const int byte = unit * kFlatTileUnitBytes - span.shift;
  return byte < 0 ? 0 : byte / elem_bytes;
}

/// One past the last element of the span in unit `unit`.
KJIT_HOST_DEVICE constexpr int flat_unit_end(const FlatSpan& span, int unit, int elem_bytes) {
  const int end = ((unit + 1) * kFlatTileUnitBytes - span.shift) / elem_bytes;
  return end < span.elements ? end : span.elements;
}

/// Units a thread of `threads` moves at most: the span of a full tile, at its widest shift.
KJIT_HOST_DEVICE constexpr int flat_tile_units_per_thread(long long cols, int elem_bytes, int tile_rows,
                                                          int threads) {
  const long long units = flat_tile_buffer_bytes(tile_rows * cols, elem_bytes) / kFlatTileUnitBytes;
  return static_cast<int>((units + threads - 1) / threads);
}

}  // namespace kjit
