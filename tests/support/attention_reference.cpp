// SPDX-License-Identifier: Apache-2.0
#include "support/attention_reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "support/numeric_host.h"

namespace kjit::test {
namespace {

double element(DType dtype, const void* base, std::int64_t index) {
  return load_element(dtype, base, static_cast<std::size_t>(index));
}

/// The row's logits: scaled dot products plus the addends, -inf where causality masks; `error`
/// receives the row's logit_error.
std::vector<double> logits_of(const AttentionArgs& a, std::int64_t b, std::int64_t h, std::int64_t row,
                              double& error) {
  double largest = 0.0;
  const std::int64_t q0 = b * a.q_strides[0] + h * a.q_strides[1] + row * a.q_strides[2];
  std::vector<double> logits(static_cast<std::size_t>(a.n));
  for (std::int64_t j = 0; j < a.n; ++j) {
    if (a.causal && j > row) {
      logits[j] = -std::numeric_limits<double>::infinity();
      continue;
    }
    const std::int64_t k0 = b * a.k_strides[0] + h * a.k_strides[1] + j * a.k_strides[2];
    double dot = 0.0, size = 0.0;
    for (std::int64_t c = 0; c < a.d; ++c) {
      const double product = element(a.dtype, a.q, q0 + c) * element(a.dtype, a.k, k0 + c);
      dot += product;
      size += std::abs(product);
    }
    double x = dot * static_cast<double>(a.scale);
    size *= std::abs(static_cast<double>(a.scale));
    for (const double addend :
         {a.bias != nullptr ? element(a.bias_dtype, a.bias, h * a.bias_strides[0] + row * a.bias_strides[1] + j) : 0.0,
          a.mask != nullptr ? element(a.mask_dtype, a.mask,
                                      (b % a.mask_windows) * a.mask_strides[0] + row * a.mask_strides[1] + j)
                            : 0.0}) {
      x += addend;
      if (std::isfinite(addend)) size += std::abs(addend);
    }
    logits[j] = x;
    if (std::isfinite(x)) largest = std::max(largest, size);
  }
  error = static_cast<double>(a.d + 4) * std::ldexp(largest, -23);
  return logits;
}

}  // namespace

AttentionRowExpectation reference_attention_row(const AttentionArgs& a, std::int64_t b, std::int64_t h,
                                                std::int64_t row) {
  AttentionRowExpectation want{std::vector<double>(a.dv, 0.0), std::vector<double>(a.dv, 0.0)};
  std::vector<double> p = logits_of(a, b, h, row, want.logit_error);
  double top = -std::numeric_limits<double>::infinity();
  bool nan = false;
  for (double x : p) {
    nan = nan || std::isnan(x) || x == std::numeric_limits<double>::infinity();
    top = std::max(top, x);
  }
  if (nan) {
    std::fill(want.out.begin(), want.out.end(), std::nan(""));
    return want;
  }
  if (top == -std::numeric_limits<double>::infinity()) return want;  // every key masked: zeros
  double sum = 0.0;
  for (double& x : p) sum += (x = std::exp(x - top));
  for (std::int64_t j = 0; j < a.n; ++j) {
    const std::int64_t v0 = b * a.v_strides[0] + h * a.v_strides[1] + j * a.v_strides[2];
    for (std::int64_t c = 0; c < a.dv; ++c) {
      const double value = element(a.dtype, a.v, v0 + c);
      want.out[c] += p[j] / sum * value;
      want.magnitude[c] += p[j] / sum * std::abs(value);
    }
  }
  return want;
}

std::string check_attention_value(DType dtype, double got, double want, double magnitude, double logit_error) {
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) && std::isnan(got) ? std::string() : "NaN where the other is not";
  const double eps = dtype == DType::kBF16 ? 1.0 / 256 : 1.0 / 2048;
  const double bound = 2 * eps * (std::abs(want) + magnitude) + 2 * logit_error * magnitude + 1e-6;
  if (std::abs(got - want) <= bound) return {};
  return "off by " + std::to_string(std::abs(got - want)) + ", more than " + std::to_string(bound);
}

}  // namespace kjit::test
