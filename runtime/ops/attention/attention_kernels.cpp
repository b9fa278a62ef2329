// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/attention/attention_kernels.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "kernel_sources/attention_shape.cuh"
#include "runtime/ops/attention/attention_heuristics.h"
#include "runtime/ops/kernel_type.h"

namespace kjit {

KernelSpec attention_kernel_spec(const AttentionProblem& p, const AttentionConfig& c) {
  std::string name = std::string("kjit::attention_tile<") + kernel_type(p.dtype);
  for (int value : {p.m, p.n, p.d, p.dv, p.bias_kind, p.mask_kind}) name += ", " + std::to_string(value);
  name += p.causal ? ", true" : ", false";
  for (int value : {c.warps, c.problems, c.stages}) name += ", " + std::to_string(value);
  return {"attention_tile.cuh", name + ">"};
}

LaunchShape attention_launch_shape(const AttentionProblem& problem, const AttentionConfig& config, int sm_count) {
  LaunchShape shape;
  shape.block = 32 * config.warps * config.problems;
  shape.rows_per_block = config.problems;
  shape.dynamic_smem = static_cast<int>(attention_smem_bytes(problem, config));
  shape.persistent = true;
  // Two blocks an SM until loading the kernel replaces it with the occupancy the driver reports.
  shape.max_clusters = std::max(1, 2 * sm_count);
  return shape;
}

std::int64_t attention_grid(const LaunchShape& shape, std::int64_t problems, std::int64_t period) noexcept {
  const std::int64_t per_block = std::max(1, shape.rows_per_block);
  const std::int64_t tiles = (problems + per_block - 1) / per_block;
  const std::int64_t resident = std::max(1, shape.max_clusters);
  if (period <= 1) {
    const std::int64_t rounds = std::max<std::int64_t>(1, (tiles + resident - 1) / resident);
    return (tiles + rounds - 1) / rounds;
  }
  // Steps in whole units: multiples of the period that whole blocks make.
  const std::int64_t unit = std::lcm(period, per_block);
  if (problems <= unit) return tiles;  // a problem a group at most: any step will do
  std::int64_t step = std::max<std::int64_t>(1, resident * per_block / unit) * unit;
  const std::int64_t rounds = (problems + step - 1) / step;
  if (rounds == 1) return tiles;
  step = ((problems + rounds - 1) / rounds + unit - 1) / unit * unit;  // as few as take those rounds
  return step / per_block;
}

std::int64_t attention_grid_period(const LaunchShape& shape, const AttentionArgs& args) noexcept {
  const bool bias = args.bias != nullptr, mask = args.mask != nullptr;
  const int warps = shape.block / 32 / std::max(1, shape.rows_per_block);
  if (!attention_holds_addends(static_cast<int>(args.m), static_cast<int>(args.n), static_cast<int>(args.dv), warps,
                               bias || mask))
    return 1;
  return attention_addend_period(bias, mask, args.heads, args.mask_windows);
}

AttentionParams attention_params(const AttentionArgs& a) noexcept {
  AttentionParams p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.o = a.o;
  p.bias = a.bias;
  p.mask = a.mask;
  p.problems = a.batch * a.heads;
  p.heads = a.heads;
  p.mask_windows = a.mask != nullptr ? a.mask_windows : 1;
  for (int i = 0; i < 3; ++i) {
    p.q_strides[i] = a.q_strides[i];
    p.k_strides[i] = a.k_strides[i];
    p.v_strides[i] = a.v_strides[i];
    p.o_strides[i] = a.o_strides[i];
  }
  for (int i = 0; i < 2; ++i) {
    p.bias_strides[i] = a.bias_strides[i];
    p.mask_strides[i] = a.mask_strides[i];
  }
  // A finite scale past FLT_MAX / log2(e) is clamped: the logits still order alike.
  const double scale = std::clamp(static_cast<double>(a.scale) * 1.4426950408889634, -3.4028234663852886e38,
                                  3.4028234663852886e38);
  p.scale_log2 = static_cast<float>(scale);
  return p;
}

}  // namespace kjit
