// SPDX-License-Identifier: Apache-2.0
// The row-wise ops' public entry points: each names its op and hands the call to the dispatcher.
#include "kjit/runtime.hpp"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/op_tools_for.h"
#include "runtime/ops/rowwise/rowwise_family.h"
#include "runtime/ops/rowwise/rowwise_scratch.h"

namespace kjit {

KJIT_REGISTER_OP_FAMILY(RowwiseFamily);
template struct TuneReport<KernelConfig>;

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

TuneReport<KernelConfig> Runtime::tune(RowOp op, DType in_dtype, DType out_dtype,
                                       std::int64_t rows, std::int64_t cols,
                                       const TuneOptions<KernelConfig>& options, void* stream) {
  const RowwiseProblem problem = RowwiseFamily::problem_from_json(
      {{"op", to_string(op)}, {"dtype", to_string(in_dtype)}, {"out_dtype", to_string(out_dtype)},
       {"rows", rows}, {"cols", cols}});
  return dispatcher_->tune<RowwiseFamily>(problem, options, static_cast<CUstream>(stream));
}

bool Runtime::record_tuning(const TuneReport<KernelConfig>& report) {
  return dispatcher_->record<RowwiseFamily>(report);
}

}  // namespace kjit
