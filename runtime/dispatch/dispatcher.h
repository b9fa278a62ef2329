// SPDX-License-Identifier: Apache-2.0
// The path of one call of any op family (runtime/ops/op_family.h): problem -> (table hit)
// launch, or (miss) config -> cubin -> module. Written once; each family's entry points call
// run<Family>, explain<Family>, tune<Family> and record<Family>.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "autotune/tune_records.h"
#include "autotune/tuner.h"
#include "kjit/runtime.hpp"
#include "kjit/tuning.hpp"
#include "runtime/dispatch/context_state.h"
#include "runtime/env.h"
#include "runtime/launch/cubin_store.h"
#include "runtime/log.h"

namespace kjit {

class Dispatcher {
 public:
  explicit Dispatcher(EnvSettings settings);

  /// Validates, resolves and launches. `forced` (may be null) overrides the dispatcher's choice.
  template <typename Family>
  void run(const typename Family::Call& call, CUstream stream,
           const typename Family::Config* forced);

  /// Resolves (compiling and loading if needed) without launching; `forced` as in run().
  template <typename Family>
  KernelReportOf<typename Family::Config> explain(const typename Family::Call& call,
                                                  const typename Family::Config* forced);

  /// Resolves the class of `problem` on the current context as its first call would (tuning the
  /// class first with KJIT_TUNE=first-use), compiling and loading without launching.
  template <typename Family>
  KernelReportOf<typename Family::Config> prepare(typename Family::Problem problem);

  /// Tunes the class of `problem` on the current context's device, on buffers of its own, on
  /// `stream` (null: a stream of its own).
  template <typename Family>
  TuneReport<typename Family::Config> tune(const typename Family::Problem& problem,
                                           const TuneOptions<typename Family::Config>& options,
                                           CUstream stream);

  /// Stores a tuning's winner as its class's record, in this process and on disk, and drops the
  /// class's dispatch entries so the next call resolves to it. False when the disk refused it.
  template <typename Family>
  bool record(const TuneReport<typename Family::Config>& report);

  TuneRecords& records() { return records_; }

 private:
  template <typename Family>
  class Runner;

  ContextState& state_for(CUcontext context);
  ContextState& current_state() { return state_for(current_or_primary_context()); }
  /// The kernel of `spec`, loaded once per context, with its launch shape.
  Launchable load(ContextState& state, const KernelSpec& spec, LaunchShape shape);
  /// True when work on `stream` is being captured into a graph (or the driver cannot say).
  static bool capturing(CUstream stream);
  static void fill_report(const Launchable& launchable, KernelReportBase& report);
  template <typename Config>
  static KernelReportOf<Config> report_of(const ResolvedKernel<Config>& resolved);

  template <typename Family>
  std::shared_ptr<const ResolvedKernel<typename Family::Config>> resolve(
      ContextState& state, const typename Family::Problem& problem,
      const typename Family::Config* forced);
  template <typename Family>
  std::shared_ptr<const ResolvedKernel<typename Family::Config>> build(
      ContextState& state, const typename Family::Problem& problem,
      const typename Family::Config& config);
  template <typename Family>
  void tune_first_use(ContextState& state, const typename Family::Problem& problem);

  EnvSettings settings_;
  CubinStore cubins_;
  TuneRecords records_;
  OnceMap<std::string, bool> tunings_;  // first-use tunings done or under way, by class key
  std::shared_mutex contexts_mutex_;
  std::vector<std::unique_ptr<ContextState>> contexts_;
};

/// What the tuner runs candidates through: this dispatcher, with each candidate's config forced.
template <typename Family>
class Dispatcher::Runner : public KernelRunner<Family> {
 public:
  explicit Runner(Dispatcher& dispatcher) : dispatcher_(dispatcher) {}
  void prepare(const typename Family::Call& call, const typename Family::Config& config) override {
    dispatcher_.explain<Family>(call, &config);
  }
  void run(const typename Family::Call& call, const typename Family::Config& config,
           CUstream stream) override {
    dispatcher_.run<Family>(call, stream, &config);
  }

