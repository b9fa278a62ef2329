// SPDX-License-Identifier: Apache-2.0
// The softmax_topk reference and its comparison rule, pinned to hand-computed rows, so that a
// GPU result is judged against the right answer: rank order and ties, special values, flags,
// per-row k, and what the comparison accepts and reports.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/topk_reference.h"

using namespace kjit;
using namespace kjit::test;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

TopkRowExpectation topk(const std::vector<double>& row, std::int32_t k, std::uint32_t flags = 0,
                        float temperature = 1.0f, std::int32_t row_k = -1) {
  return reference_topk_row(row.data(), static_cast<std::int64_t>(row.size()), k, row_k < 0 ? k : row_k,
                            temperature, flags);
}

bool all_nan(const std::vector<double>& values, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    if (!std::isnan(values[i])) return false;
  return true;
}

// The output a perfect kernel would write for `want`, as fp32 and int64.
struct KernelRow {
  std::vector<float> probs;
  std::vector<std::int64_t> indices;
};

KernelRow perfect_kernel_row(const TopkRowExpectation& want) {
  KernelRow row;
  for (double p : want.probs) row.probs.push_back(static_cast<float>(p));
  row.indices = want.indices;
  return row;
}

std::string compare(const TopkRowExpectation& want, const KernelRow& got, std::uint32_t flags = 0,
                    std::int64_t row = 0) {
  return compare_topk_row(row, want, got.probs.data(), got.indices.data(), DType::kI64, flags);
}

}  // namespace

TEST_CASE("the top k come sorted by logit, with softmax over the whole row") {
  const std::vector<double> row = {1.0, 3.0, 2.0};
  const TopkRowExpectation want = topk(row, 2);
  CHECK(want.indices == std::vector<std::int64_t>{1, 2});
  const double sum = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  CHECK(want.probs[0] == doctest::Approx(std::exp(3.0) / sum).epsilon(1e-15));
  CHECK(want.probs[1] == doctest::Approx(std::exp(2.0) / sum).epsilon(1e-15));

  // k == cols: the whole row, sorted.
  CHECK(topk(row, 3).indices == std::vector<std::int64_t>{1, 2, 0});
  CHECK(topk({5.0}, 1).probs == std::vector<double>{1.0});
}

TEST_CASE("equal logits take slots in ascending index order, -0 and +0 included") {
  CHECK(topk({1.0, 2.0, 2.0, 0.0, 2.0}, 2).indices == std::vector<std::int64_t>{1, 2});
  CHECK(topk({1.0, 2.0, 2.0, 0.0, 2.0}, 4).indices == std::vector<std::int64_t>{1, 2, 4, 0});
  CHECK(topk({-0.0, 0.0, -0.0}, 3).indices == std::vector<std::int64_t>{0, 1, 2});
  CHECK(topk({0.0, -0.0, -1.0, 0.0}, 2).indices == std::vector<std::int64_t>{0, 1});

  const TopkRowExpectation equal = topk({7.0, 7.0, 7.0, 7.0}, 3);
  CHECK(equal.indices == std::vector<std::int64_t>{0, 1, 2});
  for (double p : equal.probs) CHECK(p == doctest::Approx(0.25).epsilon(1e-15));
}

TEST_CASE("ranks_before orders NaN above +inf and breaks ties by index") {
  CHECK(ranks_before(kNaN, 5, kInf, 0));
  CHECK_FALSE(ranks_before(kInf, 0, kNaN, 5));
  CHECK(ranks_before(kNaN, 1, kNaN, 2));
  CHECK_FALSE(ranks_before(kNaN, 2, kNaN, 1));
  CHECK(ranks_before(kInf, 3, 1e300, 0));
  CHECK(ranks_before(-1e300, 3, -kInf, 0));
  CHECK(ranks_before(-kInf, 0, -kInf, 1));
  CHECK_FALSE(ranks_before(2.0, 4, 2.0, 4));  // strict: an element does not rank before itself
}

TEST_CASE("a row with a NaN or a +inf has NaN probabilities and still a rank order") {
  const TopkRowExpectation nan_row = topk({1.0, kNaN, kInf, kNaN, -kInf}, 5);
  CHECK(nan_row.indices == std::vector<std::int64_t>{1, 3, 2, 0, 4});
  CHECK(all_nan(nan_row.probs, 5));

  const TopkRowExpectation inf_row = topk({0.0, kInf, 3.0, kInf}, 3, kTopkLogProbs | kTopkRenorm);
  CHECK(inf_row.indices == std::vector<std::int64_t>{1, 3, 2});
  CHECK(all_nan(inf_row.probs, 3));
}

TEST_CASE("a row of only -inf has NaN probabilities, indices in order") {
  const TopkRowExpectation want = topk({-kInf, -kInf, -kInf}, 2);
  CHECK(want.indices == std::vector<std::int64_t>{0, 1});
  CHECK(all_nan(want.probs, 2));
  CHECK(all_nan(topk({-kInf}, 1, kTopkLogProbs).probs, 1));
}

