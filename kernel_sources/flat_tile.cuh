// SPDX-License-Identifier: Apache-2.0
// The flat_tile algorithm, for dense rows (row stride == width on both sides) and, Gapped, rows
// whose gaps (stride - width) hold at most kFlatTileMaxGapBytes on each side: a block's Rows
// consecutive rows are one contiguous span, copied into shared memory in 16-byte units whatever
// the width (gaps included) by cp.async, which holds no register, split there into rows, a group
// of Group lanes a row, and written back as a span of the output type: by 16-byte units where the
// output rows are dense, by 4-byte words, consecutive lanes on consecutive words, where they have
// gaps (which stay untouched). Narrow rows of an odd width or stride keep wide accesses and every
// lane busy, where a row-by-row kernel falls back to scalar accesses. A block a tile: a grid of as
// many blocks as tiles ran faster than resident blocks walking the tiles with the next one's
// copies in flight (docs/experiments/narrow-and-misaligned-rows.md). Geometry: flat_tile_layout.cuh.
#pragma once

#include "async_copy.cuh"
#include "flat_tile_layout.cuh"
#include "grid_dependency.cuh"
#include "row_math.cuh"

namespace kjit {

/// Puts tile span `span` of a tensor of T in flight into a shared buffer that holds element e at
/// byte span.shift + e * sizeof(T), so that the buffer's unit boundaries are global memory's. A
/// unit inside the tensor ([begin, end) in bytes) moves by one 16-byte cp.async that holds no
/// register, with the neighbouring rows' elements and gaps it covers (read, never written back);
/// only the tensor's first and last units, which may reach past it, move element by element, the
/// span's elements only. The copies land by the caller's wait_async_copies.
template <typename T, int UnitsPerThread, int Threads>
__device__ __forceinline__ void start_span_copy(const FlatSpan& span, const T* global, unsigned char* shared,
                                                unsigned long long begin, unsigned long long end) {
  constexpr int kSize = static_cast<int>(sizeof(T));
  const unsigned long long aligned = reinterpret_cast<unsigned long long>(global) - span.shift;
  const unsigned shared_base = shared_address(shared);
  T* const elements = reinterpret_cast<T*>(shared + span.shift);
#pragma unroll
  for (int j = 0; j < UnitsPerThread; ++j) {
    const int unit = static_cast<int>(threadIdx.x) + j * Threads;
    if (unit >= span.units) continue;
    const unsigned long long at = aligned + static_cast<unsigned long long>(unit) * kFlatTileUnitBytes;
    if (flat_unit_inside(at, begin, end)) {
      copy_async<kFlatTileUnitBytes>(shared_base + unit * kFlatTileUnitBytes, reinterpret_cast<const void*>(at));
    } else {
#pragma unroll 1
      for (int e = flat_unit_first(span, unit, kSize); e < flat_unit_end(span, unit, kSize); ++e)
        elements[e] = global[e];
    }
  }
}

/// The way back for dense rows: writes the span from the shared buffer laid out as
/// start_span_copy's, whole units by one 16-byte access, the partial units at its ends element by
/// element.
template <typename T, int UnitsPerThread, int Threads>
__device__ __forceinline__ void store_span(const FlatSpan& span, T* global, const unsigned char* shared) {
  constexpr int kSize = static_cast<int>(sizeof(T));
  unsigned char* const aligned = reinterpret_cast<unsigned char*>(global) - span.shift;
  const T* const elements = reinterpret_cast<const T*>(shared + span.shift);
#pragma unroll
  for (int j = 0; j < UnitsPerThread; ++j) {
    const int unit = static_cast<int>(threadIdx.x) + j * Threads;
    if (unit >= span.units) continue;
    if (flat_unit_whole(span, unit, kSize)) {
      *reinterpret_cast<uint4*>(aligned + unit * kFlatTileUnitBytes) =
          *reinterpret_cast<const uint4*>(shared + unit * kFlatTileUnitBytes);
    } else {
      for (int e = flat_unit_first(span, unit, kSize); e < flat_unit_end(span, unit, kSize); ++e)
        global[e] = elements[e];
    }
  }
}

/// The way back for rows with output gaps: consecutive lanes take consecutive 4-byte words of the
/// span, so that a warp's store covers 128 contiguous bytes. A word inside one row goes in one
/// access; one that holds a gap or a row's or the span's end goes element by element, its rows'
/// elements only. A thread's column walks along its words: one division a span, not a word.
template <typename T, int Threads>
__device__ __forceinline__ void store_span_words(const FlatSpan& span, T* global, const unsigned char* shared) {
  constexpr int kSize = static_cast<int>(sizeof(T));
  constexpr int kPerWord = kFlatTileWordBytes / kSize;
  unsigned char* const aligned = reinterpret_cast<unsigned char*>(global) - span.shift;
  const T* const elements = reinterpret_cast<const T*>(shared + span.shift);
  const int end = flat_end_word(span, kSize);
  int word = flat_first_word(span) + static_cast<int>(threadIdx.x);
  int first = flat_word_first(span, word, kSize);
  int col = flat_column(span, first);
  const int col_step = Threads * kPerWord % span.pitch;
#pragma unroll 1
  for (; word < end; word += Threads, first += Threads * kPerWord) {
    if (flat_word_in_row(span, first, col, kSize)) {
      *reinterpret_cast<unsigned*>(aligned + word * kFlatTileWordBytes) =
          *reinterpret_cast<const unsigned*>(shared + word * kFlatTileWordBytes);
    } else {
      int c = col;
#pragma unroll
      for (int e = first; e < first + kPerWord; ++e) {
        if (e >= 0 && e < span.elements && c < span.cols) global[e] = elements[e];
        c = c + 1 == span.pitch ? 0 : c + 1;
      }
    }
    col += col_step;
    if (col >= span.pitch) col -= span.pitch;
  }
}

/// One row of the tile, from the input buffer to the output buffer: a lane's values are
/// columns lane, lane + Group, ...; the statistics are reduced over the Group lanes. Every lane
/// of the block runs this, live or not, so that the shuffles see whole warps.
template <int Op, typename In, typename Out, int Cols, int Group>
__device__ __forceinline__ float tile_row(const In* x, Out* y, int lane, bool live) {
  typedef RowMath<Op> Math;
  constexpr int kValues = flat_tile_values(Cols, Group);
  float v[kValues];
#pragma unroll
  for (int i = 0; i < kValues; ++i) {
    const int col = lane + i * Group;
    v[i] = col < Cols ? to_float(x[col]) : 0.0f;
  }
  float first = Math::first_identity(), finished = 0.0f;
  if constexpr (Math::kTwoStats) {
#pragma unroll
    for (int i = 0; i < kValues; ++i)
      if (lane + i * Group < Cols) first = fmaxf(first, v[i]);
    first = warp_all_reduce<Group>(first, MaxOp());
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kValues; ++i) {
      const float e = fast_exp(v[i] - first);
      if (Op == kOpSoftmax) v[i] = e;  // softmax's output is e / sum
      if (lane + i * Group < Cols) sum += e;
    }
    finished = Math::finish(warp_all_reduce<Group>(sum, SumOp()));
  } else {
    typename Math::FirstOp op;
#pragma unroll
    for (int i = 0; i < kValues; ++i)
      if (lane + i * Group < Cols) first = op(first, Math::first_term(v[i]));
    first = warp_all_reduce<Group>(first, op);
  }
  if (live) {
#pragma unroll
    for (int i = 0; i < kValues; ++i) {
      const int col = lane + i * Group;
      const float out = Op == kOpSoftmax ? v[i] * finished : Math::apply(v[i], first, finished);
      if (col < Cols) y[col] = from_float<Out>(out);
    }
  }
  return first;
}

