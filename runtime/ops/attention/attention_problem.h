// SPDX-License-Identifier: Apache-2.0
// A validated attention call: what the heuristics, the kernel keys and the dispatch table see.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kjit/types.hpp"

namespace kjit {

/// Everything about an attention call that decides which kernel runs, and (batch, heads,
/// mask_windows) what the tuner's buffers are shaped by.
struct AttentionProblem {
  DType dtype = DType::kF16;
  int bias_kind = 0;  ///< AttentionAddend (kernel_sources/attention_shape.cuh)
  int mask_kind = 0;
  bool causal = false;
  int m = 1, n = 1, d = 16, dv = 16;
  std::int64_t batch = 0, heads = 1, mask_windows = 1;
  std::int64_t rows = 0;  ///< problems: batch x heads
};

/// Checks every argument (naming the bad one) and derives the problem. Throws
/// Error(kErrorInvalidArgument). batch == 0 is valid (the call is a no-op).
AttentionProblem validate_attention(const AttentionArgs& args);

/// The kind of an addend: none for a null pointer, else its dtype's (AttentionAddend).
int attention_addend_kind(const void* pointer, DType dtype) noexcept;
/// The dtype of an addend kind (f32 for none).
DType attention_addend_dtype(int kind) noexcept;
/// "none", "f32", "f16", "bf16".
const char* attention_addend_name(int kind) noexcept;

/// The dispatch-table key: problems enter through their power-of-two bucket.
struct AttentionKey {
  DType dtype;
  int bias_kind, mask_kind;
  bool causal;
  int m, n, d, dv;
  int rows_bucket;

  bool operator==(const AttentionKey& other) const noexcept;
};

struct AttentionKeyHash {
  std::size_t operator()(const AttentionKey& key) const noexcept;
};

AttentionKey key_of(const AttentionProblem& problem) noexcept;

/// What the dispatcher plans a call's class for: the bucket's largest problem count.
AttentionProblem planned_attention(const AttentionProblem& problem) noexcept;

}  // namespace kjit
