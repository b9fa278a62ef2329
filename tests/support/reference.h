// SPDX-License-Identifier: Apache-2.0
// Float64 CPU references of the row-wise ops, with torch's semantics for special values, and the
// tolerance rules a kernel's output is held to.
#pragma once

#include <cstdint>
#include <string>

#include "kjit/types.hpp"

namespace kjit::test {

/// softmax of one row. A NaN anywhere, a +inf anywhere (inf - inf) or a row of only -inf gives a
/// row of NaN; otherwise -inf entries give 0.
void reference_softmax(const double* in, double* out, std::int64_t cols);

/// log_softmax of one row, NaN rows as in reference_softmax; -inf entries give -inf.
void reference_log_softmax(const double* in, double* out, std::int64_t cols);

/// out = in / max|in| for one row; returns max|in| in fp32. A row of zeros gives zeros and scale
/// 0; a NaN anywhere gives a row of NaN and a NaN scale.
float reference_reduce_scale(const double* in, double* out, std::int64_t cols);

/// Runs the reference of `op`; `scale` (may be null) receives reduce_scale's scale.
void reference_row(RowOp op, const double* in, double* out, std::int64_t cols, float* scale);

/// Empty when `got` (a value already stored as `out_dtype`) is close enough to `ref`, else why
/// not. fp32: |err| <= 1e-6 + 1e-5*|ref| (log_softmax: 1e-5 + 1e-6*|ref|); fp16 and bf16: within
/// one ulp of `ref` rounded to the type, or within the fp32 bound, since the kernels compute in
/// fp32 (log(sum) near 1 loses digits a bf16 ulp near 0 would demand, and fp32 results below
/// FLT_MIN flush to zero). NaN must meet NaN and inf the same inf.
std::string check_element(RowOp op, DType out_dtype, double got, double ref);

/// The first mismatch in a row of `out_dtype` elements against its reference, as
/// "col C: got G, want R (why)"; empty when the row matches.
std::string compare_row(RowOp op, DType out_dtype, const void* got_row, const double* ref_row,
                        std::int64_t cols);

/// reduce_scale's scale is max|x| of values exact in fp32, so it must match exactly (or both be
/// NaN). Empty on a match, else a description.
std::string compare_scale(float got, float ref);

}  // namespace kjit::test
