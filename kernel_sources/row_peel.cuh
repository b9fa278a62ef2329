// SPDX-License-Identifier: Apache-2.0
// Rows whose start is off the vector grid (odd strides, sliced views): the row is laid over the
// grid of Pack-element vectors that its start address falls in, so that every vector wholly
// inside the row is one aligned access, and the head and tail, the parts of the first and last
// vectors that hold the row, are accessed element by element. The shift (`lead`) comes from
// each row's address at run time; the width is the kernel's. Plain constexpr C++ shared with the
// host, which sizes shares by it, and its tests, which check it exhaustively.
#pragma once

#include "host_device.cuh"

namespace kjit {

/// Elements of the row's first vector that lie before the row's start (0..pack-1): where on the
/// grid of `pack`-element vectors a row starting at byte `address` begins. `address` is a
/// multiple of `elem_bytes`, as the host checks.
KJIT_HOST_DEVICE constexpr int row_lead(unsigned long long address, int elem_bytes, int pack) {
  return static_cast<int>(address % (static_cast<unsigned long long>(elem_bytes) * pack) / elem_bytes);
}

/// The columns a peeled row's vectors may span: the row and at most pack - 1 elements before it,
/// so that threads size their share for the worst shift.
KJIT_HOST_DEVICE constexpr long long peeled_cols(long long cols, int pack) { return cols + pack - 1; }

/// Vectors of the grid that hold any of a row of `cols` starting `lead` elements into a vector.
KJIT_HOST_DEVICE constexpr long long peeled_vectors(long long cols, int pack, int lead) {
  return (lead + cols + pack - 1) / pack;
}

/// The first column of vector `vector` of the row's grid: negative for the head's vector when
/// the row starts inside it.
KJIT_HOST_DEVICE constexpr long long vector_column(long long vector, int pack, int lead) {
  return vector * pack - lead;
}

/// Whether the vector whose first column is `col` lies wholly inside a row of `cols`, so that
/// one aligned access moves it; the others are the head and the tail, moved element by element.
KJIT_HOST_DEVICE constexpr bool whole_vector(long long col, int pack, long long cols) {
  return col >= 0 && col + pack <= cols;
}

/// How one row lies on the grid: head elements before the first whole vector, whole vectors,
/// tail elements after the last one (head + body * pack + tail == cols).
struct RowPeel {
  int lead;
  int head;
  long long body;
  int tail;
};

KJIT_HOST_DEVICE constexpr RowPeel row_peel(long long cols, int pack, int lead) {
  const long long head = lead == 0 ? 0 : (pack - lead < cols ? pack - lead : cols);
  const long long body = (cols - head) / pack;
  return {lead, static_cast<int>(head), body, static_cast<int>(cols - head - body * pack)};
}

/// Where column `col` of a row sits on its grid: the vector and the lane within it.
struct VectorLane {
  long long vector;
  int lane;
};

KJIT_HOST_DEVICE constexpr VectorLane vector_lane(long long col, int pack, int lead) {
  return {(col + lead) / pack, static_cast<int>((col + lead) % pack)};
}

/// Whether a row's output vectors are the input's: when both sides start at the same lead, a
/// vector of the input grid is one of the output grid too, and is stored whole. Otherwise the
/// kernels keep the input's grid (their loads must all be in flight at once; stores are not
/// waited on) and store element by element, or, in the register kernels, realigned (below).
KJIT_HOST_DEVICE constexpr bool output_on_input_grid(int in_lead, int out_lead) { return in_lead == out_lead; }

/// Realigned stores (row_regs.cuh): where the leads differ, the output vector that starts
/// realign_shift elements into a thread's input vector lies on the output's grid; it takes the
/// rest of the thread's pack and the start of the next vector's, which the next lane holds.
KJIT_HOST_DEVICE constexpr int realign_shift(int in_lead, int out_lead, int pack) {
  return (in_lead - out_lead + pack) % pack;
}

/// Lanes that hold consecutive vectors and reach each other by shuffles: a group of a warp or
/// less, else a warp.
KJIT_HOST_DEVICE constexpr int shuffle_run(int group) { return group < 32 ? group : 32; }

/// What a lane of a run stores of its input vector at `col`, shift = realign_shift: the head
/// [col, col + shift) element by element where the previous lane is in another run (the first),
/// the output vector at col + shift where the next lane is in its run (every one but the last),
/// and the tail [col + shift, col + pack) element by element where it is not (the last).
struct RealignedStore {
  bool head;
  bool window;
  bool tail;
};

KJIT_HOST_DEVICE constexpr RealignedStore realigned_store(int run_lane, int run) {
  return {run_lane == 0, run_lane != run - 1, run_lane == run - 1};
}

}  // namespace kjit
