// SPDX-License-Identifier: Apache-2.0
// The float64 references and tolerance rules, pinned to hand-computed values and to torch's
// special-value semantics, so a GPU result is judged against the right answer.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "support/numeric_host.h"
#include "support/reference.h"

using kjit::DType;
using kjit::RowOp;
using namespace kjit::test;

namespace {

constexpr double kInf = HUGE_VAL;
const double kNaN = std::nan("");

std::vector<double> run(RowOp op, std::vector<double> in, float* scale = nullptr) {
  std::vector<double> out(in.size(), -12345.0);
  reference_row(op, in.data(), out.data(), static_cast<std::int64_t>(in.size()), scale);
  return out;
}

bool all_nan(const std::vector<double>& values) {
  for (double v : values)
    if (!std::isnan(v)) return false;
  return true;
}

}  // namespace

TEST_CASE("softmax of simple rows") {
  auto out = run(RowOp::kSoftmax, {0.0, std::log(3.0)});
  CHECK(out[0] == doctest::Approx(0.25).epsilon(1e-15));
  CHECK(out[1] == doctest::Approx(0.75).epsilon(1e-15));

  // Shift invariance with large values: no overflow.
  out = run(RowOp::kSoftmax, {1000.0, 1000.0, 1000.0, 1000.0});
  for (double v : out) CHECK(v == doctest::Approx(0.25).epsilon(1e-15));

  out = run(RowOp::kSoftmax, {5.0});
  CHECK(out[0] == 1.0);
}

TEST_CASE("softmax and log_softmax follow torch on special values") {
  // -inf entries vanish; the rest renormalize.
  auto out = run(RowOp::kSoftmax, {-kInf, 0.0, 0.0});
  CHECK(out[0] == 0.0);
  CHECK(out[1] == doctest::Approx(0.5));
  auto log_out = run(RowOp::kLogSoftmax, {-kInf, 0.0, 0.0});
  CHECK(log_out[0] == -kInf);
  CHECK(log_out[1] == doctest::Approx(-std::log(2.0)));

  // NaN anywhere, +inf anywhere (inf - inf), or nothing but -inf: the whole row is NaN.
  for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax}) {
    CHECK(all_nan(run(op, {1.0, kNaN, 2.0})));
    CHECK(all_nan(run(op, {1.0, kInf, 2.0})));
    CHECK(all_nan(run(op, {-kInf, -kInf})));
    CHECK(all_nan(run(op, {kInf})));
  }
}

TEST_CASE("log_softmax matches log of softmax") {
  std::vector<double> in = {0.5, -3.0, 7.25, 2.0, -100.0};
  auto soft = run(RowOp::kSoftmax, in);
  auto log_out = run(RowOp::kLogSoftmax, in);
  for (std::size_t i = 0; i < in.size(); ++i)
    CHECK(log_out[i] == doctest::Approx(std::log(soft[i])).epsilon(1e-12));
}

TEST_CASE("reduce_scale divides by max|x| and reports it") {
  float scale = 0;
  auto out = run(RowOp::kReduceScale, {1.0, -4.0, 2.0}, &scale);
  CHECK(scale == 4.0f);
  CHECK(out[0] == 0.25);
  CHECK(out[1] == -1.0);
  CHECK(out[2] == 0.5);

  out = run(RowOp::kReduceScale, {0.0, -0.0, 0.0}, &scale);
  CHECK(scale == 0.0f);
  for (double v : out) CHECK(v == 0.0);

  out = run(RowOp::kReduceScale, {1.0, kNaN, 2.0}, &scale);
  CHECK(std::isnan(scale));
  CHECK(all_nan(out));

  // An inf entry: inf/inf is NaN, finite/inf is 0.
  out = run(RowOp::kReduceScale, {1.0, -kInf}, &scale);
  CHECK(scale == std::numeric_limits<float>::infinity());
  CHECK(out[0] == 0.0);
  CHECK(std::isnan(out[1]));
}

TEST_CASE("fp32 tolerance") {
  CHECK(check_element(RowOp::kSoftmax, DType::kF32, 0.5 + 4e-6, 0.5).empty());
  CHECK_FALSE(check_element(RowOp::kSoftmax, DType::kF32, 0.5 + 1e-5, 0.5).empty());
  CHECK(check_element(RowOp::kSoftmax, DType::kF32, 5e-7, 0.0).empty());
  CHECK_FALSE(check_element(RowOp::kSoftmax, DType::kF32, 2e-6, 0.0).empty());
  // log_softmax: an absolute floor of 1e-5 and 1e-6 relative.
  CHECK(check_element(RowOp::kLogSoftmax, DType::kF32, -0.3 + 9e-6, -0.3).empty());
  CHECK(check_element(RowOp::kLogSoftmax, DType::kF32, -200.0 + 2e-4, -200.0).empty());
  CHECK_FALSE(check_element(RowOp::kLogSoftmax, DType::kF32, -200.0 + 3e-4, -200.0).empty());
}

