// SPDX-License-Identifier: Apache-2.0
// What every tuner does with its candidates: compiles them on a pool of threads, evaluates each
// (a failure marks it, never ends the tuning), times it (a one-sample probe first, so a few
// hopeless configs do not dominate the tuning time) and picks the winner, ties within noise
// going to the earliest candidate so that reruns pick the same config.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "autotune/measure.h"
#include "kjit/error.hpp"
#include "runtime/parallel_for.h"

namespace kjit {

/// Calls `compile(candidate)` for every candidate (compiling and loading each) on `threads`
/// threads (0: one per hardware thread); a candidate that fails is marked failed, not thrown.
template <typename Result, typename Compile>
void compile_all(std::vector<Result>& results, int threads, Compile compile) {
  parallel_for(results.size(), threads, [&](std::size_t i) {
    try {
      compile(results[i]);
    } catch (const Error& e) {
      results[i].status = std::string("failed: ") + e.what();
    }
  });
}

/// Times a candidate whose `enqueue` rotates over `sets` buffer sets. `best_us` is the fastest
/// full timing so far (0: none); a probe slower than probe_cutoff times it stops there.
inline Timing time_candidate(const std::function<void(CUstream, int)>& enqueue, CUstream stream,
                             int sets, const TimingOptions& full, double probe_cutoff,
                             double& best_us) {
  TimingOptions probe = full;
  probe.launches_per_sample = sets;
  probe.warmup_samples = 0;
  probe.samples = 1;
  Timing timing = time_launches(enqueue, stream, probe);
  if (best_us > 0.0 && timing.median_us > probe_cutoff * best_us) return timing;
  TimingOptions options = full;
  options.launches_per_sample = std::max(options.launches_per_sample, sets);
  timing = time_launches(enqueue, stream, options);
  if (best_us == 0.0 || timing.median_us < best_us) best_us = timing.median_us;
  return timing;
}

/// Calls `evaluate(candidate)` for every candidate still "ok". A launch the device refuses
/// marks that candidate failed; it does not end the tuning.
template <typename Result, typename Evaluate>
void evaluate_all(std::vector<Result>& results, CUstream stream, Evaluate evaluate) {
  for (auto& candidate : results) {
    if (candidate.status != "ok") continue;
    try {
      evaluate(candidate);
    } catch (const Error& e) {
      candidate.status = std::string("failed: ") + e.what();
      candidate.timing = {};
      cuda().cuStreamSynchronize(stream);
    }
  }
}

/// Index of the winner among results with `status`, `timing` and `config` (with to_string):
/// the earliest "ok" candidate within tie_fraction of the fastest. Throws when none is ok.
template <typename Result>
std::size_t pick_winner(const std::vector<Result>& results, double tie_fraction) {
  std::size_t best = results.size();
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].status != "ok") continue;
    if (best == results.size() || results[i].timing.median_us < results[best].timing.median_us)
      best = i;
  }
  if (best == results.size()) {
    std::string why = "no candidate ran correctly";
    if (!results.empty())
      why += " (the first, " + results[0].config.to_string() + ": " + results[0].status + ")";
    throw Error(Status::kErrorInternal, why);
  }
  for (std::size_t i = 0; i < best; ++i)
    if (results[i].status == "ok" &&
        results[i].timing.median_us <= results[best].timing.median_us * (1.0 + tie_fraction))
      return i;
  return best;
}

}  // namespace kjit
