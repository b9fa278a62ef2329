// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise/rowwise_problem.h"

#include <cstdint>
#include <limits>
#include <string>

#include "kernel_sources/flat_tile_layout.cuh"
#include "kernel_sources/row_layout.cuh"
#include "kjit/error.hpp"
#include "runtime/ops/argument_checks.h"

namespace kjit {
namespace {

[[noreturn]] void reject(const std::string& what) {
  throw Error(Status::kErrorInvalidArgument, what);
}

bool is_float_dtype(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

void check_dtype(const char* name, DType dtype) {
  if (!is_float_dtype(dtype))
    reject(std::string(name) + ": dtype " + std::to_string(static_cast<int>(dtype)) + " (" +
           to_string(dtype) + ") is not supported; expected f32, f16 or bf16");
}

void check_stride(const char* name, std::int64_t stride, std::int64_t rows, std::int64_t cols) {
  if (stride < cols)
    reject(std::string(name) + " (" + std::to_string(stride) + ") is smaller than cols (" +
           std::to_string(cols) + ")");
  if (rows > 1 && stride > (std::numeric_limits<std::int64_t>::max() - cols) / (rows - 1) / 8)
    reject(std::string(name) + " (" + std::to_string(stride) + ") times rows overflows");
}

void check_overlap(const RowwiseArgs& args, const float* scale_out) {
  const TouchedRows in = touched_rows(args.in, args.rows, args.cols, args.in_row_stride,
                                      size_of(args.in_dtype));
  const TouchedRows out = touched_rows(args.out, args.rows, args.cols, args.out_row_stride,
                                       size_of(args.out_dtype));
  require_addressable("in", in);
  require_addressable("out", out);
  const bool exactly_in_place = args.in == args.out &&
                                args.in_row_stride == args.out_row_stride &&
                                size_of(args.in_dtype) == size_of(args.out_dtype);
  if (!exactly_in_place && touch_same_bytes(in, out))
    reject("out overlaps in without being exactly in place (same pointer, stride and element size)");
  if (scale_out == nullptr) return;
  const TouchedRows scales = touched_span(scale_out, args.rows, 4);
  require_addressable("scale_out", scales);
  if (touch_same_bytes(scales, in)) reject("scale_out overlaps in");
  if (touch_same_bytes(scales, out)) reject("scale_out overlaps out");
}

}  // namespace

int max_pack_for(const RowwiseArgs& args) {
  const int in_size = size_of(args.in_dtype), out_size = size_of(args.out_dtype);
  const int widest = kMaxPackBytes / (in_size > out_size ? in_size : out_size);
  const auto in = reinterpret_cast<std::uintptr_t>(args.in);
  const auto out = reinterpret_cast<std::uintptr_t>(args.out);
  for (int pack = widest; pack > 1; pack /= 2) {
    const bool pointers_aligned = in % (pack * in_size) == 0 && out % (pack * out_size) == 0;
    const bool strides_aligned =
        args.rows <= 1 || (args.in_row_stride % pack == 0 && args.out_row_stride % pack == 0);
    if (pointers_aligned && strides_aligned) return pack;
  }
  return 1;
}

bool dense_rows(const RowwiseArgs& args) noexcept {
  return args.rows <= 1 || (args.in_row_stride == args.cols && args.out_row_stride == args.cols);
}

bool leads_match_for(const RowwiseArgs& args) noexcept {
  const int in_size = size_of(args.in_dtype), out_size = size_of(args.out_dtype);
  const std::int64_t widest = kMaxPackBytes / (in_size > out_size ? in_size : out_size);
  const auto in = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(args.in) / in_size);
  const auto out = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(args.out) / out_size);
  const bool starts = in % widest == out % widest;
  return starts && (args.rows <= 1 || args.in_row_stride % widest == args.out_row_stride % widest);
}

