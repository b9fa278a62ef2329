// SPDX-License-Identifier: Apache-2.0
// Float64 CPU reference of attention for one query row, and the rule a kernel's output is held
// to. The reference reads tensors in host memory through the same AttentionArgs (pointers,
// strides, dtypes) a device call takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/types.hpp"

namespace kjit::test {

/// One output row and what its error is measured against.
struct AttentionRowExpectation {
  std::vector<double> out;        ///< dv values; zeros for a row whose keys are all masked
  std::vector<double> magnitude;  ///< sum_j p_j |v_j| per column: the scale of P's rounding error
  /// How far an fp32 computation of the row's logits may be from the exact ones: (d + 4) fp32
  /// roundings of the largest |scale q.k| + |bias| + |mask| of the row's kept keys.
  double logit_error = 0.0;
};

/// Row `row` of problem (b, h) of `args`, whose pointers are host memory: softmax over the n
/// keys of q.k * scale + bias[h] + mask[b % mask_windows] (causal: key j > row masked), in
/// float64, times V. A row whose every logit is -inf gives zeros; a NaN or +inf logit gives NaN.
AttentionRowExpectation reference_attention_row(const AttentionArgs& args, std::int64_t b, std::int64_t h,
                                                std::int64_t row);

/// Empty when a kernel's value `got` (stored as `dtype`, f16 or bf16) is close enough to
/// `want`; else why not. The kernel rounds P to `dtype` before the product with V, stores O
/// rounded, and its fp32 logits may be off by `logit_error`, which moves each p by that
/// fraction: |got - want| <= 2 eps (|want| + magnitude) + 2 logit_error magnitude + 1e-6,
/// eps = 2^-11 (f16) or 2^-8 (bf16); NaN must meet NaN.
std::string check_attention_value(DType dtype, double got, double want, double magnitude, double logit_error = 0.0);

}  // namespace kjit::test
