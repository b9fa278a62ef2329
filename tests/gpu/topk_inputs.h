// SPDX-License-Identifier: Apache-2.0
// Logits for the softmax_topk GPU suite: each row is a pure function of (seed, row, cols) and
// its kind, so a large batch can be generated in parallel and any single row regenerated later
// for its reference. The kinds aim at what a top-k kernel gets wrong: ties at the k-th place,
// special values, probabilities that underflow while their rank order still matters.
#pragma once

#include <cstdint>
#include <vector>

#include "kjit/types.hpp"

namespace kjit::test {

enum class TopkRowKind : int {
  kNormal,        ///< N(0, 1); in fp16 and bf16, ties are common in wide rows
  kNormal10,      ///< N(0, 1) * 10
  kNormal1000,    ///< N(0, 1) * 1000: a few entries take all the probability
  kAllEqual,      ///< one value repeated: every slot is a tie, filled in index order
  kFewIntegers,   ///< integers in [-2, 2]: long runs of ties straddle the k-th place
  kSignedZeros,   ///< +0, -0, +1 and -1: -0 and +0 are equal and tie by index
  kHuge,          ///< N(0, 1) with a few entries at +-1e30 (+-6e4 in fp16, its range)
  kNegInfRuns,    ///< N(0, 1) broken by runs of -inf
  kFewFinite,     ///< -inf but for up to three finite entries: the top k runs into -inf
  kOneNaN,        ///< N(0, 1) with one NaN: NaN probabilities, the NaN ranked first
  kOneNegativeNaN,  ///< the same with the NaN's sign bit set and a payload in fp32: a kernel that
                    ///< orders raw bits ranks it below -inf
  kOnePosInf,     ///< N(0, 1) with one +inf: NaN probabilities, the +inf ranked first
  kAllNegInf,     ///< only -inf: NaN probabilities, indices in order
  kDescending,    ///< values falling along the row: the row's best all lie at its start
  kHotStart,      ///< N(0, 1), 3 higher over the first 1/16 of the row (a vocabulary's
                  ///< frequent tokens): a sample of the start overrates the rest
};

const char* to_string(TopkRowKind kind);

/// Every kind, in the order a mixed batch cycles through them.
const std::vector<TopkRowKind>& all_topk_row_kinds();

/// Where the rows of a batch come from: row r of a batch of `cols` columns has the kind
/// kinds[(r + cols) % kinds.size()] (the width shifts the cycle, so that one-row batches of
/// different widths meet different kinds) and values drawn from (seed, r, cols).
struct TopkRowSource {
  std::uint64_t seed = 0;
  std::vector<TopkRowKind> kinds = all_topk_row_kinds();

  TopkRowKind kind_of(std::int64_t row, std::int64_t cols) const;
};

/// Writes row `row` (cols elements of `dtype`: f32, f16 or bf16) to `dst`.
void generate_topk_row(DType dtype, const TopkRowSource& source, std::int64_t row, std::int64_t cols,
                       void* dst);

/// Row `row` as the kernel reads it: the generated values after rounding to `dtype`.
std::vector<double> topk_input_row(DType dtype, const TopkRowSource& source, std::int64_t row,
                                   std::int64_t cols);

}  // namespace kjit::test
