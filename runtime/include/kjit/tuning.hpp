// SPDX-License-Identifier: Apache-2.0
// Tuning one problem class on the current GPU: every candidate config is compiled (in
// parallel), run on scratch buffers, checked against a reference kernel, and timed; the fastest
// correct one wins, ties within noise going to the earlier config of a fixed order.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kjit {

/// Per-launch GPU time in microseconds.
struct Timing {
  double median_us = 0.0;
  double p20_us = 0.0;
  double p80_us = 0.0;
  int samples = 0;
};

/// How launches are timed: CUDA events around replays of a CUDA graph of launches.
struct TimingOptions {
  int launches_per_sample = 20;  ///< launches captured into the graph; one replay is one sample
  int warmup_samples = 3;
  int samples = 25;
  bool use_graph = true;         ///< false: time direct launches (for work that cannot be captured)
  /// Reset L2's persisting lines to normal before timing (cuCtxResetPersistingL2Cache), so the
  /// time does not depend on what ran before. Off where the caller's own persisting lines must
  /// be left alone (tuning inside an application, at first use).
  bool reset_persisting_l2 = true;
};

/// Options of one tuning; `Config` is the op family's config (KernelConfig, TopkConfig).
template <typename Config>
struct TuneOptions {
  int compile_threads = 0;  ///< 0: one per hardware thread
  /// Per candidate: the median of 9 samples of 10 (or more) launches, stable to about 1%.
  TimingOptions timing{10, 2, 9, true, true};
  double tie_fraction = 0.02;  ///< within this of the best counts as a tie
  double probe_cutoff = 1.3;   ///< a one-sample probe this much slower than the best: not timed further
  /// Candidates that the class's stored tuning record timed keep their results; only configs it
  /// lacks (the candidate space grew) are run and timed.
  bool reuse_record = false;
  /// Test hook: this candidate's output is corrupted after it runs, so it must lose.
  std::optional<Config> sabotage;
};

/// Where a tuning's wall time went.
struct TunePhases {
  double setup = 0.0;    ///< buffers and the reference output
  double compile = 0.0;  ///< compiling and loading every candidate
  double check = 0.0;    ///< running each candidate once and checking its output
  double timing = 0.0;
};

/// One candidate's outcome.
template <typename Config>
struct TuneCandidate {
  Config config;
  std::string status = "ok";  ///< "ok", or why it was rejected ("wrong: ...", "failed: ...")
  Timing timing;              ///< zero unless status is ok
  bool reused = false;        ///< taken from an earlier tuning log, not measured now
};

/// The outcome of tuning one problem class.
template <typename Config>
struct TuneReport {
  std::string description;   ///< e.g. "softmax bf16->bf16 64x262144"
  std::string problem_json;  ///< the tuned problem's fields, a JSON object
  std::string device;        ///< the GPU's name
  std::string class_key;     ///< the tuning class (device, op, dtypes, sizes); records are stored under it
  double moved_bytes = 0.0;  ///< bytes one call reads and writes, for GB/s
  Config heuristic;          ///< what the heuristics pick (always a candidate, first)
  Config winner;
  double seconds = 0.0;      ///< wall time of the whole tuning
  TunePhases phases;
  std::vector<TuneCandidate<Config>> candidates;  ///< in the fixed candidate order

  /// The candidate with this config, or null.
  const TuneCandidate<Config>* find(const Config& config) const {
    for (const auto& candidate : candidates)
      if (candidate.config == config) return &candidate;
    return nullptr;
  }
  /// The whole log as JSON (what a tuning record keeps).
  std::string to_json() const;
  /// The candidates of a log written by to_json(); throws Error(kErrorInvalidArgument) on
  /// malformed text.
  static std::vector<TuneCandidate<Config>> candidates_from_json(const std::string& log);
};

}  // namespace kjit