TEST_CASE("-inf logits get probability 0 and log-probability -inf, after every finite logit") {
  const std::vector<double> row = {-kInf, 0.0, -kInf, 0.0};
  const TopkRowExpectation probs = topk(row, 4);
  CHECK(probs.indices == std::vector<std::int64_t>{1, 3, 0, 2});
  CHECK(probs.probs == std::vector<double>{0.5, 0.5, 0.0, 0.0});

  const TopkRowExpectation logs = topk(row, 4, kTopkLogProbs);
  CHECK(logs.probs[0] == doctest::Approx(-std::log(2.0)).epsilon(1e-15));
  CHECK(logs.probs[2] == -kInf);
  CHECK(logs.probs[3] == -kInf);
}

TEST_CASE("log-probabilities are x - max - log(sum), finite even where exp underflows") {
  const std::vector<double> row = {0.0, -2000.0, std::log(3.0)};
  const TopkRowExpectation want = topk(row, 3, kTopkLogProbs);
  CHECK(want.indices == std::vector<std::int64_t>{2, 0, 1});
  CHECK(want.probs[0] == doctest::Approx(std::log(0.75)).epsilon(1e-14));
  CHECK(want.probs[1] == doctest::Approx(std::log(0.25)).epsilon(1e-14));
  CHECK(want.probs[2] == doctest::Approx(-2000.0 - std::log(3.0) + std::log(0.75)).epsilon(1e-14));
  CHECK(topk(row, 3).probs[2] == 0.0);
}

TEST_CASE("renorm divides by the sum of the selected probabilities") {
  // p = {1, 2, 3, 4} / 10; the top two are 0.4 and 0.3, which renormalize to 4/7 and 3/7.
  const std::vector<double> row = {0.0, std::log(2.0), std::log(3.0), std::log(4.0)};
  const TopkRowExpectation plain = topk(row, 2);
  CHECK(plain.indices == std::vector<std::int64_t>{3, 2});
  CHECK(plain.probs[0] == doctest::Approx(0.4).epsilon(1e-14));

  const TopkRowExpectation renormed = topk(row, 2, kTopkRenorm);
  CHECK(renormed.indices == std::vector<std::int64_t>{3, 2});
  CHECK(renormed.probs[0] == doctest::Approx(4.0 / 7.0).epsilon(1e-14));
  CHECK(renormed.probs[1] == doctest::Approx(3.0 / 7.0).epsilon(1e-14));

  const TopkRowExpectation both = topk(row, 2, kTopkRenorm | kTopkLogProbs);
  CHECK(both.probs[0] == doctest::Approx(std::log(4.0 / 7.0)).epsilon(1e-14));
  CHECK(both.probs[1] == doctest::Approx(std::log(3.0 / 7.0)).epsilon(1e-14));

  // k == cols: renormalizing changes nothing.
  const TopkRowExpectation whole = topk(row, 4, kTopkRenorm);
  CHECK(whole.probs[3] == doctest::Approx(0.1).epsilon(1e-14));
}

TEST_CASE("temperature divides x - max before exp") {
  const std::vector<double> row = {0.0, 2.0 * std::log(3.0)};
  const TopkRowExpectation want = topk(row, 2, 0, 2.0f);
  CHECK(want.probs[0] == doctest::Approx(0.75).epsilon(1e-14));
  CHECK(want.probs[1] == doctest::Approx(0.25).epsilon(1e-14));

  // Huge logits at a small temperature: the top one takes everything; the rest keep their rank
  // order (by logit) although their probabilities are all 0.
  const TopkRowExpectation huge = topk({1e30, 0.0, -1e30, 1.0}, 4, 0, 1e-3f);
  CHECK(huge.indices == std::vector<std::int64_t>{0, 3, 1, 2});
  CHECK(huge.probs == std::vector<double>{1.0, 0.0, 0.0, 0.0});
  const TopkRowExpectation huge_logs = topk({1e30, 0.0, -1e30, 1.0}, 4, kTopkLogProbs, 0.5f);
  CHECK(huge_logs.probs[0] == 0.0);
  CHECK(huge_logs.probs[1] == doctest::Approx(-2e30).epsilon(1e-14));
  CHECK(huge_logs.probs[3] == doctest::Approx(-4e30).epsilon(1e-14));
}

TEST_CASE("a row's own k fills the first slots; the rest get -1 and 0 (or -inf)") {
  const std::vector<double> row = {0.0, std::log(2.0), std::log(3.0), std::log(4.0)};
  const TopkRowExpectation one = topk(row, 3, 0, 1.0f, 1);
  CHECK(one.indices == std::vector<std::int64_t>{3, -1, -1});
  CHECK(one.probs[0] == doctest::Approx(0.4).epsilon(1e-14));
  CHECK(one.probs[1] == 0.0);
  CHECK(one.probs[2] == 0.0);

  const TopkRowExpectation one_renorm_log = topk(row, 3, kTopkRenorm | kTopkLogProbs, 1.0f, 1);
  CHECK(one_renorm_log.probs[0] == doctest::Approx(0.0));
  CHECK(one_renorm_log.probs[1] == -kInf);

  const TopkRowExpectation none = topk(row, 2, kTopkLogProbs, 1.0f, 0);
  CHECK(none.indices == std::vector<std::int64_t>{-1, -1});
  CHECK(none.probs == std::vector<double>{-kInf, -kInf});

  // A NaN row keeps the unselected slots at -1 and 0.
  const TopkRowExpectation nan_row = topk({kNaN, 1.0, 2.0}, 3, 0, 1.0f, 1);
  CHECK(nan_row.indices == std::vector<std::int64_t>{0, -1, -1});
  CHECK(std::isnan(nan_row.probs[0]));
  CHECK(nan_row.probs[1] == 0.0);
}

