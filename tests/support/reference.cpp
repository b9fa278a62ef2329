// SPDX-License-Identifier: Apache-2.0
#include "support/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "support/numeric_host.h"

namespace kjit::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// (max, sum of exp(x - max)) of a row, or `usable` false when the row must come out all NaN:
// a NaN anywhere, a +inf anywhere (exp(inf - inf) is NaN) or only -inf (exp(-inf - -inf)).
struct SoftmaxStats {
  double max = -HUGE_VAL;
  double sum = 0.0;
  bool usable = false;
};

SoftmaxStats softmax_stats(const double* in, std::int64_t cols) {
  SoftmaxStats stats;
  for (std::int64_t c = 0; c < cols; ++c) {
    if (std::isnan(in[c])) return stats;
    stats.max = std::max(stats.max, in[c]);
  }
  if (std::isinf(stats.max)) return stats;
  for (std::int64_t c = 0; c < cols; ++c) stats.sum += std::exp(in[c] - stats.max);
  stats.usable = true;
  return stats;
}

double fp32_tolerance(RowOp op, double ref) {
  // log_softmax values grow with the spread of the row, and (x - max) is rounded to fp32 before
  // anything else happens, so its bound is mostly relative to a larger absolute floor.
  return op == RowOp::kLogSoftmax ? 1e-5 + 1e-6 * std::fabs(ref) : 1e-6 + 1e-5 * std::fabs(ref);
}

std::string format_mismatch(double got, double ref, const char* why) {
  char text[192];
  std::snprintf(text, sizeof text, "got %.9g, want %.9g (%s)", got, ref, why);
  return text;
}

// One ulp in a 16-bit type: `got` must be the reference rounded to the type or a neighbour of it.
std::string check_16bit(DType dtype, double got, double ref) {
  const bool half = dtype == DType::kF16;
  const std::uint16_t nearest = half ? f16_from_double(ref) : bf16_from_double(ref);
  const std::uint16_t up = half ? f16_next_up(nearest) : bf16_next_up(nearest);
  const std::uint16_t down = half ? f16_next_down(nearest) : bf16_next_down(nearest);
  auto value = [half](std::uint16_t bits) { return half ? f16_to_double(bits) : bf16_to_double(bits); };
  const double rounded = value(nearest);
  if (std::isinf(rounded)) {
    return got == rounded ? std::string() : format_mismatch(got, ref, "reference rounds to inf");
  }
  if (got == rounded || got == value(up) || got == value(down)) return {};
  return format_mismatch(got, ref, half ? "more than 1 ulp of f16" : "more than 1 ulp of bf16");
}

}  // namespace

void reference_softmax(const double* in, double* out, std::int64_t cols) {
  const SoftmaxStats stats = softmax_stats(in, cols);
  for (std::int64_t c = 0; c < cols; ++c)
    out[c] = stats.usable ? std::exp(in[c] - stats.max) / stats.sum : kNaN;
}

void reference_log_softmax(const double* in, double* out, std::int64_t cols) {
  const SoftmaxStats stats = softmax_stats(in, cols);
  const double log_sum = stats.usable ? std::log(stats.sum) : kNaN;
  for (std::int64_t c = 0; c < cols; ++c)
    out[c] = stats.usable ? (in[c] - stats.max) - log_sum : kNaN;
}

float reference_reduce_scale(const double* in, double* out, std::int64_t cols) {
  double absmax = 0.0;
  for (std::int64_t c = 0; c < cols; ++c) {
    if (std::isnan(in[c])) {
      std::fill(out, out + cols, kNaN);
      return std::numeric_limits<float>::quiet_NaN();
    }
    absmax = std::max(absmax, std::fabs(in[c]));
  }
  // A row of zeros must not become 0/0; an inf entry becomes inf/inf = NaN, as in torch.
  for (std::int64_t c = 0; c < cols; ++c) out[c] = absmax == 0.0 ? 0.0 : in[c] / absmax;
  return static_cast<float>(absmax);
}

void reference_row(RowOp op, const double* in, double* out, std::int64_t cols, float* scale) {
  switch (op) {
    case RowOp::kSoftmax: reference_softmax(in, out, cols); break;
    case RowOp::kLogSoftmax: reference_log_softmax(in, out, cols); break;
    case RowOp::kReduceScale: {
      const float s = reference_reduce_scale(in, out, cols);
      if (scale != nullptr) *scale = s;
      break;
    }
  }
}

std::string check_element(RowOp op, DType out_dtype, double got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? std::string() : format_mismatch(got, ref, "want NaN");
  if (std::isnan(got)) return format_mismatch(got, ref, "unexpected NaN");
  if (std::isinf(ref) || std::isinf(got))
    return got == ref ? std::string() : format_mismatch(got, ref, "inf must match exactly");
  const double tolerance = fp32_tolerance(op, ref);
  if (std::fabs(got - ref) <= tolerance) return {};
  if (out_dtype != DType::kF32) return check_16bit(out_dtype, got, ref);
  char why[96];
  std::snprintf(why, sizeof why, "|err| %.3g > %.3g", std::fabs(got - ref), tolerance);
  return format_mismatch(got, ref, why);
}

std::string compare_row(RowOp op, DType out_dtype, const void* got_row, const double* ref_row,
                        std::int64_t cols) {
  for (std::int64_t c = 0; c < cols; ++c) {
    const double got = load_element(out_dtype, got_row, static_cast<std::size_t>(c));
    std::string why = check_element(op, out_dtype, got, ref_row[c]);
    if (!why.empty()) return "col " + std::to_string(c) + ": " + why;
  }
  return {};
}

std::string compare_scale(float got, float ref) {
  if (std::isnan(ref) && std::isnan(got)) return {};
  if (got == ref) return {};
  return "scale " + format_mismatch(got, ref, "max|x| must be exact");
}

}  // namespace kjit::test
