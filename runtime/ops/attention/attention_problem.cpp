// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/attention/attention_problem.h"

#include "kernel_sources/attention_shape.cuh"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit {

int attention_addend_kind(const void* pointer, DType dtype) noexcept {
  if (pointer == nullptr) return kAddendNone;
  return dtype == DType::kF32 ? kAddendF32 : dtype == DType::kF16 ? kAddendF16 : kAddendBF16;
}

DType attention_addend_dtype(int kind) noexcept {
  return kind == kAddendF16 ? DType::kF16 : kind == kAddendBF16 ? DType::kBF16 : DType::kF32;
}

const char* attention_addend_name(int kind) noexcept {
  return kind == kAddendNone ? "none" : to_string(attention_addend_dtype(kind));
}

bool AttentionKey::operator==(const AttentionKey& other) const noexcept {
  return dtype == other.dtype && bias_kind == other.bias_kind && mask_kind == other.mask_kind &&
         causal == other.causal && m == other.m && n == other.n && d == other.d && dv == other.dv &&
         rows_bucket == other.rows_bucket;
}

std::size_t AttentionKeyHash::operator()(const AttentionKey& key) const noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(key.m) << 48 ^ static_cast<std::uint64_t>(key.n) << 36 ^
                    static_cast<std::uint64_t>(key.d) << 24 ^ static_cast<std::uint64_t>(key.dv) << 12 ^
                    static_cast<std::uint64_t>(key.rows_bucket);
  h = h * 0x9E3779B97F4A7C15ull ^ (static_cast<std::uint64_t>(key.dtype) << 8 |
                                   static_cast<std::uint64_t>(key.bias_kind) << 4 |
                                   static_cast<std::uint64_t>(key.mask_kind) << 2 | (key.causal ? 1u : 0u));
  h ^= h >> 29;
  return static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ull);
}

AttentionKey key_of(const AttentionProblem& p) noexcept {
  return {p.dtype, p.bias_kind, p.mask_kind, p.causal, p.m, p.n, p.d, p.dv, rows_bucket(p.rows)};
}

AttentionProblem planned_attention(const AttentionProblem& problem) noexcept {
  AttentionProblem planned = problem;
  planned.rows = bucket_rows(rows_bucket(problem.rows));
  planned.batch = (planned.rows + planned.heads - 1) / planned.heads;
  return planned;
}

}  // namespace kjit
