// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/attention/attention_kernels.h"

#include <algorithm>
#include <string>

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

std::int64_t attention_grid(const LaunchShape& shape, std::int64_t problems) noexcept {
  const std::int64_t tiles = (problems + shape.rows_per_block - 1) / shape.rows_per_block;
  const std::int64_t resident = std::max(1, shape.max_clusters);
  const std::int64_t rounds = std::max<std::int64_t>(1, (tiles + resident - 1) / resident);
  return (tiles + rounds - 1) / rounds;
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
