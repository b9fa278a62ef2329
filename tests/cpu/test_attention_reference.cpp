// SPDX-License-Identifier: Apache-2.0
// The float64 attention reference on cases whose answer is known by hand, and the tolerance rule
// it holds kernels to.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "support/attention_reference.h"
#include "support/numeric_host.h"

using namespace kjit;
using namespace kjit::test;

namespace {

/// One problem, contiguous, of float32 tensors held as f16 bits.
struct Small {
  std::vector<std::uint16_t> q, k, v;
  std::vector<float> mask;
  AttentionArgs args;

  Small(int m, int n, int d, int dv) : q(m * d), k(n * d), v(n * dv), mask(m * n, 0.0f) {
    args.q = q.data();
    args.k = k.data();
    args.v = v.data();
    args.batch = args.heads = 1;
    args.m = m;
    args.n = n;
    args.d = d;
    args.dv = dv;
    args.q_strides = {m * d, m * d, d};
    args.k_strides = {n * d, n * d, d};
    args.v_strides = {n * dv, n * dv, dv};
    args.mask_strides = {m * n, n};
    args.dtype = DType::kF16;
    args.mask_dtype = DType::kF32;
  }
  void set(std::vector<std::uint16_t>& t, int i, double value) { t[i] = f16_from_double(value); }
  void use_mask() { args.mask = mask.data(); }
};

}  // namespace

TEST_CASE("equal logits average the values; a dominant key picks its row") {
  Small s(2, 3, 16, 16);
  for (int j = 0; j < 3; ++j)
    for (int c = 0; c < 16; ++c) s.set(s.v, j * 16 + c, j + c);
  // q = 0: every logit 0, so each output is the mean of the three value rows.
  AttentionRowExpectation want = reference_attention_row(s.args, 0, 0, 0);
  for (int c = 0; c < 16; ++c) CHECK(want.out[c] == doctest::Approx(1.0 + c));
  // q . k_1 = 100 for row 1 only: key 1 takes (nearly) all the weight.
  for (int c = 0; c < 16; ++c) s.set(s.q, 16 + c, 1.0);
  for (int c = 0; c < 16; ++c) s.set(s.k, 16 + c, 100.0 / 16);
  want = reference_attention_row(s.args, 0, 0, 1);
  for (int c = 0; c < 16; ++c) CHECK(want.out[c] == doctest::Approx(1.0 + c).epsilon(1e-12));
  // Its largest logit, 100 = 16 products of 6.25, may be off by 20 fp32 roundings of 100.
  CHECK(want.logit_error == doctest::Approx(20 * 100.0 / (1 << 23)));
}

TEST_CASE("masks and causality remove keys; a row with none left gives zeros") {
  Small s(3, 3, 16, 16);
  for (int j = 0; j < 3; ++j)
    for (int c = 0; c < 16; ++c) s.set(s.v, j * 16 + c, 10.0 * j + 1);
  s.args.causal = true;
  CHECK(reference_attention_row(s.args, 0, 0, 0).out[5] == 1.0);                     // key 0 only
  CHECK(reference_attention_row(s.args, 0, 0, 1).out[5] == doctest::Approx(6.0));    // keys 0, 1
  s.args.causal = false;
  s.use_mask();
  const float inf = std::numeric_limits<float>::infinity();
  s.mask[0] = s.mask[1] = -inf;  // row 0 keeps key 2
  s.mask[3] = s.mask[4] = s.mask[5] = -inf;  // row 1 keeps nothing
  CHECK(reference_attention_row(s.args, 0, 0, 0).out[0] == doctest::Approx(21.0));
  const AttentionRowExpectation empty = reference_attention_row(s.args, 0, 0, 1);
  for (double value : empty.out) CHECK(value == 0.0);
  // A +inf logit poisons its row, as in torch.
  s.mask[6] = inf;
  CHECK(std::isnan(reference_attention_row(s.args, 0, 0, 2).out[0]));
}

TEST_CASE("the tolerance scales with the dtype and the values' magnitude; NaN must meet NaN") {
  CHECK(check_attention_value(DType::kF16, 1.0005, 1.0, 1.0) == "");
  CHECK(check_attention_value(DType::kF16, 1.01, 1.0, 1.0) != "");
  CHECK(check_attention_value(DType::kBF16, 1.01, 1.0, 1.0) == "");
  CHECK(check_attention_value(DType::kBF16, 1.05, 1.0, 1.0) != "");
  // A near-zero output of large values may be off by their rounding.
  CHECK(check_attention_value(DType::kBF16, 0.05, 0.0, 10.0) == "");
  // Logits that fp32 may get wrong by 1e-3 widen the bound by that share of the magnitude.
  CHECK(check_attention_value(DType::kF16, 1.003, 1.0, 1.0, 1e-3) == "");
  CHECK(check_attention_value(DType::kF16, 1.003, 1.0, 1.0) != "");
  CHECK(check_attention_value(DType::kF16, std::nan(""), std::nan(""), 0.0) == "");
  CHECK(check_attention_value(DType::kF16, 0.0, std::nan(""), 0.0) != "");
  CHECK(check_attention_value(DType::kF16, std::nan(""), 0.0, 0.0) != "");
}
