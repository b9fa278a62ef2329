// SPDX-License-Identifier: Apache-2.0
// A validated softmax + top-K call: what the heuristics, the kernel keys and the dispatch
// table see.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kjit/types.hpp"

namespace kjit {

/// Everything about a top-K call that decides which kernel runs.
struct TopkProblem {
  DType in_dtype = DType::kF32;
  DType idx_dtype = DType::kI64;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  int k = 1;
  int max_pack = 1;  ///< widest vector load (elements) the logits pointer and stride allow
};

/// Checks every argument (naming the bad one) and derives the problem. Throws
/// Error(kErrorInvalidArgument). rows == 0 is valid (the call is a no-op).
TopkProblem validate_topk(const TopkArgs& args);

/// Rows [first, first + count) of a valid call as a call of their own: the logits advanced by
/// `first` rows of row_stride elements, the outputs by `first` rows of k slots, k_per_row (if
/// given) by `first` values.
TopkArgs topk_rows(const TopkArgs& args, std::int64_t first, std::int64_t count) noexcept;

/// The kernels' K bucket: the next power of two >= k, at least 32.
int topk_bucket(int k) noexcept;

/// The dispatch-table key: k and rows enter through buckets.
struct TopkDispatchKey {
  DType in_dtype;
  DType idx_dtype;
  std::int64_t cols;
  int k_bucket;
  int rows_bucket;
  int max_pack;

  bool operator==(const TopkDispatchKey& other) const noexcept;
};

struct TopkDispatchKeyHash {
  std::size_t operator()(const TopkDispatchKey& key) const noexcept;
};

TopkDispatchKey key_of(const TopkProblem& problem) noexcept;

/// What the dispatcher plans a call's class for: the K bucket's largest k (at most cols) and
/// the rows bucket's largest row count, so every call of the class shares one kernel.
/// `kjit precompile` plans with it too, so the kernels it stores are the ones calls look up.
TopkProblem planned_topk(const TopkProblem& problem) noexcept;

}  // namespace kjit
