// SPDX-License-Identifier: Apache-2.0
// attention's public entry points: each hands the call to the dispatcher.
#include "kjit/runtime.hpp"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/op_tools_for.h"
#include "runtime/ops/attention/attention_family.h"
#include "runtime/ops/attention/attention_scratch.h"

namespace kjit {

KJIT_REGISTER_OP_FAMILY(AttentionFamily);
template struct TuneReport<AttentionConfig>;

void Runtime::attention(const AttentionArgs& args, void* stream) {
  dispatcher_->run<AttentionFamily>(args, static_cast<CUstream>(stream), nullptr);
}

void Runtime::attention_with_config(const AttentionArgs& args, const AttentionConfig& config, void* stream) {
  dispatcher_->run<AttentionFamily>(args, static_cast<CUstream>(stream), &config);
}

AttentionKernelReport Runtime::explain_attention(const AttentionArgs& args, const AttentionConfig* config) {
  return dispatcher_->explain<AttentionFamily>(args, config);
}

TuneReport<AttentionConfig> Runtime::tune_attention(const AttentionArgs& args,
                                                    const TuneOptions<AttentionConfig>& options, void* stream) {
  AttentionProblem problem = AttentionFamily::validate(args);
  if (problem.rows == 0) throw Error(Status::kErrorInvalidArgument, "batch: a tuning needs at least one problem");
  return dispatcher_->tune<AttentionFamily>(problem, options, static_cast<CUstream>(stream));
}

bool Runtime::record_tuning(const TuneReport<AttentionConfig>& report) {
  return dispatcher_->record<AttentionFamily>(report);
}

}  // namespace kjit