template <int Op, typename Io, int Cols, int Threads, int Group, int Rows, int Gapped>
__global__ void __launch_bounds__(Threads, flat_tile_min_blocks(Threads)) flat_tile(const RowParams params) {
  typedef typename Io::in In;
  typedef typename Io::out Out;
  static_assert(Cols >= 1 && Cols <= kFlatTileMaxCols, "flat_tile: 1..256 columns");
  static_assert(Group >= 1 && Group <= 32 && (Group & (Group - 1)) == 0,
                "flat_tile: a group is a power of two of at most 32 lanes");
  static_assert(Threads % 32 == 0 && Threads % Group == 0, "flat_tile: whole warps of whole groups");
  static_assert(Rows > 0 && Rows % (Threads / Group) == 0, "flat_tile: every group takes a row a pass");
  static_assert(flat_tile_values(Cols, Group) <= kFlatTileMaxValues, "flat_tile: at most 16 values a lane");
  static_assert(Gapped == 0 || Gapped == 1, "flat_tile: Gapped is 0 (dense rows) or 1");
  constexpr int kRowsPerPass = Threads / Group;
  constexpr int kPasses = Rows / kRowsPerPass;
  constexpr long long kInPitch = flat_tile_pitch_bound(Cols, sizeof(In), Gapped);
  constexpr long long kOutPitch = flat_tile_pitch_bound(Cols, sizeof(Out), Gapped);
  constexpr long long kInBytes = flat_tile_buffer_bytes(Rows * kInPitch, sizeof(In));
  constexpr long long kOutBytes = flat_tile_buffer_bytes(Rows * kOutPitch, sizeof(Out));
  static_assert(flat_tile_smem_bytes(Cols, sizeof(In), sizeof(Out), Rows, Gapped) <= kFlatTileMaxSmemBytes,
                "flat_tile: the span buffers exceed 48 KB");
  constexpr int kInUnits = flat_tile_units_per_thread(Cols, sizeof(In), Rows, Threads, Gapped);
  constexpr int kOutUnits = flat_tile_units_per_thread(Cols, sizeof(Out), Rows, Threads, Gapped);
  __shared__ __align__(16) unsigned char in_tile[kInBytes];
  __shared__ __align__(16) unsigned char out_tile[kOutBytes];

  start_after_prior_grids();
  const int group = static_cast<int>(threadIdx.x) / Group, lane = static_cast<int>(threadIdx.x) % Group;
  const auto in_base = reinterpret_cast<unsigned long long>(params.in);
  const auto out_base = reinterpret_cast<unsigned long long>(params.out);
  // Gapped, the validity check has held each stride within the pitch bound the buffers take.
  const int in_pitch = Gapped ? static_cast<int>(params.in_stride) : Cols;
  const int out_pitch = Gapped ? static_cast<int>(params.out_stride) : Cols;
  const unsigned long long in_end =
      in_base + static_cast<unsigned long long>((params.rows - 1) * in_pitch + Cols) * sizeof(In);
  const bool gapped_out = Gapped && out_pitch != Cols;
  // A block a tile (the grid covers them; the loop serves a grid cut at the launch limit).
  for (long long tile = blockIdx.x; tile * Rows < params.rows; tile += gridDim.x) {
    const FlatSpan in_span = flat_span(tile, Rows, params.rows, Cols, in_pitch, sizeof(In), in_base);
    const FlatSpan out_span = flat_span(tile, Rows, params.rows, Cols, out_pitch, sizeof(Out), out_base);
    start_span_copy<In, kInUnits, Threads>(in_span, static_cast<const In*>(params.in) + in_span.first, in_tile,
                                           in_base, in_end);
    wait_async_copies();
    __syncthreads();
    const long long rows_left = params.rows - tile * Rows;
    const int span_rows = rows_left < Rows ? static_cast<int>(rows_left) : Rows;
    const In* rows_in = reinterpret_cast<const In*>(in_tile + in_span.shift);
    Out* rows_out = reinterpret_cast<Out*>(out_tile + out_span.shift);
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const int row = pass * kRowsPerPass + group;
      const bool live = row < span_rows;
      // A row past the tile's end reads row 0 (always there) and stores nothing.
      const int at = live ? row : 0;
      const float first =
          tile_row<Op, In, Out, Cols, Group>(rows_in + at * in_pitch, rows_out + at * out_pitch, lane, live);
      if constexpr (Op == kOpReduceScale) {
        if (params.scale_out != nullptr && live && lane == 0) params.scale_out[tile * Rows + row] = first;
      }
    }
    __syncthreads();
    Out* const span_out = static_cast<Out*>(params.out) + out_span.first;
    if (gapped_out)
      store_span_words<Out, Threads>(out_span, span_out, out_tile);
    else
      store_span<Out, kOutUnits, Threads>(out_span, span_out, out_tile);
    // The next tile's copies and rows overwrite both buffers.
    __syncthreads();
  }
}

}  // namespace kjit
