// SPDX-License-Identifier: Apache-2.0
// Tuning one softmax_topk class on the current GPU: every valid config (blocks per row,
// threads, unroll) is compiled in parallel, run on scratch logits, checked against the
// single-block reference config (indices exactly, probabilities to fp32 rounding), and timed;
// the fastest correct one wins, ties within noise going to the earlier config.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autotune/measure.h"
#include "kjit/runtime.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/topk_problem.h"

namespace kjit {

struct TopkTuneOptions {
  int compile_threads = 0;  ///< 0: one per hardware thread
  TimingOptions timing{10, 2, 9, true};
  double tie_fraction = 0.02;
  double probe_cutoff = 1.3;
  /// Test hook: this candidate's output is corrupted after it runs, so it must lose.
  std::optional<TopkConfig> sabotage;
};

struct TopkCandidateResult {
  TopkConfig config;
  std::string status = "ok";  ///< "ok", or why it was rejected ("wrong: ...", "failed: ...")
  Timing timing;
};

struct TopkTuneReport {
  DType in_dtype = DType::kF32;
  DType idx_dtype = DType::kI64;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  int k = 0;
  std::string device;
  TopkDispatchKey key{};
  TopkConfig heuristic;
  TopkConfig winner;
  double seconds = 0.0;
  std::vector<TopkCandidateResult> candidates;  ///< in the fixed candidate order

  const TopkCandidateResult* find(const TopkConfig& config) const;
  /// The whole log as JSON (what a tuning record keeps).
  std::string to_json() const;
};

/// Tunes softmax_topk for contiguous [rows, cols] logits of `in_dtype`, `k` and `idx_dtype`
/// (flags 0, temperature 1, no per-row k) on the current device. Allocates its own scratch
/// buffers; never touches the caller's memory.
TopkTuneReport tune_topk(Runtime& runtime, DType in_dtype, DType idx_dtype, std::int64_t rows,
                         std::int64_t cols, int k, CUstream stream,
                         const TopkTuneOptions& options = {});

}  // namespace kjit
