// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kjit/row_op.hpp"

namespace kjit {

/// Element types. Values match kjit_dtype in kjit.h.
enum class DType : int { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

/// "f32", "f16", "bf16", "i32", "i64".
const char* to_string(DType dtype) noexcept;
/// Bytes per element.
int size_of(DType dtype) noexcept;
/// Parses "f32"/"f16"/"bf16"/"i32"/"i64"; throws Error(kErrorInvalidArgument) otherwise.
DType parse_dtype(const std::string& text);

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

/// Flags of softmax_topk (values match KJIT_TOPK_* in kjit.h).
enum TopkFlags : std::uint32_t {
  kTopkLogProbs = 1u,  ///< write log-probabilities instead of probabilities
  kTopkRenorm = 2u,    ///< renormalize the k probabilities of each row to sum to 1
};

/// Fused softmax + top-K over `rows` rows of `cols` logits (device pointers). For each row:
/// p = softmax(logits / temperature) over the whole row, then the k largest p, sorted
/// descending, equal values in ascending index order. Outputs are [rows, k], contiguous.
struct TopkArgs {
  const void* logits = nullptr;
  std::int64_t row_stride = 0;  ///< elements between row starts
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  DType in_dtype = DType::kF32;   ///< f32, f16 or bf16
  std::int32_t k = 1;             ///< 1 .. min(cols, kMaxTopK)
  /// Optional device array of `rows` values: row r keeps its first k_per_row[r] slots (values are
  /// clamped to [0, k]); the slots past it get index -1 and probability 0 (log-probability -inf).
  const std::int32_t* k_per_row = nullptr;
  float temperature = 1.0f;       ///< > 0 and finite
  std::uint32_t flags = 0;        ///< TopkFlags
  float* probs_out = nullptr;     ///< [rows, k] fp32
  void* idx_out = nullptr;        ///< [rows, k] of idx_dtype
  DType idx_dtype = DType::kI64;  ///< i32 or i64
};

/// Batched attention over batch x heads small problems (kjit_attention_args in kjit.h):
/// O[b,h] = softmax(Q[b,h] K[b,h]^T * scale + bias[h] + mask[b % mask_windows]) V[b,h], the
/// softmax in fp32; with `causal`, key j > query i is masked. A row whose keys are all masked
/// (-inf) gives zeros, not NaN. Strides are in elements (batch, head, row; the last dimension
/// is contiguous): q, k, v and o start on 16 bytes and their strides are multiples of 8.
struct AttentionArgs {
  const void* q = nullptr;     ///< [m, d] a problem
  const void* k = nullptr;     ///< [n, d]
  const void* v = nullptr;     ///< [n, dv]
  void* o = nullptr;           ///< [m, dv]; overlaps no input
  const void* bias = nullptr;  ///< [heads, m, n] additive, shared by the batch; may be null
  const void* mask = nullptr;  ///< [mask_windows, m, n] additive, problem b uses b % mask_windows; may be null
  std::int64_t batch = 0, heads = 1, m = 0, n = 0, d = 0, dv = 0, mask_windows = 1;
  std::array<std::int64_t, 3> q_strides{}, k_strides{}, v_strides{}, o_strides{};  ///< batch, head, row
  std::array<std::int64_t, 2> bias_strides{}, mask_strides{};  ///< head (window), row
  DType dtype = DType::kF16;       ///< f16 or bf16: q, k, v and o
  DType bias_dtype = DType::kF32;  ///< f32, f16 or bf16
  DType mask_dtype = DType::kF32;  ///< f32, f16 or bf16
  float scale = 1.0f;              ///< finite
  bool causal = false;
};

/// Sizes attention accepts: m and n in 1..kMaxAttentionTokens; d and dv 16, 32, 64 or 128.
constexpr std::int64_t kMaxAttentionTokens = 256;

/// Largest k softmax_topk accepts.
constexpr std::int32_t kMaxTopK = 4096;

/// Widest row kjit accepts (columns). Every algorithm handles every width up to it.
constexpr std::int64_t kMaxCols = std::int64_t{1} << 30;

/// Most rows one call accepts: far beyond any tensor, and low enough that rows times any width,
/// k or launch geometry stays clear of 64-bit overflow in the planning arithmetic.
constexpr std::int64_t kMaxRows = std::int64_t{1} << 40;

}  // namespace kjit
