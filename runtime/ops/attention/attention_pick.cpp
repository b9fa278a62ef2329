// SPDX-License-Identifier: Apache-2.0
// The heuristic's pick for an attention problem, and the completion of partial configs: warps
// a problem, problems a block, and whether the next problem's K and V load during this one.
#include <algorithm>

#include "kernel_sources/attention_shape.cuh"
#include "runtime/ops/attention/attention_heuristics.h"

namespace kjit {
namespace {

/// Warps a problem at most: past 4, strips of a small problem run out.
constexpr int kMostProblemWarps = 4;

/// A warp a query strip, up to 4 (a power of two).
int choose_warps(const AttentionProblem& problem) {
  int warps = 1;
  while (warps * 2 <= std::min(kMostProblemWarps, attention_strips(problem.m))) warps *= 2;
  return warps;
}

/// Problems filling the block's 8 warps, fewer where the blocks would not cover the SMs.
int choose_problems(const AttentionProblem& problem, const DeviceProps& device, int warps) {
  int problems = std::max(1, kAttentionMostBlockWarps / warps);
  while (problems > 1 && (problem.rows + problems - 1) / problems < device.sm_count) problems /= 2;
  return problems;
}

}  // namespace

AttentionConfig complete_attention_config(const AttentionProblem& problem, const DeviceProps& device,
                                          AttentionConfig config) {
  if (config.warps == 0) config.warps = choose_warps(problem);
  const bool pick_problems = config.problems == 0, pick_stages = config.stages == 0;
  if (pick_problems) config.problems = choose_problems(problem, device, config.warps);
  if (pick_stages) config.stages = 2;
  // Shared memory: one stage before fewer problems, down to one problem.
  while (attention_smem_bytes(problem, config) > device.max_smem_per_block) {
    if (pick_stages && config.stages > 1)
      config.stages = 1;
    else if (pick_problems && config.problems > 1)
      config.problems /= 2;
    else
      break;
  }
  return config;
}

AttentionConfig choose_attention_config(const AttentionProblem& problem, const DeviceProps& device) {
  return complete_attention_config(problem, device, AttentionConfig{});
}

}  // namespace kjit
