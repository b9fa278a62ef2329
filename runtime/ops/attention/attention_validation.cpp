// SPDX-License-Identifier: Apache-2.0
// The argument checks of attention: each names the bad argument, and nothing is launched.
#include <cmath>
#include <string>

#include "kernel_sources/attention_shape.cuh"
#include "kjit/error.hpp"
#include "runtime/ops/attention/attention_layout.h"
#include "runtime/ops/attention/attention_problem.h"

namespace kjit {
namespace {

[[noreturn]] void reject(const std::string& what) { throw Error(Status::kErrorInvalidArgument, what); }

void check_dtypes(const AttentionArgs& args) {
  if (args.dtype != DType::kF16 && args.dtype != DType::kBF16)
    reject(std::string("dtype: ") + to_string(args.dtype) + " is not supported; expected f16 or bf16");
  const auto addend = [](const char* name, const void* pointer, DType dtype) {
    if (pointer != nullptr && dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16)
      reject(std::string(name) + ": " + to_string(dtype) + " is not supported; expected f32, f16 or bf16");
  };
  addend("bias_dtype", args.bias, args.bias_dtype);
  addend("mask_dtype", args.mask, args.mask_dtype);
}

void require_in(const char* name, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high)
    reject(std::string(name) + " must be in " + std::to_string(low) + ".." + std::to_string(high) + " (got " +
           std::to_string(value) + ")");
}

void check_sizes(const AttentionArgs& args) {
  require_in("heads", args.heads, 1, kMaxRows);
  require_in("batch", args.batch, 0, kMaxRows / args.heads);
  require_in("m", args.m, 1, kMaxAttentionTokens);
  require_in("n", args.n, 1, kMaxAttentionTokens);
  for (const auto& [name, dim] : {std::pair<const char*, std::int64_t>{"d", args.d}, {"dv", args.dv}})
    if (dim > 128 || !attention_dim_fits(static_cast<int>(dim)))
      reject(std::string(name) + " must be 16, 32, 64 or 128 (got " + std::to_string(dim) + ")");
  if (args.mask != nullptr) require_in("mask_windows", args.mask_windows, 1, kMaxRows);
  if (!std::isfinite(args.scale)) reject("scale must be finite (got " + std::to_string(args.scale) + ")");
}

AttentionTensor operand(const char* name, const void* base, const AttentionArgs& args, std::int64_t rows,
                        std::int64_t row, const std::array<std::int64_t, 3>& strides) {
  AttentionTensor t;
  t.name = name;
  t.base = base;
  t.element_bytes = size_of(args.dtype);
  t.extents[0] = args.batch;
  t.extents[1] = args.heads;
  t.extents[2] = rows;
  for (int i = 0; i < 3; ++i) t.strides[i] = strides[i];
  t.row = row;
  return t;
}

AttentionTensor addend(const char* name, const void* base, DType dtype, std::int64_t count,
                       const AttentionArgs& args, const std::array<std::int64_t, 2>& strides) {
  AttentionTensor t;
  t.name = name;
  t.base = base;
  t.element_bytes = size_of(dtype);
  t.dims = 2;
  t.extents[0] = count;
  t.extents[1] = args.m;
  t.strides[0] = strides[0];
  t.strides[1] = strides[1];
  t.row = args.n;
  return t;
}

/// q, k, v and o: 16-byte aligned, strides in whole copies, spans that fit; o disjoint.
void check_operands(const AttentionTensor (&operands)[4]) {
  for (const AttentionTensor& t : operands) {
    if (t.base == nullptr) reject(std::string(t.name) + " is null");
    require_aligned(t.name, t.base, 16);
    require_stride_multiple(t, kAttentionCopyElements);
    require_sane_layout(t);
  }
  require_disjoint_rows(operands[3]);
}

void check_addends(const AttentionArgs& args, const AttentionTensor& o) {
  if (args.bias != nullptr) {
    const AttentionTensor bias = addend("bias", args.bias, args.bias_dtype, args.heads, args, args.bias_strides);
    require_aligned("bias", args.bias, bias.element_bytes);
    require_sane_layout(bias);
    if (may_overlap(o, bias)) reject("o overlaps bias");
  }
  if (args.mask != nullptr) {
    const AttentionTensor mask =
        addend("mask", args.mask, args.mask_dtype, args.mask_windows, args, args.mask_strides);
    require_aligned("mask", args.mask, mask.element_bytes);
    require_sane_layout(mask);
    if (may_overlap(o, mask)) reject("o overlaps mask");
  }
}

}  // namespace

AttentionProblem validate_attention(const AttentionArgs& args) {
  check_dtypes(args);
  check_sizes(args);
  AttentionProblem problem;
  problem.dtype = args.dtype;
  problem.bias_kind = attention_addend_kind(args.bias, args.bias_dtype);
  problem.mask_kind = attention_addend_kind(args.mask, args.mask_dtype);
  problem.causal = args.causal;
  problem.m = static_cast<int>(args.m);
  problem.n = static_cast<int>(args.n);
  problem.d = static_cast<int>(args.d);
  problem.dv = static_cast<int>(args.dv);
  problem.batch = args.batch;
  problem.heads = args.heads;
  problem.mask_windows = args.mask != nullptr ? args.mask_windows : 1;
  problem.rows = args.batch * args.heads;
  if (problem.rows == 0) return problem;
  const AttentionTensor operands[4] = {operand("q", args.q, args, args.m, args.d, args.q_strides),
                                       operand("k", args.k, args, args.n, args.d, args.k_strides),
                                       operand("v", args.v, args, args.n, args.dv, args.v_strides),
                                       operand("o", args.o, args, args.m, args.dv, args.o_strides)};
  check_operands(operands);
  for (int i = 0; i < 3; ++i)
    if (may_overlap(operands[3], operands[i])) reject(std::string("o overlaps ") + operands[i].name);
  check_addends(args, operands[3]);
  return problem;
}

}  // namespace kjit