TEST_CASE("per-row k values are clamped to [0, k]") {
  CHECK(clamp_row_k(-5, 4) == 0);
  CHECK(clamp_row_k(0, 4) == 0);
  CHECK(clamp_row_k(3, 4) == 3);
  CHECK(clamp_row_k(4, 4) == 4);
  CHECK(clamp_row_k(1000, 4) == 4);
}

TEST_CASE("the reference of a wide row matches a full sort") {
  // nth_element + sort must agree with sorting everything, ties and all.
  std::vector<double> row;
  for (int i = 0; i < 5000; ++i) row.push_back(static_cast<double>((i * 7919) % 13) - 6.0);
  const TopkRowExpectation want = topk(row, 1000);
  std::vector<std::int64_t> order(row.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return row[a] > row[b]; });
  order.resize(1000);
  CHECK(want.indices == order);
}

TEST_CASE("the comparison accepts a perfect fp32 row and the tolerance, nothing more") {
  const std::vector<double> row = {0.5, -1.0, 2.0, 0.25, -kInf};
  for (std::uint32_t flags = 0; flags < 4; ++flags) {
    CAPTURE(flags);
    const TopkRowExpectation want = topk(row, 5, flags);
    CHECK(compare(want, perfect_kernel_row(want), flags).empty());
  }
  // Probabilities: 1e-6 + 2e-5 * |want|.
  CHECK(check_topk_value(0.5 + 0.9 * (1e-6 + 1e-5), 0.5, false).empty());
  CHECK_FALSE(check_topk_value(0.5 + 1.1 * (1e-6 + 1e-5), 0.5, false).empty());
  CHECK(check_topk_value(9e-7, 0.0, false).empty());
  // Log-probabilities: 2e-5 + 2e-6 * |want|.
  CHECK(check_topk_value(-100.0 + 0.9 * (2e-5 + 2e-4), -100.0, true).empty());
  CHECK_FALSE(check_topk_value(-100.0 - 1.1 * (2e-5 + 2e-4), -100.0, true).empty());
}

TEST_CASE("the comparison holds NaN and infinities exactly") {
  CHECK(check_topk_value(kNaN, kNaN, false).empty());
  CHECK_FALSE(check_topk_value(0.0, kNaN, false).empty());
  CHECK_FALSE(check_topk_value(kNaN, 0.0, false).empty());
  CHECK(check_topk_value(-kInf, -kInf, true).empty());
  CHECK_FALSE(check_topk_value(-3.4e38, -kInf, true).empty());
  CHECK_FALSE(check_topk_value(-kInf, -3.4e38, true).empty());
  CHECK_FALSE(check_topk_value(kInf, -kInf, true).empty());
}

TEST_CASE("a mismatch names the row, the slot, what was got and what was wanted") {
  const TopkRowExpectation want = topk({1.0, 3.0, 2.0, 0.0}, 3);
  KernelRow got = perfect_kernel_row(want);
  got.indices[2] = 3;
  std::string why = compare(want, got, 0, 17);
  CAPTURE(why);
  CHECK(why.find("row 17") != std::string::npos);
  CHECK(why.find("slot 2") != std::string::npos);
  CHECK(why.find("got 3") != std::string::npos);
  CHECK(why.find("want 0") != std::string::npos);

  got = perfect_kernel_row(want);
  got.probs[1] = 0.5f;
  why = compare(want, got, 0, 4);
  CHECK(why.find("row 4 slot 1") != std::string::npos);
  CHECK(why.find("got 0.5") != std::string::npos);
  CHECK(why.find("want 0.2368") != std::string::npos);

  // Only the first mismatch is reported.
  got = perfect_kernel_row(want);
  got.indices[0] = 0;
  got.indices[1] = 0;
  CHECK(compare(want, got).find("slot 0") != std::string::npos);
}

TEST_CASE("the comparison reads i32 and i64 indices") {
  const TopkRowExpectation want = topk({1.0, 3.0, 2.0}, 3, 0, 1.0f, 2);
  const KernelRow got = perfect_kernel_row(want);
  const std::vector<std::int32_t> narrow = {1, 2, -1};
  CHECK(compare_topk_row(0, want, got.probs.data(), narrow.data(), DType::kI32, 0).empty());
  const std::vector<std::int32_t> wrong = {1, 2, 0};
  CHECK_FALSE(compare_topk_row(0, want, got.probs.data(), wrong.data(), DType::kI32, 0).empty());
  CHECK(load_index(DType::kI64, got.indices.data(), 2) == -1);
}
