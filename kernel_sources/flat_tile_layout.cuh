// SPDX-License-Identifier: Apache-2.0
// How the flat_tile kernel cuts rows whose gaps (row stride - width) are narrow: a block's run of
// consecutive rows is one contiguous span of the tensor, its rows a pitch (the stride) apart,
// loaded into shared memory in 16-byte units; the unit boundaries fall wherever the span's address
// puts them. A unit inside the tensor is read whole, with whatever neighbouring rows and gaps it
// covers (they lie inside the caller's tensor); only the units holding the tensor's first or last
// byte are read element by element, so no access reaches outside it. Stores stay inside the span:
// dense rows by 16-byte units, the partial ones at the span's ends element by element; rows with
// gaps by 4-byte words, one access for a word inside one row, else its rows' elements one by one,
// never a gap. On chip, a group of lanes takes a row. The kernel and the host
// (runtime/ops/rowwise/) size everything with these functions; plain constexpr C++, no std
// headers.
#pragma once

#include "host_device.cuh"

namespace kjit {

/// The widest rows flat_tile takes: a group of at most 32 lanes holds them in a few registers.
constexpr int kFlatTileMaxCols = 256;
/// Values a lane holds of its row at most.
constexpr int kFlatTileMaxValues = 16;
/// Bytes of input a tile aims at, at most: enough units in flight a block, few enough that
/// several blocks share an SM (and the grid has tiles for all of them).
constexpr int kFlatTileTargetBytes = 8192;
/// Blocks of `threads` an SM should hold, told to the compiler (__launch_bounds__): 1536 threads
/// (40 registers a thread) rather than the 1024 it chose alone (64), so that more tiles are in
/// flight at once; 1280 for smaller blocks, which spilled at 40 on some widths.
KJIT_HOST_DEVICE constexpr int flat_tile_min_blocks(int threads) { return (threads >= 256 ? 1536 : 1280) / threads; }
/// Passes of a block's groups over its tile's rows at most (each pass a row a group).
constexpr int kFlatTileMaxPasses = 8;
/// The unit of the span's loads and stores: one vector access.
constexpr int kFlatTileUnitBytes = 16;
/// The unit of the stores of rows with output gaps: a warp's lanes take consecutive words.
constexpr int kFlatTileWordBytes = 4;
/// Static shared memory of a block without opting in: the two span buffers must fit.
constexpr int kFlatTileMaxSmemBytes = 48 * 1024;
/// The widest gap between rows (stride - width, on each side) flat_tile takes, in bytes: one unit,
/// so that the gaps the loads take along cost at most a unit a row.
constexpr int kFlatTileMaxGapBytes = 16;

/// Values a lane of a `group`-lane row holds: columns lane, lane + group, ...
KJIT_HOST_DEVICE constexpr int flat_tile_values(long long cols, int group) {
  return group > 0 ? static_cast<int>((cols + group - 1) / group) : 0;
}

/// Elements from one row's start to the next's in a tile's buffer at most: the width, and where
/// rows have gaps (`gapped`) the widest gap.
KJIT_HOST_DEVICE constexpr long long flat_tile_pitch_bound(long long cols, int elem_bytes, bool gapped) {
  return cols + (gapped ? kFlatTileMaxGapBytes / elem_bytes : 0);
}

/// Rows a block's tile holds: every group a row a pass, as many passes (at least one, at most
/// kFlatTileMaxPasses) as keep the input, at its widest pitch, within kFlatTileTargetBytes.
KJIT_HOST_DEVICE constexpr int flat_tile_rows(long long cols, int in_bytes, int threads, int group,
                                              bool gapped = false) {
  if (group <= 0 || threads < group || cols <= 0) return 0;
  const long long rows_per_pass = threads / group;
  const long long pass_bytes = rows_per_pass * flat_tile_pitch_bound(cols, in_bytes, gapped) * in_bytes;
  long long passes = kFlatTileTargetBytes / pass_bytes;
  if (passes < 1) passes = 1;
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
                                                          int tile_rows, bool gapped) {
  return flat_tile_buffer_bytes(tile_rows * flat_tile_pitch_bound(cols, in_bytes, gapped), in_bytes) +
         flat_tile_buffer_bytes(tile_rows * flat_tile_pitch_bound(cols, out_bytes, gapped), out_bytes);
}

/// One tile's span of one tensor (input or output).
struct FlatSpan {
  long long first;  ///< its first element in the tensor
  int elements;     ///< its elements: from its first row's start to its last row's end
  int shift;        ///< bytes from the unit boundary at or below its start to its start
  int units;        ///< 16-byte units it touches, from that boundary on
  int pitch;        ///< elements from one row's start to the next's (the row stride)
  int cols;         ///< elements of a row; pitch - cols of a gap follow each but the last
};

/// The span of tile `tile` (tiles of `tile_rows` rows over `rows` rows of `cols`, `pitch` apart)
/// in a tensor of `elem_bytes` elements at `base` (its address, or just that modulo 16).
KJIT_HOST_DEVICE constexpr FlatSpan flat_span(long long tile, int tile_rows, long long rows, long long cols,
                                              long long pitch, int elem_bytes, unsigned long long base) {
  const long long first_row = tile * tile_rows;
  const long long span_rows = rows - first_row < tile_rows ? rows - first_row : tile_rows;
  const long long first = first_row * pitch;
  const int shift = static_cast<int>((base + static_cast<unsigned long long>(first) * elem_bytes) %
                                     kFlatTileUnitBytes);
  const int elements = static_cast<int>((span_rows - 1) * pitch + cols);
  const int units = (shift + elements * elem_bytes + kFlatTileUnitBytes - 1) / kFlatTileUnitBytes;
  return {first, elements, shift, units, static_cast<int>(pitch), static_cast<int>(cols)};
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

/// Whether element `e` of the span belongs to a row, not to a gap between rows.
KJIT_HOST_DEVICE constexpr bool flat_element_in_row(const FlatSpan& span, int e) {
  return span.pitch == span.cols || e % span.pitch < span.cols;
}

/// Whether the 16-byte unit at byte address `at` lies inside the tensor [begin, end) (bytes), so
/// that one access may read it whole, neighbouring rows and gaps along.
KJIT_HOST_DEVICE constexpr bool flat_unit_inside(unsigned long long at, unsigned long long begin,
                                                 unsigned long long end) {
  return at >= begin && at + kFlatTileUnitBytes <= end;
}

/// The first and one past the last word (kFlatTileWordBytes, counted from the unit boundary at or
/// below the span's start) that hold the span's bytes.
KJIT_HOST_DEVICE constexpr int flat_first_word(const FlatSpan& span) { return span.shift / kFlatTileWordBytes; }
KJIT_HOST_DEVICE constexpr int flat_end_word(const FlatSpan& span, int elem_bytes) {
  return (span.shift + span.elements * elem_bytes + kFlatTileWordBytes - 1) / kFlatTileWordBytes;
}

/// The span element at the start of word `word`: -1 where a 16-bit span starts in its second half.
KJIT_HOST_DEVICE constexpr int flat_word_first(const FlatSpan& span, int word, int elem_bytes) {
  return (word * kFlatTileWordBytes - span.shift) / elem_bytes;
}

/// The column of span element `e` (>= -1; the element before the span is the last of a pitch).
KJIT_HOST_DEVICE constexpr int flat_column(const FlatSpan& span, int e) { return (e + span.pitch) % span.pitch; }

/// Whether the word whose first element is `first`, at column `col`, holds elements of one row of
/// the span only, so that a store may write it in one access.
KJIT_HOST_DEVICE constexpr bool flat_word_in_row(const FlatSpan& span, int first, int col, int elem_bytes) {
  const int per_word = kFlatTileWordBytes / elem_bytes;
  return first >= 0 && first + per_word <= span.elements && col + per_word <= span.cols;
}

/// Units a thread of `threads` moves at most: the span of a full tile at the widest pitch and
/// shift.
KJIT_HOST_DEVICE constexpr int flat_tile_units_per_thread(long long cols, int elem_bytes, int tile_rows,
                                                          int threads, bool gapped) {
  const long long units =
      flat_tile_buffer_bytes(tile_rows * flat_tile_pitch_bound(cols, elem_bytes, gapped), elem_bytes) /
      kFlatTileUnitBytes;
  return static_cast<int>((units + threads - 1) / threads);
}

}  // namespace kjit
