// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/attention/attention_scratch.h"

#include <cmath>

#include "autotune/output_check.h"

namespace kjit {
namespace {

std::size_t set_bytes(const AttentionProblem& p) {
  return static_cast<std::size_t>(p.rows) * static_cast<std::size_t>(p.m + p.n) * (p.d + p.dv) * size_of(p.dtype);
}

std::array<std::int64_t, 3> packed(const AttentionProblem& p, std::int64_t rows, std::int64_t dim) {
  return {p.heads * rows * dim, rows * dim, dim};
}

}  // namespace

AttentionScratch::AttentionScratch(const AttentionProblem& p, const DeviceProps& device, CUstream stream)
    : problem_(p),
      q_(p.dtype, p.dtype, p.rows * p.m, p.d, rotating_sets(set_bytes(p), device.l2_bytes), stream),
      k_(p.dtype, p.dtype, p.rows * p.n, p.d, q_.sets(), stream),
      v_(p.dtype, p.dtype, p.rows * p.n, p.dv, q_.sets(), stream),
      o_(p.dtype, p.dtype, p.rows * p.m, p.dv, q_.sets(), stream) {
  if (p.bias_kind != 0)
    bias_.emplace(attention_addend_dtype(p.bias_kind), DType::kF32, p.heads * p.m, p.n, 1, stream);
  if (p.mask_kind != 0)
    mask_.emplace(attention_addend_dtype(p.mask_kind), DType::kF32, p.mask_windows * p.m, p.n, 1, stream);
}

AttentionArgs AttentionScratch::call(int set) const {
  const AttentionProblem& p = problem_;
  AttentionArgs args;
  args.q = q_.args(set).in;
  args.k = k_.args(set).in;
  args.v = v_.args(set).in;
  args.o = o_.args(set).out;
  args.batch = p.batch;
  args.heads = p.heads;
  args.m = p.m;
  args.n = p.n;
  args.d = p.d;
  args.dv = p.dv;
  args.q_strides = packed(p, p.m, p.d);
  args.k_strides = packed(p, p.n, p.d);
  args.v_strides = packed(p, p.n, p.dv);
  args.o_strides = packed(p, p.m, p.dv);
  args.dtype = p.dtype;
  args.causal = p.causal;
  args.scale = 1.0f / std::sqrt(static_cast<float>(p.d));
  if (bias_) {
    args.bias = bias_->args(0).in;
    args.bias_dtype = attention_addend_dtype(p.bias_kind);
    args.bias_strides = {std::int64_t{p.m} * p.n, p.n};
  }
  if (mask_) {
    args.mask = mask_->args(0).in;
    args.mask_dtype = attention_addend_dtype(p.mask_kind);
    args.mask_windows = p.mask_windows;
    args.mask_strides = {std::int64_t{p.m} * p.n, p.n};
  }
  return args;
}

void AttentionScratch::keep_reference(CUstream stream) {
  KJIT_CU(cuStreamSynchronize, stream);
  o_.download_output(0, reference_);
}

void AttentionScratch::poison(CUstream stream) const { o_.poison_output(0, stream); }

void AttentionScratch::sabotage(CUstream stream) const {
  KJIT_CU(cuMemsetD8Async, reinterpret_cast<CUdeviceptr>(o_.args(0).out), 0x42, 4, stream);
}

std::string AttentionScratch::check(CUstream stream) const {
  KJIT_CU(cuStreamSynchronize, stream);
  std::vector<unsigned char> got;
  o_.download_output(0, got);
  return compare_output_rows(got, reference_, problem_.dtype, static_cast<std::size_t>(problem_.dv));
}

}  // namespace kjit
