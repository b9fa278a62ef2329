// SPDX-License-Identifier: Apache-2.0
// The path of one call: problem -> (table hit) launch, or (miss) config -> cubin -> module.
#pragma once

#include <functional>
#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "kjit/runtime.hpp"
#include "autotune/tune_records.h"
#include "runtime/cubin_store.h"
#include "runtime/driver/context.h"
#include "runtime/env.h"
#include "runtime/loaded_kernel.h"
#include "runtime/ops/rowwise_problem.h"
#include "runtime/ops/topk_problem.h"

namespace kjit {

/// Per-context state: the device, its loaded modules, and the dispatch table.
struct ContextState {
  CUcontext context = nullptr;
  DeviceProps device;
  OnceMap<std::string, LoadedKernel> modules;  // by kernel key text
  std::shared_mutex table_mutex;
  std::unordered_map<RowwiseKey, std::shared_ptr<const Launchable>, RowwiseKeyHash> table;
  std::unordered_map<TopkDispatchKey, std::shared_ptr<const Launchable>, TopkDispatchKeyHash>
      topk_table;
  std::shared_ptr<RowClaimCounters> row_claims = std::make_shared<RowClaimCounters>();
};

class Dispatcher {
 public:
  explicit Dispatcher(EnvSettings settings);

  /// Validates, resolves and launches. `forced` (may be null) overrides the dispatcher's choice.
  void run(RowOp op, const RowwiseArgs& args, float* scale_out, CUstream stream,
           const KernelConfig* forced);
  /// Resolves (compiling and loading if needed) without launching; `forced` as in run().
  KernelReport explain(RowOp op, const RowwiseArgs& args, const KernelConfig* forced);

  /// Fused softmax + top-K: validates, resolves and launches; `forced` as in run().
  void run_topk(const TopkArgs& args, CUstream stream, const TopkConfig* forced);
  /// Resolves the top-K kernel (compiling and loading if needed) without launching.
  KernelReport explain_topk(const TopkArgs& args, const TopkConfig* forced);

  TuneRecords& records() { return records_; }

  /// What KJIT_TUNE=first-use calls for a new problem class that has no tuning record yet;
  /// it is expected to tune and store a record (the Runtime installs one).
  using FirstUseTuner = std::function<void(RowOp, const RowwiseArgs&, CUstream)>;
  void set_first_use_tuner(FirstUseTuner tuner) { first_use_tuner_ = std::move(tuner); }
  /// The same for a new softmax_topk class.
  using FirstUseTopkTuner = std::function<void(const TopkArgs&, CUstream)>;
  void set_first_use_topk_tuner(FirstUseTopkTuner tuner) { first_use_topk_tuner_ = std::move(tuner); }
  /// Drops the dispatch-table entries of `key` in every context (after a new tuning record).
  void forget(const RowwiseKey& key);
  void forget(const TopkDispatchKey& key);

 private:
  ContextState& state_for(CUcontext context);
  std::shared_ptr<const Launchable> resolve(ContextState& state, const RowwiseProblem& problem,
                                            const KernelConfig* forced);
  std::shared_ptr<const Launchable> lookup(ContextState& state, const RowwiseKey& key);
  void tune_first_use_topk(ContextState& state, const TopkArgs& args, const TopkProblem& problem,
                           CUstream stream);
  void tune_first_use(ContextState& state, RowOp op, const RowwiseArgs& args,
                      const RowwiseProblem& problem, CUstream stream);
  std::shared_ptr<const Launchable> build(ContextState& state, const RowwiseProblem& problem,
                                          const KernelConfig& config);
  std::shared_ptr<const Launchable> resolve_topk(ContextState& state, const TopkProblem& problem,
                                                 const TopkConfig* forced);
  /// The kernel of `spec`, loaded once per context, with its launch shape.
  Launchable load(ContextState& state, const KernelSpec& spec, LaunchShape shape);

  EnvSettings settings_;
  CubinStore cubins_;
  TuneRecords records_;
  FirstUseTuner first_use_tuner_;
  FirstUseTopkTuner first_use_topk_tuner_;
  OnceMap<std::string, bool> tunings_;  // first-use tunings done or under way, by tuning key
  std::shared_mutex contexts_mutex_;
  std::vector<std::unique_ptr<ContextState>> contexts_;
};

}  // namespace kjit
