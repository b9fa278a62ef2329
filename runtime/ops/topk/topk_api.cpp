// SPDX-License-Identifier: Apache-2.0
// softmax_topk's public entry points: each hands the call to the dispatcher.
#include "kjit/runtime.hpp"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/op_tools_for.h"
#include "runtime/ops/topk/topk_family.h"
#include "runtime/ops/topk/topk_scratch.h"

namespace kjit {

KJIT_REGISTER_OP_FAMILY(TopkFamily);
template struct TuneReport<TopkConfig>;

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

TuneReport<TopkConfig> Runtime::tune_topk(DType in_dtype, DType idx_dtype, std::int64_t rows,
                                          std::int64_t cols, int k,
                                          const TuneOptions<TopkConfig>& options, void* stream) {
  const TopkProblem problem = TopkFamily::problem_from_json(
      {{"op", "softmax_topk"}, {"dtype", to_string(in_dtype)}, {"index_dtype", to_string(idx_dtype)},
       {"rows", rows}, {"cols", cols}, {"k", k}});
  return dispatcher_->tune<TopkFamily>(problem, options, static_cast<CUstream>(stream));
}

bool Runtime::record_tuning(const TuneReport<TopkConfig>& report) {
  return dispatcher_->record<TopkFamily>(report);
}

}  // namespace kjit
