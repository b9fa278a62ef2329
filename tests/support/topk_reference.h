// SPDX-License-Identifier: Apache-2.0
// Float64 CPU reference of softmax_topk for one row, and the rule a kernel's row is held to:
// indices exactly, probabilities within a tolerance, special values exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"

namespace kjit::test {

/// What one row of softmax_topk must hold: `k` slots of index and (log-)probability.
struct TopkRowExpectation {
  std::vector<std::int64_t> indices;  ///< -1 in the slots past the row's own k
  std::vector<double> probs;          ///< log-probabilities with kTopkLogProbs
};

/// A k_per_row entry as the op applies it: clamped to [0, k].
std::int32_t clamp_row_k(std::int32_t k_per_row_value, std::int32_t k);

/// True when logit `a` (at index `ia`) takes a slot before logit `b` (at `ib`): larger values
/// first, NaN above +inf, equal values (-0 and +0 included) and NaNs in ascending index order.
bool ranks_before(double a, std::int64_t ia, double b, std::int64_t ib);

/// The reference of one row of `cols` logits (already rounded from the input dtype). The first
/// `row_k` slots (0 <= row_k <= k) hold the row_k highest-ranked indices; the rest get index -1
/// and probability 0 (-inf with kTopkLogProbs). Probabilities are softmax((x - max) / T) over
/// the whole row in float64; kTopkRenorm divides them by the sum of the row_k selected ones.
/// A row with a NaN, a +inf, or only -inf gets NaN in every selected slot; otherwise -inf
/// logits get probability 0 (log-probability -inf).
TopkRowExpectation reference_topk_row(const double* logits, std::int64_t cols, std::int32_t k,
                                      std::int32_t row_k, float temperature, std::uint32_t flags);

/// Empty when a kernel's value `got` (fp32) is close enough to `want`, else why not.
/// Probabilities: |err| <= 1e-6 + 2e-5*|want|; log-probabilities: |err| <= 2e-5 + 2e-6*|want|.
/// NaN must meet NaN, and an infinity must be met by the same infinity.
std::string check_topk_value(double got, double want, bool logprobs);

/// The first disagreement between one row of a kernel's output (`want.indices.size()` slots of
/// fp32 probabilities and of `idx_dtype` indices) and its expectation, as "row R slot S: index
/// got G, want W" or "row R slot S (index I): prob got G, want W (why)"; empty on a match.
std::string compare_topk_row(std::int64_t row, const TopkRowExpectation& want, const float* got_probs,
                             const void* got_indices, DType idx_dtype, std::uint32_t flags);

/// Element `slot` of an array of `idx_dtype` (i32 or i64) indices, widened.
std::int64_t load_index(DType idx_dtype, const void* indices, std::size_t slot);

}  // namespace kjit::test
