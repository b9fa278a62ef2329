// SPDX-License-Identifier: Apache-2.0
// The public C++ API: each entry point names its op family and hands the call to the dispatcher.
#include "kjit/runtime.hpp"

#include "runtime/dispatch/dispatcher.h"
#include "runtime/log.h"
#include "runtime/ops/rowwise/rowwise_family.h"
#include "runtime/ops/rowwise/rowwise_scratch.h"
#include "runtime/ops/topk/topk_family.h"
#include "runtime/ops/topk/topk_scratch.h"

namespace kjit {

template struct TuneReport<KernelConfig>;
template struct TuneReport<TopkConfig>;

Runtime::Runtime() : Runtime(RuntimeOptions::from_environment()) {}

Runtime::Runtime(const RuntimeOptions& options) : dispatcher_(std::make_unique<Dispatcher>(options)) {
  // The logger is the process's one; a runtime given a level sets it for everyone.
  if (!options.log_level.empty()) set_log_level(options.log_level, "log_level");
}

Runtime::~Runtime() = default;

void Runtime::softmax(const RowwiseArgs& args, void* stream) {
  dispatcher_->run<RowwiseFamily>({RowOp::kSoftmax, args, nullptr}, static_cast<CUstream>(stream),
                                  nullptr);
}

void Runtime::log_softmax(const RowwiseArgs& args, void* stream) {
  dispatcher_->run<RowwiseFamily>({RowOp::kLogSoftmax, args, nullptr},
                                  static_cast<CUstream>(stream), nullptr);
}

void Runtime::reduce_scale(const RowwiseArgs& args, float* scale_out, void* stream) {
  dispatcher_->run<RowwiseFamily>({RowOp::kReduceScale, args, scale_out},
                                  static_cast<CUstream>(stream), nullptr);
}

void Runtime::run_with_config(RowOp op, const RowwiseArgs& args, float* scale_out,
                              const KernelConfig& config, void* stream) {
  dispatcher_->run<RowwiseFamily>({op, args, scale_out}, static_cast<CUstream>(stream), &config);
}

KernelReport Runtime::explain(RowOp op, const RowwiseArgs& args) {
  return dispatcher_->explain<RowwiseFamily>({op, args, nullptr}, nullptr);
}

KernelReport Runtime::prepare(RowOp op, const RowwiseArgs& args, const KernelConfig& config) {
  return dispatcher_->explain<RowwiseFamily>({op, args, nullptr}, &config);
}

void Runtime::softmax_topk(const TopkArgs& args, void* stream) {
  dispatcher_->run<TopkFamily>(args, static_cast<CUstream>(stream), nullptr);
}

void Runtime::softmax_topk_with_config(const TopkArgs& args, const TopkConfig& config,
                                       void* stream) {
  dispatcher_->run<TopkFamily>(args, static_cast<CUstream>(stream), &config);
}

TopkKernelReport Runtime::explain_topk(const TopkArgs& args, const TopkConfig* config) {
  return dispatcher_->explain<TopkFamily>(args, config);
}

TuneReport<KernelConfig> Runtime::tune(RowOp op, DType in_dtype, DType out_dtype,
                                       std::int64_t rows, std::int64_t cols,
                                       const TuneOptions<KernelConfig>& options, void* stream) {
  const RowwiseProblem problem = RowwiseFamily::problem_from_json(
      {{"op", to_string(op)}, {"dtype", to_string(in_dtype)}, {"out_dtype", to_string(out_dtype)},
       {"rows", rows}, {"cols", cols}});
  return dispatcher_->tune<RowwiseFamily>(problem, options, static_cast<CUstream>(stream));
}

TuneReport<TopkConfig> Runtime::tune_topk(DType in_dtype, DType idx_dtype, std::int64_t rows,
                                          std::int64_t cols, int k,
                                          const TuneOptions<TopkConfig>& options, void* stream) {
  const TopkProblem problem = TopkFamily::problem_from_json(
      {{"op", "softmax_topk"}, {"dtype", to_string(in_dtype)}, {"index_dtype", to_string(idx_dtype)},
       {"rows", rows}, {"cols", cols}, {"k", k}});
  return dispatcher_->tune<TopkFamily>(problem, options, static_cast<CUstream>(stream));
}

bool Runtime::record_tuning(const TuneReport<KernelConfig>& report) {
  return dispatcher_->record<RowwiseFamily>(report);
}

bool Runtime::record_tuning(const TuneReport<TopkConfig>& report) {
  return dispatcher_->record<TopkFamily>(report);
}

}  // namespace kjit
