// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/topk/topk_family.h"

#include <algorithm>
#include <cstdint>

#include "kernel_sources/topk_params.cuh"
#include "runtime/ops/call_fields.h"
#include "runtime/ops/topk/topk_heuristics.h"
#include "runtime/ops/topk/topk_kernels.h"

namespace kjit {
namespace {

TopkParams params_of(const TopkArgs& args) {
  // exp(x/T) = 2^(x * log2(e)/T); a temperature so small that the scale overflows still orders
  // the row, and (x - max) * FLT_MAX gives 0 for the max and -inf (probability 0) elsewhere.
  const double scale = 1.4426950408889634 / static_cast<double>(args.temperature);
  const float clamped = scale > 3.4028234663852886e38 ? 3.4028234663852886e38f
                                                      : static_cast<float>(scale);
  return {args.logits, args.probs_out, args.idx_out, args.k_per_row, args.rows, args.row_stride,
          args.k, clamped, args.flags};
}

}  // namespace

TopkProblem TopkFamily::problem_from_json(const nlohmann::json& call) {
  const std::int64_t rows = rows_field(call);
  if (string_field(call, "op") != "softmax_topk")
    throw Error(Status::kErrorInvalidArgument, "op: expected softmax_topk");
  const std::int64_t k = integer_field(call, "k");
  if (k < 1 || k > kMaxTopK)
    throw Error(Status::kErrorInvalidArgument,
                "k: must be in 1.." + std::to_string(kMaxTopK) + " (got " + std::to_string(k) + ")");
  TopkArgs args;
  args.logits = stand_in_address(0);
  args.probs_out = static_cast<float*>(const_cast<void*>(stand_in_address(1)));
  args.idx_out = const_cast<void*>(stand_in_address(2));
  args.cols = integer_field(call, "cols");
  args.row_stride = args.cols;
  args.rows = rows < 2 ? rows : 2;  // as for row-wise calls
  args.in_dtype = dtype_field(call, "dtype", DType::kF32);
  args.idx_dtype = dtype_field(call, "index_dtype", DType::kI64);
  args.k = static_cast<std::int32_t>(k);
  Problem problem = validate(args);
  problem.rows = rows;
  return problem;
}

nlohmann::ordered_json TopkFamily::key_fields(const Key& key) {
  return {{"op", "softmax_topk"},         {"in", to_string(key.in_dtype)},
          {"index", to_string(key.idx_dtype)}, {"cols", key.cols},
          {"k_bucket", key.k_bucket},     {"rows_bucket", key.rows_bucket},
          {"pack", key.max_pack}};
}

nlohmann::ordered_json TopkFamily::describe(const Problem& problem) {
  return {{"op", "softmax_topk"},
          {"dtype", to_string(problem.in_dtype)},
          {"index_dtype", to_string(problem.idx_dtype)},
          {"rows", problem.rows},
          {"cols", problem.cols},
          {"k", problem.k}};
}

double TopkFamily::moved_bytes(const Problem& problem) noexcept {
  return static_cast<double>(problem.rows) * static_cast<double>(problem.cols) *
         size_of(problem.in_dtype);
}

bool TopkFamily::tunes_alignment(const Problem& problem) noexcept {
  return problem.max_pack == 16 / size_of(problem.in_dtype);
}

Verdict TopkFamily::can_implement(const Problem& problem, const DeviceProps& device,
                                  const Config& config) {
  return Verdict::from_reason(why_not_topk(problem, device, config));
}

TopkConfig TopkFamily::complete(const Problem& problem, const DeviceProps& device, Config partial) {
  return complete_topk_config(problem, device, partial);
}

TopkConfig TopkFamily::pick(const Problem& problem, const DeviceProps& device) {
  return choose_topk_config(problem, device);
}

std::vector<TopkConfig> TopkFamily::candidates(const Problem& problem, const DeviceProps& device) {
  return topk_candidates(problem, device);
}

TopkConfig TopkFamily::reference(const Problem&) {
  return TopkConfig{0, 256, 0, 1, TopkAlgorithm::kStream};
}

KernelSpec TopkFamily::kernel_spec(const Problem& problem, const Config& config) {
  return topk_kernel_spec(problem, config);
}

LaunchShape TopkFamily::launch_shape(const Problem& problem, const Config& config,
                                     const DeviceProps&) {
  return topk_launch_shape(problem, config);
}

void TopkFamily::launch(const Launchable& launchable, const Call& call, CUstream stream) {
  const std::int64_t per_launch = topk_rows_per_launch(launchable.shape);
  for (std::int64_t first = 0; first < call.rows; first += per_launch) {
    const std::int64_t count = std::min(per_launch, call.rows - first);
    TopkParams params = params_of(topk_rows(call, first, count));
    launchable.launch_blocks(&params, topk_grid(launchable.shape, count), stream,
                             launchable.shape.dependent_launch);
  }
}

}  // namespace kjit
