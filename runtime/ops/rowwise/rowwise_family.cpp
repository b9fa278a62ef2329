// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise/rowwise_family.h"

#include "kernel_sources/row_params.cuh"
#include "runtime/ops/call_fields.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"

namespace kjit {

RowwiseProblem RowwiseFamily::validate(const Call& call) {
  return validate_rowwise(call.op, call.args, call.scale_out);
}

RowwiseProblem RowwiseFamily::problem_from_json(const nlohmann::json& call) {
  const std::int64_t rows = rows_field(call);
  RowwiseCall stand_in;
  stand_in.op = parse_row_op(string_field(call, "op"));
  RowwiseArgs& args = stand_in.args;
  args.in = stand_in_address(0);
  args.out = const_cast<void*>(stand_in_address(1));
  args.cols = integer_field(call, "cols");
  args.in_row_stride = args.out_row_stride = args.cols;
  // At most two rows validated: the widest pack depends on rows only through "more than one".
  args.rows = rows < 2 ? rows : 2;
  args.in_dtype = dtype_field(call, "dtype", DType::kF32);
  args.out_dtype = dtype_field(call, "out_dtype", args.in_dtype);
  Problem problem = validate(stand_in);
  problem.rows = rows;
  return problem;
}

RowwiseKey RowwiseFamily::key_of(const Problem& problem) noexcept { return kjit::key_of(problem); }

RowwiseProblem RowwiseFamily::planned(const Problem& problem) noexcept {
  Problem planned = problem;
  planned.rows = bucket_rows(rows_bucket(problem.rows));
  return planned;
}

nlohmann::ordered_json RowwiseFamily::key_fields(const Key& key) {
  return {{"op", to_string(key.op)},   {"in", to_string(key.in_dtype)},
          {"out", to_string(key.out_dtype)}, {"cols", key.cols},
          {"rows_bucket", key.rows_bucket},  {"pack", key.max_pack}};
}

nlohmann::ordered_json RowwiseFamily::describe(const Problem& problem) {
  return {{"op", to_string(problem.op)},
          {"dtype", to_string(problem.in_dtype)},
          {"out_dtype", to_string(problem.out_dtype)},
          {"rows", problem.rows},
          {"cols", problem.cols}};
}

double RowwiseFamily::moved_bytes(const Problem& problem) noexcept {
  return static_cast<double>(problem.rows) * static_cast<double>(problem.cols) *
         (size_of(problem.in_dtype) + size_of(problem.out_dtype));
}

bool RowwiseFamily::tunes_alignment(const Problem& problem) noexcept {
  const int in = size_of(problem.in_dtype), out = size_of(problem.out_dtype);
  return problem.max_pack == 16 / (in > out ? in : out);
}

Verdict RowwiseFamily::can_implement(const Problem& problem, const DeviceProps& device,
                                     const Config& config) {
  return Verdict::from_reason(why_not_rowwise(problem, device, config));
}

KernelConfig RowwiseFamily::complete(const Problem& problem, const DeviceProps& device,
                                     Config partial) {
  return complete_rowwise_config(problem, device, partial);
}

KernelConfig RowwiseFamily::pick(const Problem& problem, const DeviceProps& device) {
  return choose_rowwise_config(problem, device);
}

std::vector<KernelConfig> RowwiseFamily::candidates(const Problem& problem,
                                                    const DeviceProps& device) {
  return rowwise_candidates(problem, device);
}

KernelConfig RowwiseFamily::reference(const Problem&) {
  return KernelConfig{Algorithm::kBlockOnline};
}

KernelSpec RowwiseFamily::kernel_spec(const Problem& problem, const Config& config) {
  return rowwise_kernel_spec(problem, config);
}

LaunchShape RowwiseFamily::launch_shape(const Problem& problem, const Config& config,
                                        const DeviceProps& device) {
  return rowwise_launch_shape(problem, config, device.sm_count);
}

void RowwiseFamily::bind(Launchable& launchable, const Config& config,
                         const ContextResources& context) {
  if (config.algorithm == Algorithm::kRing) launchable.row_claims = context.row_claims;
}

void RowwiseFamily::launch(const Launchable& launchable, const Call& call, CUstream stream) {
  const RowwiseArgs& args = call.args;
  RowParams params{args.in,   args.out, call.scale_out, args.rows, args.in_row_stride,
                   args.out_row_stride, nullptr};
  if (launchable.row_claims) params.row_claims = launchable.row_claims->for_launch(stream);
  const std::int64_t grid = rowwise_grid(launchable.shape, args.rows);
  launchable.launch_blocks(&params, static_cast<unsigned>(grid), stream,
                           launches_as_dependent(launchable.shape, grid, args.rows));
}

}  // namespace kjit