bool narrow_gap_rows(const RowwiseArgs& args) noexcept {
  // A gap as wide as the row doubles the bytes read, or makes most stored units hold a gap.
  const auto narrow = [&](std::int64_t stride, DType dtype) {
    const std::int64_t gap = stride - args.cols;
    return gap * size_of(dtype) <= kFlatTileMaxGapBytes && gap < args.cols;
  };
  return !dense_rows(args) && narrow(args.in_row_stride, args.in_dtype) && narrow(args.out_row_stride, args.out_dtype);
}

RowwiseProblem validate_rowwise(RowOp op, const RowwiseArgs& args, const float* scale_out) {
  const int op_code = static_cast<int>(op);
  if (op_code < 0 || op_code > static_cast<int>(RowOp::kReduceScale))
    reject("op: " + std::to_string(op_code) + " is not a row-wise op");
  check_dtype("in_dtype", args.in_dtype);
  check_dtype("out_dtype", args.out_dtype);
  require_rows(args.rows);
  if (args.cols < 1) reject("cols must be >= 1 (got " + std::to_string(args.cols) + ")");
  if (args.cols > kMaxCols)
    reject("cols (" + std::to_string(args.cols) + ") is above the maximum of " +
           std::to_string(kMaxCols));
  RowwiseProblem problem{op, args.in_dtype, args.out_dtype, args.rows, args.cols, 1};
  if (args.rows == 0) return problem;
  if (args.in == nullptr) reject("in is null");
  if (args.out == nullptr) reject("out is null");
  require_aligned("in", args.in, size_of(args.in_dtype));
  require_aligned("out", args.out, size_of(args.out_dtype));
  require_aligned("scale_out", scale_out, 4);  // optional: one float per row
  check_stride("in_row_stride", args.in_row_stride, args.rows, args.cols);
  check_stride("out_row_stride", args.out_row_stride, args.rows, args.cols);
  check_overlap(args, scale_out);
  problem.max_pack = max_pack_for(args);
  problem.dense = dense_rows(args);
  problem.narrow_gaps = narrow_gap_rows(args);
  problem.leads_match = leads_match_for(args);
  return problem;
}

bool RowwiseKey::operator==(const RowwiseKey& other) const noexcept {
  return op == other.op && in_dtype == other.in_dtype && out_dtype == other.out_dtype &&
         cols == other.cols && rows_bucket == other.rows_bucket && max_pack == other.max_pack &&
         dense == other.dense && narrow_gaps == other.narrow_gaps && leads_match == other.leads_match;
}

std::size_t RowwiseKeyHash::operator()(const RowwiseKey& key) const noexcept {
  std::uint64_t h = static_cast<std::uint64_t>(key.cols) * 0x9E3779B97F4A7C15ull;
  h ^= (static_cast<std::uint64_t>(key.op) << 56) ^ (static_cast<std::uint64_t>(key.in_dtype) << 48) ^
       (static_cast<std::uint64_t>(key.out_dtype) << 40) ^
       (static_cast<std::uint64_t>(key.rows_bucket) << 32) ^ static_cast<std::uint64_t>(key.max_pack);
  h ^= static_cast<std::uint64_t>(key.dense) << 8 ^ static_cast<std::uint64_t>(key.narrow_gaps) << 9 ^
       static_cast<std::uint64_t>(key.leads_match) << 10;
  h ^= h >> 29;
  return static_cast<std::size_t>(h * 0xBF58476D1CE4E5B9ull);
}

int rows_bucket(std::int64_t rows) noexcept {
  int bucket = 0;
  while (bucket < 62 && (std::int64_t{1} << bucket) < rows) ++bucket;
  return bucket;
}

std::int64_t bucket_rows(int bucket) noexcept { return std::int64_t{1} << bucket; }

RowwiseKey key_of(const RowwiseProblem& problem) noexcept {
  return {problem.op, problem.in_dtype, problem.out_dtype, problem.cols,
          rows_bucket(problem.rows), problem.max_pack, problem.dense, problem.narrow_gaps, problem.leads_match};
}

}  // namespace kjit
