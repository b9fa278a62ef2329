// SPDX-License-Identifier: Apache-2.0
// Tuning one row-wise problem on the current GPU: every valid config is compiled (in parallel),
// run on scratch buffers, checked against the reference kernel, and timed; the fastest correct
// one wins, ties within noise going to the earlier config of a fixed order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "autotune/measure.h"
#include "kjit/runtime.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise_problem.h"

namespace kjit {

struct TuneOptions {
  int compile_threads = 0;       ///< 0: one per hardware thread
  /// Per candidate: the median of 9 samples of 10 (or more) launches is stable to about 1% on
  /// the benchmark shapes and keeps a shape's tuning near a second.
  TimingOptions timing{10, 2, 9, true};
  double tie_fraction = 0.02;    ///< within this of the best counts as a tie
  double probe_cutoff = 1.3;     ///< a one-sample probe this much slower than the best: not timed further
  /// Test hook: this candidate's output is corrupted after it runs, so it must lose.
  std::optional<KernelConfig> sabotage;
  /// An earlier tuning log of the same class (TuneReport::to_json): candidates it timed keep
  /// their results, and only configs it lacks (the candidate space grew) are run and timed.
  std::optional<std::string> previous_log;
};

/// One candidate's outcome.
struct CandidateResult {
  KernelConfig config;
  std::string status = "ok";  ///< "ok", or why it was rejected ("wrong: ...", "failed: ...")
  Timing timing;              ///< zero unless status is ok
  bool reused = false;        ///< taken from an earlier tuning log, not measured now
};

struct TuneReport {
  RowOp op = RowOp::kSoftmax;
  DType in_dtype = DType::kF32;
  DType out_dtype = DType::kF32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::string device;
  RowwiseKey key{};              ///< the dispatch/tuning class this report is for
  KernelConfig heuristic;        ///< what the heuristics pick (always a candidate, first)
  KernelConfig winner;
  double seconds = 0.0;          ///< wall time of the whole tuning
  /// Where that time went: buffers and reference, compiling and loading, checking outputs,
  /// timing.
  struct Phases {
    double setup = 0.0, compile = 0.0, check = 0.0, timing = 0.0;
  } phases;
  std::vector<CandidateResult> candidates;  ///< in the fixed candidate order

  const CandidateResult* find(const KernelConfig& config) const;
  /// The whole log as JSON (what a tuning record keeps).
  std::string to_json() const;
  /// The candidates of a log written by to_json(); throws Error(kErrorInvalidArgument) on
  /// malformed text.
  static std::vector<CandidateResult> candidates_from_json(const std::string& log);
};

/// Copies into `candidates` the results `previous` holds for the same configs; returns how many.
int reuse_previous(std::vector<CandidateResult>& candidates,
                   const std::vector<CandidateResult>& previous);

/// Tunes `op` for contiguous [rows, cols] tensors of the given dtypes on the current device.
/// Allocates its own scratch buffers; never touches the caller's memory.
TuneReport tune_rowwise(Runtime& runtime, RowOp op, DType in_dtype, DType out_dtype,
                        std::int64_t rows, std::int64_t cols, CUstream stream,
                        const TuneOptions& options = {});

}  // namespace kjit
