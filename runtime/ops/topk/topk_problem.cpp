// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/topk/topk_problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "kernel_sources/topk_shape.cuh"
#include "kjit/error.hpp"
#include "runtime/ops/argument_checks.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit {
namespace {

[[noreturn]] void reject(const std::string& what) {
  throw Error(Status::kErrorInvalidArgument, what);
}

void check_dtypes(const TopkArgs& args) {
  if (args.in_dtype != DType::kF32 && args.in_dtype != DType::kF16 && args.in_dtype != DType::kBF16)
    reject(std::string("in_dtype: ") + to_string(args.in_dtype) +
           " is not supported; expected f32, f16 or bf16");
  if (args.idx_dtype != DType::kI32 && args.idx_dtype != DType::kI64)
    reject(std::string("idx_dtype: ") + to_string(args.idx_dtype) +
           " is not supported; expected i32 or i64");
}

void check_sizes(const TopkArgs& args) {
  require_rows(args.rows);
  if (args.cols < 1) reject("cols must be >= 1 (got " + std::to_string(args.cols) + ")");
  if (args.cols > kMaxCols)
    reject("cols (" + std::to_string(args.cols) + ") is above the maximum of " +
           std::to_string(kMaxCols));
  if (args.k < 1) reject("k must be >= 1 (got " + std::to_string(args.k) + ")");
  if (args.k > args.cols)
    reject("k (" + std::to_string(args.k) + ") is larger than cols (" + std::to_string(args.cols) + ")");
  if (args.k > kMaxTopK)
    reject("k (" + std::to_string(args.k) + ") is above the maximum of " + std::to_string(kMaxTopK));
  if (!(args.temperature > 0.0f) || !std::isfinite(args.temperature))
    reject("temperature must be finite and > 0 (got " + std::to_string(args.temperature) + ")");
  if ((args.flags & ~std::uint32_t{kTopkLogProbs | kTopkRenorm}) != 0)
    reject("flags: unknown bits " + std::to_string(args.flags));
}

void check_layout(const TopkArgs& args) {
  if (args.rows > 1 && args.row_stride < args.cols)
    reject("row_stride (" + std::to_string(args.row_stride) + ") is smaller than cols (" +
           std::to_string(args.cols) + ")");
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / 16;
  if (args.rows > 1 && args.row_stride > (limit - args.cols) / (args.rows - 1))
    reject("row_stride (" + std::to_string(args.row_stride) + ") times rows overflows");
  if (args.rows > limit / args.k) reject("rows times k overflows");
  require_aligned("logits", args.logits, size_of(args.in_dtype));
  require_aligned("probs_out", args.probs_out, 4);
  require_aligned("idx_out", args.idx_out, size_of(args.idx_dtype));
  require_aligned("k_per_row", args.k_per_row, 4);
  const TouchedRows logits = touched_rows(args.logits, args.rows, args.cols,
                                          args.rows > 1 ? args.row_stride : args.cols,
                                          size_of(args.in_dtype));
  const TouchedRows probs = touched_span(args.probs_out, args.rows * args.k, 4);
  const TouchedRows indices = touched_span(args.idx_out, args.rows * args.k, size_of(args.idx_dtype));
  require_addressable("logits", logits);
  require_addressable("probs_out", probs);
  require_addressable("idx_out", indices);
  if (touch_same_bytes(probs, logits)) reject("probs_out overlaps logits");
  if (touch_same_bytes(indices, logits)) reject("idx_out overlaps logits");
  if (touch_same_bytes(indices, probs)) reject("idx_out overlaps probs_out");
  // k_per_row is read while the outputs are written; beside the logits (also read) it may sit.
  if (args.k_per_row == nullptr) return;
  const TouchedRows limits = touched_span(args.k_per_row, args.rows, 4);
  require_addressable("k_per_row", limits);
  if (touch_same_bytes(limits, probs)) reject("k_per_row overlaps probs_out");
  if (touch_same_bytes(limits, indices)) reject("k_per_row overlaps idx_out");
}

int max_pack_of(const TopkArgs& args) {
  const int size = size_of(args.in_dtype);
  const auto base = reinterpret_cast<std::uintptr_t>(args.logits);
  for (int pack = kMaxPackBytes / size; pack > 1; pack /= 2)
    if (base % static_cast<std::uintptr_t>(pack * size) == 0 &&
        (args.rows <= 1 || args.row_stride % pack == 0))
      return pack;
  return 1;
}

}  // namespace

TopkProblem validate_topk(const TopkArgs& args) {
  check_dtypes(args);
  check_sizes(args);
  TopkProblem problem{args.in_dtype, args.idx_dtype, args.rows, args.cols, args.k, 1};
  if (args.rows == 0) return problem;
  if (args.logits == nullptr) reject("logits is null");
  if (args.probs_out == nullptr) reject("probs_out is null");
  if (args.idx_out == nullptr) reject("idx_out is null");
  check_layout(args);
  problem.max_pack = max_pack_of(args);
  return problem;
}

TopkArgs topk_rows(const TopkArgs& args, std::int64_t first, std::int64_t count) noexcept {
  TopkArgs part = args;
  part.rows = count;
  part.logits = static_cast<const char*>(args.logits) +
                first * args.row_stride * size_of(args.in_dtype);
  part.probs_out = args.probs_out + first * args.k;
  part.idx_out = static_cast<char*>(args.idx_out) + first * args.k * size_of(args.idx_dtype);
  if (args.k_per_row != nullptr) part.k_per_row = args.k_per_row + first;
  return part;
}

int topk_bucket(int k) noexcept {
  int bucket = kTopkMinBucket;
  while (bucket < k) bucket *= 2;
  return bucket;
}

bool TopkDispatchKey::operator==(const TopkDispatchKey& other) const noexcept {
  return in_dtype == other.in_dtype && idx_dtype == other.idx_dtype && cols == other.cols &&
         k_bucket == other.k_bucket && rows_bucket == other.rows_bucket &&
         max_pack == other.max_pack;
}

std::size_t TopkDispatchKeyHash::operator()(const TopkDispatchKey& key) const noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(key.cols) * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(key.in_dtype) << 56) ^
       (static_cast<std::uint64_t>(key.idx_dtype) << 48) ^
       (static_cast<std::uint64_t>(key.k_bucket) << 24) ^
       (static_cast<std::uint64_t>(key.rows_bucket) << 8) ^ static_cast<std::uint64_t>(key.max_pack);
  h ^= h >> 29;
  return static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ull);
}

TopkDispatchKey key_of(const TopkProblem& problem) noexcept {
  return {problem.in_dtype, problem.idx_dtype, problem.cols, topk_bucket(problem.k),
          rows_bucket(problem.rows), problem.max_pack};
}

TopkProblem planned_topk(const TopkProblem& problem) noexcept {
  const TopkDispatchKey key = key_of(problem);
  TopkProblem planned = problem;
  planned.k = static_cast<int>(std::min<std::int64_t>(key.k_bucket, problem.cols));
  planned.rows = bucket_rows(key.rows_bucket);
  return planned;
}

}  // namespace kjit
