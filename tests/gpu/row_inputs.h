// SPDX-License-Identifier: Apache-2.0
// Inputs of the GPU suites: each row is a pure function of (seed, row, cols), so a large batch
// can be generated in parallel and any single row regenerated later for its reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"

namespace kjit::test {

/// What a row holds. Ordinary rows alternate with rows of special values, so every batch of
/// ten or more rows meets each of them.
enum class RowKind : int {
  kNormal = 0,      ///< N(0, 1)
  kWide = 1,        ///< N(0, 1) * 30: far tails, exp underflow
  kSomeNegInf = 2,  ///< N(0, 1) with about one entry in eight -inf
  kPosInf = 3,      ///< N(0, 1) with one +inf: a NaN row (softmax), an inf scale (reduce_scale)
  kNaN = 4,         ///< N(0, 1) with one NaN: a NaN row
  kAllNegInf = 5,   ///< only -inf: a NaN row (softmax), inf/inf (reduce_scale)
  kZeros = 6,       ///< only zeros: uniform softmax, zeros from reduce_scale
  kOffset = 7,      ///< 1000 + N(0, 1) * 30: the max must be subtracted before exp
  kTiny = 8,        ///< N(0, 1) * 1e-39: fp32 and bf16 subnormals, a subnormal max|x| (f16: zeros)
  kHuge = 9,        ///< N(0, 1) * 3e37: max|x| near the top of the range (f16: +-inf)
};
inline constexpr int kRowKinds = 10;

/// The kind of row `row` in a batch of `cols` columns (the width shifts the pattern, so that
/// single-row batches of different widths meet different kinds).
RowKind row_kind(std::int64_t row, std::int64_t cols);
const char* to_string(RowKind kind);

/// The seed of this run: KJIT_TEST_SEED when set, else fresh; announced once per process.
std::uint64_t test_seed();

/// Writes row `row` (cols elements of `dtype`) to `dst`.
void generate_row(DType dtype, std::uint64_t seed, std::int64_t row, std::int64_t cols, void* dst);

/// Row `row` as the kernel reads it: the generated values after rounding to `dtype`.
std::vector<double> input_row(DType dtype, std::uint64_t seed, std::int64_t row, std::int64_t cols);

/// Rows worth checking in a batch of `rows`: all of them up to 64, else the first and last 16
/// and 32 more drawn with `seed`, sorted and without repeats.
std::vector<std::int64_t> rows_to_check(std::int64_t rows, std::uint64_t seed);

}  // namespace kjit::test
