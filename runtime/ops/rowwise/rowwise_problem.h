// SPDX-License-Identifier: Apache-2.0
// A validated row-wise call: what the heuristics, the kernel keys and the dispatch table see.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kjit/types.hpp"

namespace kjit {

/// Everything about a row-wise call that decides which kernel runs.
struct RowwiseProblem {
  RowOp op = RowOp::kSoftmax;
  DType in_dtype = DType::kF32;
  DType out_dtype = DType::kF32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  int max_pack = 1;  ///< widest vector access (elements) that pointers and strides allow
  /// Rows follow each other without gaps in the input and the output alike (both strides equal
  /// cols, or one row): a run of rows is one contiguous span (the flat_tile kernel).
  bool dense = false;
  /// Rows that are not dense, but whose gaps (stride - cols) hold at most kFlatTileMaxGapBytes and
  /// fewer elements than a row on each side: the flat_tile kernel takes them with their gaps.
  bool narrow_gaps = false;
  /// Every row's output starts at the same place on the widest pack's vector grid as its input
  /// (row_peel.cuh's lead), so that peeled kernels store whole vectors without realigning.
  bool leads_match = false;
};

/// Checks every argument (naming the bad one in the message) and derives the problem.
/// Throws Error(kErrorInvalidArgument). rows == 0 is valid (the call is a no-op).
RowwiseProblem validate_rowwise(RowOp op, const RowwiseArgs& args, const float* scale_out);

/// Whether both strides equal cols (or there is at most one row).
bool dense_rows(const RowwiseArgs& args) noexcept;

/// Whether rows that are not dense have gaps (stride - cols) of at most kFlatTileMaxGapBytes, and
/// narrower than a row, on each side.
bool narrow_gap_rows(const RowwiseArgs& args) noexcept;

/// Whether every row's output lead on the widest pack's grid equals its input's: pointers and
/// strides congruent modulo that pack (in elements).
bool leads_match_for(const RowwiseArgs& args) noexcept;

/// Widest pack (elements, a power of two, at most 16 bytes of the wider type) that every
/// pointer and, for more than one row, every row stride allows.
int max_pack_for(const RowwiseArgs& args);

/// The dispatch-table key of a problem: rows are bucketed (powers of two) because the chosen
/// kernel depends on rows only through such a bucket.
struct RowwiseKey {
  RowOp op;
  DType in_dtype;
  DType out_dtype;
  std::int64_t cols;
  int rows_bucket;  ///< ceil(log2(rows))
  int max_pack;
  bool dense;  ///< kept apart: a config chosen for dense rows may not run padded ones
  bool narrow_gaps;  ///< kept apart likewise: flat_tile takes such rows, not wider gaps
  bool leads_match;  ///< kept apart likewise: the ring peels only such rows

  bool operator==(const RowwiseKey& other) const noexcept;
};

struct RowwiseKeyHash {
  std::size_t operator()(const RowwiseKey& key) const noexcept;
};

/// ceil(log2(rows)) for rows >= 1.
int rows_bucket(std::int64_t rows) noexcept;
/// The largest row count in a bucket (what the heuristics plan for).
std::int64_t bucket_rows(int bucket) noexcept;

RowwiseKey key_of(const RowwiseProblem& problem) noexcept;

}  // namespace kjit
