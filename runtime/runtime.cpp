// SPDX-License-Identifier: Apache-2.0
#include "kjit/runtime.hpp"

#include "runtime/dispatcher.h"

namespace kjit {

Runtime::Runtime() : dispatcher_(std::make_unique<Dispatcher>(read_env_settings())) {}
Runtime::~Runtime() = default;

void Runtime::softmax(const RowwiseArgs& args, void* stream) {
  dispatcher_->run(RowOp::kSoftmax, args, nullptr, static_cast<CUstream>(stream), nullptr);
}

void Runtime::log_softmax(const RowwiseArgs& args, void* stream) {
  dispatcher_->run(RowOp::kLogSoftmax, args, nullptr, static_cast<CUstream>(stream), nullptr);
}

void Runtime::reduce_scale(const RowwiseArgs& args, float* scale_out, void* stream) {
  dispatcher_->run(RowOp::kReduceScale, args, scale_out, static_cast<CUstream>(stream), nullptr);
}

void Runtime::run_with_config(RowOp op, const RowwiseArgs& args, float* scale_out,
                              const KernelConfig& config, void* stream) {
  dispatcher_->run(op, args, scale_out, static_cast<CUstream>(stream), &config);
}

KernelReport Runtime::explain(RowOp op, const RowwiseArgs& args) {
  return dispatcher_->explain(op, args, nullptr);
}

KernelReport Runtime::prepare(RowOp op, const RowwiseArgs& args, const KernelConfig& config) {
  return dispatcher_->explain(op, args, &config);
}

}  // namespace kjit
