// SPDX-License-Identifier: Apache-2.0
// Tuning one problem class of any op family (runtime/ops/op_family.h) on the current GPU: every
// candidate is compiled in parallel, run on the family's scratch buffers, checked against the
// family's reference config, and timed; the fastest correct one wins, ties within noise going to
// the earlier config of the fixed candidate order.
//
// A family's Scratch provides:
//   Scratch(const Problem&, const DeviceProps&, CUstream)  buffers of the problem's shape, in
//                                     sets that rotate past the L2
//   int sets() const; Call call(int set) const
//   void prepare_check(const DeviceProps&)   compiles what check() needs (run on a side thread)
//   void keep_reference(CUstream)    after the reference config ran on set 0
//   void poison(CUstream) const      before a candidate's checked run on set 0
//   void sabotage(CUstream) const    test hook: corrupts set 0's output
//   std::string check(CUstream) const        empty, or "wrong: ..." after a run on set 0
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "autotune/candidate_race.h"
#include "autotune/kernel_runner.h"
#include "autotune/side_compile.h"
#include "autotune/tune_report.h"
#include "autotune/tune_records.h"
#include "kjit/tuning.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/op_family.h"

namespace kjit {
namespace tuning_detail {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Copies into `candidates` the results `previous` holds for the same configs; returns how many.
template <typename Config>
int reuse_previous(std::vector<TuneCandidate<Config>>& candidates,
                   const std::vector<TuneCandidate<Config>>& previous) {
  int reused = 0;
  for (auto& candidate : candidates) {
    if (candidate.status != "ok") continue;  // failed to compile now: that stands
    for (const auto& old : previous) {
      if (old.config != candidate.config) continue;
      candidate.status = old.status;
      candidate.timing = old.timing;
      candidate.reused = true;
      ++reused;
      break;
    }
  }
  return reused;
}

/// Runs one candidate on set 0, checks it against the reference, and times it: one quick sample
/// first, and the full timing only if that sample is within reach of the best.
template <typename Family>
void evaluate(KernelRunner<Family>& runner, const typename Family::Scratch& scratch,
              const TuneOptions<typename Family::Config>& options, CUstream stream,
              TuneCandidate<typename Family::Config>& candidate, double& best_us,
              TunePhases& phases) {
  auto start = std::chrono::steady_clock::now();
  scratch.poison(stream);
  runner.run(scratch.call(0), candidate.config, stream);
  if (options.sabotage && *options.sabotage == candidate.config) scratch.sabotage(stream);
  std::string wrong = scratch.check(stream);
  phases.check += seconds_since(start);
  if (!wrong.empty()) {
    candidate.status = std::move(wrong);
    return;
  }
  start = std::chrono::steady_clock::now();
  auto enqueue = [&](CUstream s, int i) {
    runner.run(scratch.call(i % scratch.sets()), candidate.config, s);
  };
  candidate.timing = time_candidate(enqueue, stream, scratch.sets(), options.timing,
                                    options.probe_cutoff, best_us);
  phases.timing += seconds_since(start);
}

}  // namespace tuning_detail

/// Tunes the class of `problem` (contiguous, aligned buffers of its shape) on `device`, the
/// device of the current context. `previous_log` (a TuneReport::to_json of the same class) lets
/// candidates it timed keep their results. Allocates its own buffers; never touches the
/// caller's memory.
template <typename Family>
TuneReport<typename Family::Config> tune_class(KernelRunner<Family>& runner,
                                               const typename Family::Problem& problem,
                                               const DeviceProps& device, CUstream stream,
                                               const TuneOptions<typename Family::Config>& options,
                                               const std::optional<std::string>& previous_log) {
  static_assert(check_op_family<Family>(), "");
  using Config = typename Family::Config;
  using tuning_detail::seconds_since;
  const auto start = std::chrono::steady_clock::now();
  typename Family::Scratch scratch(problem, device, stream);

  TuneReport<Config> report;
  report.description = describe_problem(Family::describe(problem));
  report.problem_json = Family::describe(problem).dump();
  report.device = device.name;
  report.moved_bytes = Family::moved_bytes(problem);
  const typename Family::Problem planned = Family::planned(Family::validate(scratch.call(0)));
  report.class_key = TuneRecords::key_text<Family>(device, Family::key_of(planned));
  report.heuristic = Family::pick(planned, device);
  for (const Config& config : Family::candidates(planned, device)) report.candidates.push_back({config});
  if (previous_log)
    tuning_detail::reuse_previous(report.candidates,
                                  TuneReport<Config>::candidates_from_json(*previous_log));
  report.phases.setup = seconds_since(start);

  // The check's kernel and the reference compile beside the candidates.
  auto phase_start = std::chrono::steady_clock::now();
  const Config reference = Family::reference(planned);
  SideCompile check_compile([&] { scratch.prepare_check(device); });
  SideCompile reference_compile([&] { runner.prepare(scratch.call(0), reference); });
  // Every compile thread works in the caller's context, which need not be the primary one.
  const CUcontext context = current_or_primary_context();
  compile_all(report.candidates, options.compile_threads, [&](TuneCandidate<Config>& candidate) {
    KJIT_CU(cuCtxSetCurrent, context);
    if (!candidate.reused) runner.prepare(scratch.call(0), candidate.config);
  });
  check_compile.finish();
  reference_compile.finish();
  report.phases.compile = seconds_since(phase_start);

  phase_start = std::chrono::steady_clock::now();
  scratch.poison(stream);
  runner.run(scratch.call(0), reference, stream);
  scratch.keep_reference(stream);
  report.phases.setup += seconds_since(phase_start);

  double best_us = 0.0;  // fastest fully timed candidate so far
  for (const auto& candidate : report.candidates)
    if (candidate.reused && candidate.status == "ok" &&
        (best_us == 0.0 || candidate.timing.median_us < best_us))
      best_us = candidate.timing.median_us;
  evaluate_all(report.candidates, stream, [&](TuneCandidate<Config>& candidate) {
    if (!candidate.reused)
      tuning_detail::evaluate(runner, scratch, options, stream, candidate, best_us, report.phases);
  });
  report.winner = report.candidates[pick_winner(report.candidates, options.tie_fraction)].config;
  report.seconds = seconds_since(start);
  return report;
}

}  // namespace kjit