TEST_CASE("special values must match exactly") {
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    CHECK(check_element(RowOp::kSoftmax, dtype, kNaN, kNaN).empty());
    CHECK_FALSE(check_element(RowOp::kSoftmax, dtype, 0.0, kNaN).empty());
    CHECK_FALSE(check_element(RowOp::kSoftmax, dtype, kNaN, 0.0).empty());
    CHECK(check_element(RowOp::kLogSoftmax, dtype, -kInf, -kInf).empty());
    CHECK_FALSE(check_element(RowOp::kLogSoftmax, dtype, -1e30, -kInf).empty());
    CHECK_FALSE(check_element(RowOp::kLogSoftmax, dtype, -kInf, -1e4).empty());
  }
}

TEST_CASE("16-bit outputs are held to one ulp of the rounded reference") {
  const double ref = 0.3;
  const std::uint16_t nearest = f16_from_double(ref);
  const std::uint16_t one_up = f16_next_up(nearest);
  const std::uint16_t two_up = f16_next_up(one_up);
  CHECK(check_element(RowOp::kSoftmax, DType::kF16, f16_to_double(nearest), ref).empty());
  CHECK(check_element(RowOp::kSoftmax, DType::kF16, f16_to_double(one_up), ref).empty());
  CHECK(check_element(RowOp::kSoftmax, DType::kF16, f16_to_double(f16_next_down(nearest)), ref).empty());
  CHECK_FALSE(check_element(RowOp::kSoftmax, DType::kF16, f16_to_double(two_up), ref).empty());

  const std::uint16_t b = bf16_from_double(ref);
  CHECK(check_element(RowOp::kSoftmax, DType::kBF16, bf16_to_double(bf16_next_down(b)), ref).empty());
  CHECK_FALSE(check_element(RowOp::kSoftmax, DType::kBF16,
                            bf16_to_double(bf16_next_down(bf16_next_down(b))), ref)
                  .empty());
  // Zero is one ulp from the smallest subnormal.
  CHECK(check_element(RowOp::kSoftmax, DType::kF16, 0.0, std::ldexp(1.0, -24)).empty());
}

TEST_CASE("16-bit outputs are never held tighter than the fp32 they come from") {
  // log(sum) with sum just above 1 is off by an fp32 ulp of 1 (1.2e-7): many bf16 ulps near 0.
  CHECK(check_element(RowOp::kLogSoftmax, DType::kBF16, -1.1920929e-07, -1.12610696e-07).empty());
  // An fp32 subnormal flushed to zero.
  CHECK(check_element(RowOp::kSoftmax, DType::kBF16, 0.0, 2.7e-39).empty());
  // Large values still need the ulp rule: 0.5 vs 0.5 + 3 ulps of bf16 fails.
  CHECK_FALSE(check_element(RowOp::kSoftmax, DType::kBF16, 0.5 + 3 * std::ldexp(1.0, -9), 0.5).empty());
}

TEST_CASE("compare_row names the first bad column") {
  std::vector<float> got = {0.25f, 0.75f, 0.5f};
  std::vector<double> ref = {0.25, 0.75, 0.0};
  const std::string why = compare_row(RowOp::kSoftmax, DType::kF32, got.data(), ref.data(), 3);
  CHECK(why.find("col 2") == 0);
  CHECK(compare_row(RowOp::kSoftmax, DType::kF32, got.data(), ref.data(), 2).empty());

  std::vector<std::uint16_t> half = {f16_from_double(0.25), f16_from_double(0.7)};
  std::vector<double> half_ref = {0.25, 0.75};
  CHECK(compare_row(RowOp::kSoftmax, DType::kF16, half.data(), half_ref.data(), 2).find("col 1") == 0);
}

TEST_CASE("scale comparison is exact") {
  CHECK(compare_scale(4.0f, 4.0f).empty());
  CHECK_FALSE(compare_scale(std::nextafter(4.0f, 5.0f), 4.0f).empty());
  CHECK(compare_scale(std::nanf(""), std::nanf("")).empty());
  CHECK_FALSE(compare_scale(0.0f, std::nanf("")).empty());
}
