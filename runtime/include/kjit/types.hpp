// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

namespace kjit {

/// Element types. Values match kjit_dtype in kjit.h.
enum class DType : int { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

/// "f32", "f16", "bf16", "i32", "i64".
const char* to_string(DType dtype) noexcept;
/// Bytes per element.
int size_of(DType dtype) noexcept;
/// Parses "f32"/"f16"/"bf16"/"i32"/"i64"; throws Error(kErrorInvalidArgument) otherwise.
DType parse_dtype(const std::string& text);

/// The row-wise ops. Values match the kernels' op codes.
enum class RowOp : int { kSoftmax = 0, kLogSoftmax = 1, kReduceScale = 2 };

/// "softmax", "log_softmax", "reduce_scale".
const char* to_string(RowOp op) noexcept;
/// Parses the names above; throws Error(kErrorInvalidArgument) otherwise.
RowOp parse_row_op(const std::string& text);

/// A batch of rows: `rows` rows of `cols` elements, consecutive rows `*_row_stride` elements
/// apart, on the device. Output may alias input only exactly (in place).
struct RowwiseArgs {
  const void* in = nullptr;
  std::int64_t in_row_stride = 0;
  void* out = nullptr;
  std::int64_t out_row_stride = 0;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  DType in_dtype = DType::kF32;
  DType out_dtype = DType::kF32;
};

/// Widest row kjit accepts (columns). Every algorithm handles every width up to it.
constexpr std::int64_t kMaxCols = std::int64_t{1} << 30;

}  // namespace kjit
