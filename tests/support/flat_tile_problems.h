// SPDX-License-Identifier: Apache-2.0
// The problems the flat_tile suites (geometry and validity, the pick) check: every row-wise op,
// every dtype pair, and dense rows of a given shape.
#pragma once

#include <cstdint>

#include "kjit/types.hpp"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit::test {

inline constexpr RowOp kFlatTileOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};
inline constexpr DType kFlatTilePairs[][2] = {{DType::kF32, DType::kF32},   {DType::kF16, DType::kF16},
                                              {DType::kBF16, DType::kBF16}, {DType::kBF16, DType::kF32},
                                              {DType::kF16, DType::kF32},   {DType::kF32, DType::kBF16}};

/// Dense rows (both strides equal the width) at pack 1, as a width off the alignment gives them.
inline RowwiseProblem dense_problem(RowOp op, DType in, DType out, std::int64_t rows, std::int64_t cols) {
  RowwiseProblem p{op, in, out, rows, cols, 1};
  p.dense = true;
  return p;
}

}  // namespace kjit::test
