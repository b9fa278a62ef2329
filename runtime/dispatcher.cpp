// SPDX-License-Identifier: Apache-2.0
#include "runtime/dispatcher.h"

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "kernel_sources/topk_params.cuh"
#include "kjit/error.hpp"
#include "runtime/compiler/kernel_key.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/topk/topk_heuristics.h"
#include "runtime/ops/topk/topk_kernels.h"

namespace kjit {
namespace {

RowParams params_of(const RowwiseArgs& args, float* scale_out) {
  return {args.in, args.out, scale_out, args.rows, args.in_row_stride, args.out_row_stride, nullptr};
}

KernelReport report_of(const Launchable& launchable) {
  const CompiledKernel& compiled = *launchable.kernel->compiled;
  KernelReport report;
  report.config = launchable.config;
  report.kernel_key = compiled.key_digest;
  report.name_expression = compiled.spec.name_expression;
  report.arch = arch_name(compiled.arch);
  const ResourceUsage& usage = launchable.kernel->usage;
  report.registers = usage.registers;
  report.spill_bytes = usage.spill_stores + usage.spill_loads;
  report.static_smem = usage.static_smem;
  report.dynamic_smem = launchable.shape.dynamic_smem;
  report.cubin_bytes = compiled.cubin.size();
  report.compile_ms = compiled.compile_ms;
  return report;
}

/// True when work on `stream` is being captured into a graph (or the driver cannot say): tuning
/// then would allocate, launch and synchronize inside the caller's capture.
bool capturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return cuda().cuStreamIsCapturing(stream, &status) != CUDA_SUCCESS ||
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

}  // namespace

Dispatcher::Dispatcher(EnvSettings settings)
    : settings_(std::move(settings)), cubins_(settings_), records_(settings_) {}

void Dispatcher::run(RowOp op, const RowwiseArgs& args, float* scale_out, CUstream stream,
                     const KernelConfig* forced) {
  const RowwiseProblem problem = validate_rowwise(op, args, scale_out);
  if (problem.rows == 0) return;
  ContextState& state = state_for(current_or_primary_context());
  if (forced == nullptr && settings_.tune == TuneMode::kFirstUse && !capturing(stream))
    tune_first_use(state, op, args, problem, stream);
  resolve(state, problem, forced)->launch(params_of(args, scale_out), stream);
}

void Dispatcher::tune_first_use(ContextState& state, RowOp op, const RowwiseArgs& args,
                                const RowwiseProblem& problem, CUstream stream) {
  const RowwiseKey key = key_of(problem);
  const int widest = 16 / std::max(size_of(problem.in_dtype), size_of(problem.out_dtype));
  // Tuning runs on contiguous, aligned scratch buffers: it speaks for that alignment class only.
  if (!first_use_tuner_ || problem.max_pack != widest || lookup(state, key) ||
      records_.find(state.device, key))
    return;
  // Threads that hit the same new class together tune it once; the others wait for the record.
  tunings_.get_or_make(tuning_key_text(state.device, key), [&] {
    first_use_tuner_(op, args, stream);
    return std::make_shared<const bool>(true);
  });
}

void Dispatcher::forget(const RowwiseKey& key) {
  std::shared_lock<std::shared_mutex> contexts(contexts_mutex_);
  for (const auto& state : contexts_) {
    std::unique_lock<std::shared_mutex> lock(state->table_mutex);
    state->table.erase(key);
  }
}

void Dispatcher::forget(const TopkDispatchKey& key) {
  std::shared_lock<std::shared_mutex> contexts(contexts_mutex_);
  for (const auto& state : contexts_) {
    std::unique_lock<std::shared_mutex> lock(state->table_mutex);
    state->topk_table.erase(key);
  }
}

std::shared_ptr<const Launchable> Dispatcher::lookup(ContextState& state, const RowwiseKey& key) {
  std::shared_lock<std::shared_mutex> lock(state.table_mutex);
  auto found = state.table.find(key);
  return found == state.table.end() ? nullptr : found->second;
}

KernelReport Dispatcher::explain(RowOp op, const RowwiseArgs& args, const KernelConfig* forced) {
  RowwiseProblem problem = validate_rowwise(op, args, nullptr);
  if (problem.rows == 0) problem.rows = 1;
  ContextState& state = state_for(current_or_primary_context());
  return report_of(*resolve(state, problem, forced));
}

ContextState& Dispatcher::state_for(CUcontext context) {
  {
    std::shared_lock<std::shared_mutex> lock(contexts_mutex_);
    for (const auto& state : contexts_)
      if (state->context == context) return *state;
  }
  std::unique_lock<std::shared_mutex> lock(contexts_mutex_);
  for (const auto& state : contexts_)
    if (state->context == context) return *state;
  auto state = std::make_unique<ContextState>();
  state->context = context;
  CUdevice device = 0;
  KJIT_CU(cuCtxGetDevice, &device);
  state->device = query_device(device);
  contexts_.push_back(std::move(state));
  return *contexts_.back();
}

std::shared_ptr<const Launchable> Dispatcher::resolve(ContextState& state,
                                                      const RowwiseProblem& problem,
                                                      const KernelConfig* forced) {
  if (forced != nullptr) {
    const KernelConfig config = complete_rowwise_config(problem, state.device, *forced);
    if (std::string why = why_not_rowwise(problem, state.device, config); !why.empty())
      throw Error(Status::kErrorInvalidConfig, "config " + config.to_string() + " cannot run " +
                                                   to_string(problem.op) + " with cols=" +
                                                   std::to_string(problem.cols) + ": " + why);
    return build(state, problem, config);
  }
  const RowwiseKey key = key_of(problem);
  if (auto hit = lookup(state, key)) return hit;
  // Plan for the largest row count of the bucket, so every call that maps to this entry is
  // served by the same choice: a tuning record's winner where there is one, else the heuristics.
  RowwiseProblem planned = problem;
  planned.rows = bucket_rows(key.rows_bucket);
  KernelConfig config = choose_rowwise_config(planned, state.device);
  if (settings_.tune != TuneMode::kOff) {
    if (auto tuned = records_.find(state.device, key); tuned && why_not_rowwise(planned, state.device, *tuned).empty())
      config = *tuned;
  }
  auto launchable = build(state, problem, config);
  std::unique_lock<std::shared_mutex> lock(state.table_mutex);
  return state.table.emplace(key, std::move(launchable)).first->second;
}

std::shared_ptr<const Launchable> Dispatcher::build(ContextState& state,
                                                    const RowwiseProblem& problem,
                                                    const KernelConfig& config) {
  Launchable launchable = load(state, rowwise_kernel_spec(problem, config),
                               rowwise_launch_shape(problem, config, state.device.sm_count));
  launchable.config = config;
  if (config.algorithm == Algorithm::kRing) launchable.row_claims = state.row_claims;
  return std::make_shared<const Launchable>(std::move(launchable));
}

Launchable Dispatcher::load(ContextState& state, const KernelSpec& spec, LaunchShape shape) {
  const int arch = state.device.arch;
  auto loaded = state.modules.get_or_make(kernel_key_text(spec, arch), [&] {
    return load_kernel(cubins_.get(spec, arch), shape);
  });
  if (loaded->max_active_clusters > 0) shape.max_clusters = loaded->max_active_clusters;
  shape.dependent_launch = settings_.dependent_launch && state.device.dependent_launch;
  return Launchable{std::move(loaded), KernelConfig{}, shape};
}

namespace {

TopkParams topk_params_of(const TopkArgs& args) {
  // exp(x/T) = 2^(x * log2(e)/T); a temperature so small that the scale overflows still orders
  // the row, and (x - max) * FLT_MAX gives 0 for the max and -inf (probability 0) elsewhere.
  const double scale = 1.4426950408889634 / static_cast<double>(args.temperature);
  const float clamped = scale > 3.4028234663852886e38 ? 3.4028234663852886e38f
                                                      : static_cast<float>(scale);
  return {args.logits, args.probs_out, args.idx_out, args.k_per_row, args.rows, args.row_stride,
          args.k, clamped, args.flags};
}

}  // namespace

void Dispatcher::run_topk(const TopkArgs& args, CUstream stream, const TopkConfig* forced) {
  const TopkProblem problem = validate_topk(args);
  if (problem.rows == 0) return;
  ContextState& state = state_for(current_or_primary_context());
  if (forced == nullptr && settings_.tune == TuneMode::kFirstUse && !capturing(stream))
    tune_first_use_topk(state, args, problem, stream);
  auto launchable = resolve_topk(state, problem, forced);
  const std::int64_t per_launch = topk_rows_per_launch(launchable->shape);
  for (std::int64_t first = 0; first < problem.rows; first += per_launch) {
    const std::int64_t count = std::min(per_launch, problem.rows - first);
    TopkParams params = topk_params_of(topk_rows(args, first, count));
    launchable->launch_blocks(&params, topk_grid(launchable->shape, count), stream,
                              launchable->shape.dependent_launch);
  }
}

KernelReport Dispatcher::explain_topk(const TopkArgs& args, const TopkConfig* forced) {
  TopkProblem problem = validate_topk(args);
  if (problem.rows == 0) problem.rows = 1;
  ContextState& state = state_for(current_or_primary_context());
  return report_of(*resolve_topk(state, problem, forced));
}

void Dispatcher::tune_first_use_topk(ContextState& state, const TopkArgs& args,
                                     const TopkProblem& problem, CUstream stream) {
  const TopkDispatchKey key = key_of(problem);
  // As for row-wise classes: contiguous, aligned scratch logits speak for that alignment only.
  if (!first_use_topk_tuner_ || problem.max_pack != 16 / size_of(problem.in_dtype)) return;
  {
    std::shared_lock<std::shared_mutex> lock(state.table_mutex);
    if (state.topk_table.count(key) != 0) return;  // resolved before: nothing new to tune
  }
  if (records_.find(state.device, key)) return;
  tunings_.get_or_make(tuning_key_text(state.device, key), [&] {
    first_use_topk_tuner_(args, stream);
    return std::make_shared<const bool>(true);
  });
}

std::shared_ptr<const Launchable> Dispatcher::resolve_topk(ContextState& state,
                                                           const TopkProblem& problem,
                                                           const TopkConfig* forced) {
  if (forced != nullptr) {
    const TopkConfig config = complete_topk_config(problem, state.device, *forced);
    if (std::string why = why_not_topk(problem, state.device, config); !why.empty())
      throw Error(Status::kErrorInvalidConfig,
                  "config " + config.to_string() + " cannot run softmax_topk with cols=" +
                      std::to_string(problem.cols) + ", k=" + std::to_string(problem.k) + ": " + why);
    return std::make_shared<const Launchable>(
        load(state, topk_kernel_spec(problem, config), topk_launch_shape(problem, config)));
  }
  const TopkDispatchKey key = key_of(problem);
  {
    std::shared_lock<std::shared_mutex> lock(state.table_mutex);
    if (auto found = state.topk_table.find(key); found != state.topk_table.end())
      return found->second;
  }
  // As for row-wise calls: a tuning record's winner for the class where there is one.
  const TopkProblem planned = planned_topk(problem);
  TopkConfig config = choose_topk_config(planned, state.device);
  if (settings_.tune != TuneMode::kOff) {
    if (auto tuned = records_.find(state.device, key); tuned && why_not_topk(planned, state.device, *tuned).empty())
      config = *tuned;
  }
  auto launchable = std::make_shared<const Launchable>(
      load(state, topk_kernel_spec(problem, config), topk_launch_shape(problem, config)));
  std::unique_lock<std::shared_mutex> lock(state.table_mutex);
  return state.topk_table.emplace(key, std::move(launchable)).first->second;
}

}  // namespace kjit
