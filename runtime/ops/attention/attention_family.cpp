// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/attention/attention_family.h"

#include <algorithm>
#include <cstdint>

#include "kjit/error.hpp"
#include "runtime/ops/attention/attention_heuristics.h"
#include "runtime/ops/attention/attention_kernels.h"
#include "runtime/ops/call_fields.h"

namespace kjit {
namespace {

[[noreturn]] void reject(const std::string& what) { throw Error(Status::kErrorInvalidArgument, what); }

/// Field `name`, "none" (absent) or a dtype, as an addend's dtype; false for none.
bool addend_field(const nlohmann::json& call, const char* name, DType& dtype) {
  const std::string text = string_field(call, name, "none");
  if (text == "none") return false;
  dtype = parse_dtype(text);
  return true;
}

bool causal_field(const nlohmann::json& call) {
  const auto found = call.find("causal");
  if (found == call.end()) return false;
  if (found->is_boolean()) return found->get<bool>();
  if (found->is_number_integer() && (found->get<std::int64_t>() == 0 || found->get<std::int64_t>() == 1))
    return found->get<std::int64_t>() == 1;
  reject("causal: must be true or false, not " + found->dump());
}

/// Stand-in addresses of a problem's six tensors, 4 GiB apart (one problem spans at most 256 KiB).
const void* stand_in_operand(int which) {
  return reinterpret_cast<const void*>((std::uintptr_t{1} + static_cast<std::uintptr_t>(which)) << 32);
}

/// Contiguous [batch, heads, rows, dim] strides.
std::array<std::int64_t, 3> packed(const AttentionArgs& a, std::int64_t rows, std::int64_t dim) {
  return {a.heads * rows * dim, rows * dim, dim};
}

}  // namespace

AttentionProblem AttentionFamily::problem_from_json(const nlohmann::json& call) {
  if (string_field(call, "op") != "attention") reject("op: expected attention");
  AttentionArgs args;
  args.dtype = dtype_field(call, "dtype", DType::kF16);
  const std::int64_t batch = integer_field(call, "batch", 1), heads = integer_field(call, "heads", 1);
  const std::int64_t windows = integer_field(call, "mask_windows", 1);
  args.m = integer_field(call, "m");
  args.n = integer_field(call, "n");
  args.d = integer_field(call, "d");
  args.dv = integer_field(call, "dv", std::max<std::int64_t>(args.d, 0));
  args.causal = causal_field(call);
  if (batch < 1) reject("batch: must be at least 1 (got " + std::to_string(batch) + ")");
  if (heads < 1) reject("heads: must be at least 1 (got " + std::to_string(heads) + ")");
  if (windows < 1) reject("mask_windows: must be at least 1 (got " + std::to_string(windows) + ")");
  if (batch > kMaxRows / heads) reject("batch: batch x heads must be at most 2^40 (kMaxRows)");
  // Stand-in buffers of one problem are checked, as row-wise calls are for two rows; the counts
  // come back after.
  args.batch = args.heads = args.mask_windows = 1;
  args.q = stand_in_operand(0);
  args.k = stand_in_operand(1);
  args.v = stand_in_operand(2);
  args.o = const_cast<void*>(stand_in_operand(3));
  if (addend_field(call, "bias_dtype", args.bias_dtype)) args.bias = stand_in_operand(4);
  if (addend_field(call, "mask_dtype", args.mask_dtype)) args.mask = stand_in_operand(5);
  args.q_strides = packed(args, args.m, args.d);
  args.k_strides = packed(args, args.n, args.d);
  args.v_strides = packed(args, args.n, args.dv);
  args.o_strides = packed(args, args.m, args.dv);
  args.bias_strides = {args.m * args.n, args.n};
  args.mask_strides = {args.m * args.n, args.n};
  Problem problem = validate(args);
  problem.batch = batch;
  problem.heads = heads;
  problem.mask_windows = problem.mask_kind != 0 ? windows : 1;
  problem.rows = batch * heads;
  return problem;
}

AttentionConfig AttentionFamily::partial_config(const std::string& algorithm) {
  if (algorithm != "auto" && algorithm != "tile")
    reject("algorithm " + algorithm + ": attention has one kernel (auto or tile)");
  return AttentionConfig{};
}

nlohmann::ordered_json AttentionFamily::key_fields(const Key& key) {
  return {{"op", "attention"},
          {"dtype", to_string(key.dtype)},
          {"bias", attention_addend_name(key.bias_kind)},
          {"mask", attention_addend_name(key.mask_kind)},
          {"causal", key.causal},
          {"m", key.m},
          {"n", key.n},
          {"d", key.d},
          {"dv", key.dv},
          {"rows_bucket", key.rows_bucket}};
}

nlohmann::ordered_json AttentionFamily::describe(const Problem& p) {
  return {{"op", "attention"},
          {"dtype", to_string(p.dtype)},
          {"batch", p.batch},
          {"heads", p.heads},
          {"m", p.m},
          {"n", p.n},
          {"d", p.d},
          {"dv", p.dv},
          {"bias_dtype", attention_addend_name(p.bias_kind)},
          {"mask_dtype", attention_addend_name(p.mask_kind)},
          {"mask_windows", p.mask_windows},
          {"causal", p.causal}};
}

double AttentionFamily::moved_bytes(const Problem& p) noexcept {
  const double element = size_of(p.dtype);
  const double per_problem = (double(p.m) * (p.d + p.dv) + double(p.n) * (p.d + p.dv)) * element;
  double addends = 0.0;
  if (p.bias_kind != 0) addends += double(p.heads) * p.m * p.n * size_of(attention_addend_dtype(p.bias_kind));
  if (p.mask_kind != 0) addends += double(p.mask_windows) * p.m * p.n * size_of(attention_addend_dtype(p.mask_kind));
  return double(p.rows) * per_problem + addends;
}

Verdict AttentionFamily::can_implement(const Problem& problem, const DeviceProps& device, const Config& config) {
  return Verdict::from_reason(why_not_attention(problem, device, config));
}

AttentionConfig AttentionFamily::complete(const Problem& problem, const DeviceProps& device, Config partial) {
  return complete_attention_config(problem, device, partial);
}

AttentionConfig AttentionFamily::pick(const Problem& problem, const DeviceProps& device) {
  return choose_attention_config(problem, device);
}

std::vector<AttentionConfig> AttentionFamily::candidates(const Problem& problem, const DeviceProps& device) {
  return attention_candidates(problem, device);
}

AttentionConfig AttentionFamily::reference(const Problem&) { return AttentionConfig{1, 1, 1}; }

KernelSpec AttentionFamily::kernel_spec(const Problem& problem, const Config& config) {
  return attention_kernel_spec(problem, config);
}

LaunchShape AttentionFamily::launch_shape(const Problem& problem, const Config& config, const DeviceProps& device) {
  return attention_launch_shape(problem, config, device.sm_count);
}

void AttentionFamily::launch(const Launchable& launchable, const Call& call, CUstream stream) {
  AttentionParams params = attention_params(call);
  const std::int64_t grid =
      attention_grid(launchable.shape, params.problems, attention_grid_period(launchable.shape, call));
  launchable.launch_blocks(&params, static_cast<unsigned>(grid), stream,
                           launches_as_dependent(launchable.shape, grid, params.problems));
}

}  // namespace kjit