 private:
  Dispatcher& dispatcher_;
};

template <typename Family>
void Dispatcher::run(const typename Family::Call& call, CUstream stream,
                     const typename Family::Config* forced) {
  const typename Family::Problem problem = Family::validate(call);
  if (problem.rows == 0) return;
  ContextState& state = current_state();
  if (forced == nullptr && settings_.tune == TuneMode::kFirstUse && !capturing(stream))
    tune_first_use<Family>(state, problem);
  Family::launch(resolve<Family>(state, problem, forced)->launchable, call, stream);
}

template <typename Family>
KernelReportOf<typename Family::Config> Dispatcher::explain(const typename Family::Call& call,
                                                            const typename Family::Config* forced) {
  typename Family::Problem problem = Family::validate(call);
  if (problem.rows == 0) problem.rows = 1;
  return report_of(*resolve<Family>(current_state(), problem, forced));
}

template <typename Family>
KernelReportOf<typename Family::Config> Dispatcher::prepare(typename Family::Problem problem) {
  if (problem.rows == 0) problem.rows = 1;
  ContextState& state = current_state();
  if (settings_.tune == TuneMode::kFirstUse) tune_first_use<Family>(state, problem);
  return report_of(*resolve<Family>(state, problem, nullptr));
}

template <typename Config>
KernelReportOf<Config> Dispatcher::report_of(const ResolvedKernel<Config>& resolved) {
  KernelReportOf<Config> report;
  fill_report(resolved.launchable, report);
  report.config = resolved.config;
  return report;
}

template <typename Family>
std::shared_ptr<const ResolvedKernel<typename Family::Config>> Dispatcher::resolve(
    ContextState& state, const typename Family::Problem& problem,
    const typename Family::Config* forced) {
  if (forced != nullptr) {
    const typename Family::Config config = Family::complete(problem, state.device, *forced);
    if (const Verdict verdict = Family::can_implement(problem, state.device, config); !verdict)
      throw Error(verdict.status, "config " + config.to_string() + " cannot run " +
                                      describe_problem(Family::describe(problem)) + ": " +
                                      verdict.reason);
    return build<Family>(state, problem, config);
  }
  FamilyTable<Family>& table = state.table<Family>();
  const typename Family::Key key = Family::key_of(problem);
  if (auto hit = table.find(key)) return hit;
  // Plan for the class's largest problem, so every call that maps to this entry is served by
  // the same choice: a tuning record's winner where there is one, else the heuristics.
  const typename Family::Problem planned = Family::planned(problem);
  typename Family::Config config = Family::pick(planned, state.device);
  if (settings_.tune != TuneMode::kOff) {
    if (auto tuned = records_.find<Family>(state.device, key);
        tuned && Family::can_implement(planned, state.device, *tuned))
      config = *tuned;
  }
  return table.insert(key, build<Family>(state, problem, config));
}

template <typename Family>
std::shared_ptr<const ResolvedKernel<typename Family::Config>> Dispatcher::build(
    ContextState& state, const typename Family::Problem& problem,
    const typename Family::Config& config) {
  auto resolved = std::make_shared<ResolvedKernel<typename Family::Config>>();
  resolved->launchable = load(state, Family::kernel_spec(problem, config),
                              Family::launch_shape(problem, config, state.device));
  resolved->config = config;
  Family::bind(resolved->launchable, config, state.resources);
  return resolved;
}

template <typename Family>
void Dispatcher::tune_first_use(ContextState& state, const typename Family::Problem& problem) {
  if (!Family::tunes_alignment(problem)) return;
  const typename Family::Key key = Family::key_of(problem);
  // A class resolved before (from the heuristics or a record) has nothing new to tune.
  if (state.table<Family>().find(key) || records_.find<Family>(state.device, key)) return;
  // Threads that hit the same new class together tune it once; the others wait for the record.
  tunings_.get_or_make(TuneRecords::key_text<Family>(state.device, key), [&] {
    log().info("tuning {} (first use; a few seconds)", describe_problem(Family::describe(problem)));
    TuneOptions<typename Family::Config> options;
    options.timing.reset_persisting_l2 = false;  // the application's L2 lines are its own
    // A stream of its own: capture needs a real stream, and the caller's queue is left alone.
    record<Family>(tune<Family>(problem, options, nullptr));
    return std::make_shared<const bool>(true);
  });
}

template <typename Family>
TuneReport<typename Family::Config> Dispatcher::tune(
    const typename Family::Problem& problem, const TuneOptions<typename Family::Config>& options,
    CUstream stream) {
  ContextState& state = current_state();
  std::optional<std::string> previous_log;
  if (options.reuse_record)
    previous_log = records_.find_log(TuneRecords::key_text<Family>(
        state.device, Family::key_of(Family::planned(problem))));
  Stream own;
  if (stream == nullptr) {
    own = create_stream();
    stream = own.get();
  }
  Runner<Family> runner(*this);
  return tune_class<Family>(runner, problem, state.device, stream, options, previous_log);
}

template <typename Family>
bool Dispatcher::record(const TuneReport<typename Family::Config>& report) {
  // What `kjit inspect` shows for the record: the class, the winner, its time and bandwidth.
  const auto* winner = report.find(report.winner);
  const double us = winner ? winner->timing.median_us : 0.0;
  char summary[512];
  std::snprintf(summary, sizeof(summary), "tuned %s: %s, %.2f us, %.0f GB/s",
                report.description.c_str(), report.winner.to_string().c_str(), us,
                us > 0.0 ? report.moved_bytes / (us * 1e3) : 0.0);
  ContextState& current = current_state();
  const bool stored = records_.put(report.class_key, report.winner.to_json(), report.to_json(),
                                   summary, current.device.arch);
  const typename Family::Key key =
      Family::key_of(Family::problem_from_json(nlohmann::json::parse(report.problem_json)));
  std::shared_lock<std::shared_mutex> contexts(contexts_mutex_);
  for (const auto& state : contexts_) state->table<Family>().erase(key);
  return stored;
}

}  // namespace kjit
