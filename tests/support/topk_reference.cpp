// SPDX-License-Identifier: Apache-2.0
#include "support/topk_reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace kjit::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// The max of a row and the sum of exp((x - max) / T) over it; `usable` is false for the rows
// whose probabilities are all NaN: a NaN anywhere, a +inf anywhere (inf - inf) or only -inf.
struct RowStats {
  double max = -kInf;
  double sum = 0.0;
  bool usable = false;
};

RowStats row_stats(const double* logits, std::int64_t cols, double temperature) {
  RowStats stats;
  for (std::int64_t c = 0; c < cols; ++c) {
    if (std::isnan(logits[c])) return stats;
    stats.max = std::max(stats.max, logits[c]);
  }
  if (std::isinf(stats.max)) return stats;
  for (std::int64_t c = 0; c < cols; ++c) stats.sum += std::exp((logits[c] - stats.max) / temperature);
  stats.usable = true;
  return stats;
}

// The `count` best-ranked indices of the row, in rank order. The rank is a strict total order
// (ties broken by index), so the answer is unique and nth_element + sort finds it in O(cols).
std::vector<std::int64_t> top_indices(const double* logits, std::int64_t cols, std::int32_t count) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(cols));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  auto before = [logits](std::int64_t a, std::int64_t b) { return ranks_before(logits[a], a, logits[b], b); };
  const auto end = order.begin() + count;
  if (count < cols) std::nth_element(order.begin(), end, order.end(), before);
  std::sort(order.begin(), end, before);
  order.resize(static_cast<std::size_t>(count));
  return order;
}

std::string format_value_mismatch(double got, double want, const std::string& why) {
  char text[160];
  std::snprintf(text, sizeof text, "got %.9g, want %.9g (%s)", got, want, why.c_str());
  return text;
}

}  // namespace

std::int32_t clamp_row_k(std::int32_t k_per_row_value, std::int32_t k) {
  return std::min(std::max(k_per_row_value, std::int32_t{0}), k);
}

bool ranks_before(double a, std::int64_t ia, double b, std::int64_t ib) {
  const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan != b_nan) return a_nan;
  if (!a_nan && a != b) return a > b;
  return ia < ib;
}

TopkRowExpectation reference_topk_row(const double* logits, std::int64_t cols, std::int32_t k,
                                      std::int32_t row_k, float temperature, std::uint32_t flags) {
  const bool logprobs = (flags & kTopkLogProbs) != 0;
  const bool renorm = (flags & kTopkRenorm) != 0;
  const std::int32_t count = static_cast<std::int32_t>(std::min<std::int64_t>(clamp_row_k(row_k, k), cols));
  TopkRowExpectation want;
  want.indices.assign(static_cast<std::size_t>(k), -1);
  want.probs.assign(static_cast<std::size_t>(k), logprobs ? -kInf : 0.0);

  const std::vector<std::int64_t> selected = top_indices(logits, cols, count);
  std::copy(selected.begin(), selected.end(), want.indices.begin());

  const double t = temperature;
  const RowStats stats = row_stats(logits, cols, t);
  if (!stats.usable) {
    std::fill(want.probs.begin(), want.probs.begin() + count, kNaN);
    return want;
  }
  auto scaled = [&](std::int64_t index) { return (logits[index] - stats.max) / t; };
  // p_i / sum(selected p) = exp(scaled_i) / sum(selected exp(scaled)): renormalizing only
  // swaps the denominator.
  double denominator = stats.sum;
  if (renorm) {
    denominator = 0.0;
    for (std::int64_t index : selected) denominator += std::exp(scaled(index));
  }
  const double log_denominator = std::log(denominator);
  for (std::int32_t slot = 0; slot < count; ++slot) {
    const double s = scaled(selected[slot]);
    want.probs[slot] = logprobs ? s - log_denominator : std::exp(s) / denominator;
  }
  return want;
}

std::string check_topk_value(double got, double want, bool logprobs) {
  if (std::isnan(want)) return std::isnan(got) ? std::string() : format_value_mismatch(got, want, "want NaN");
  if (std::isnan(got)) return format_value_mismatch(got, want, "unexpected NaN");
  if (std::isinf(want) || std::isinf(got))
    return got == want ? std::string() : format_value_mismatch(got, want, "infinities must match exactly");
  const double tolerance = logprobs ? 2e-5 + 2e-6 * std::fabs(want) : 1e-6 + 2e-5 * std::fabs(want);
  const double error = std::fabs(got - want);
  if (error <= tolerance) return {};
  char why[96];
  std::snprintf(why, sizeof why, "|err| %.3g > %.3g", error, tolerance);
  return format_value_mismatch(got, want, why);
}

std::int64_t load_index(DType idx_dtype, const void* indices, std::size_t slot) {
  const char* bytes = static_cast<const char*>(indices);
  if (idx_dtype == DType::kI32) {
    std::int32_t value;
    std::memcpy(&value, bytes + slot * sizeof value, sizeof value);
    return value;
  }
  if (idx_dtype == DType::kI64) {
    std::int64_t value;
    std::memcpy(&value, bytes + slot * sizeof value, sizeof value);
    return value;
  }
  throw std::invalid_argument(std::string("load_index: not an index dtype: ") + to_string(idx_dtype));
}

std::string compare_topk_row(std::int64_t row, const TopkRowExpectation& want, const float* got_probs,
                             const void* got_indices, DType idx_dtype, std::uint32_t flags) {
  const bool logprobs = (flags & kTopkLogProbs) != 0;
  const std::string where = "row " + std::to_string(row) + " slot ";
  for (std::size_t slot = 0; slot < want.indices.size(); ++slot) {
    const std::int64_t got_index = load_index(idx_dtype, got_indices, slot);
    if (got_index != want.indices[slot])
      return where + std::to_string(slot) + ": index got " + std::to_string(got_index) + ", want " +
             std::to_string(want.indices[slot]);
    const std::string why = check_topk_value(got_probs[slot], want.probs[slot], logprobs);
    if (!why.empty())
      return where + std::to_string(slot) + " (index " + std::to_string(got_index) + "): " +
             (logprobs ? "logprob " : "prob ") + why;
  }
  return {};
}

}  // namespace kjit::test
