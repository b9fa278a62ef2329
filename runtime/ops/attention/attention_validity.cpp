// SPDX-License-Identifier: Apache-2.0
// Which configs can run an attention problem: what the kernel requires of its template
// arguments (kernel_sources/attention_shape.cuh) and what the device holds.
#include <string>

#include "kernel_sources/attention_shape.cuh"
#include "runtime/ops/attention/attention_heuristics.h"

namespace kjit {

std::int64_t attention_smem_bytes(const AttentionProblem& p, const AttentionConfig& c) noexcept {
  if (c.stages != 1 && c.stages != 2) return 0;
  return attention_block_smem(p.m, p.n, p.d, p.dv, c.warps, c.problems, c.stages);
}

std::string why_not_attention(const AttentionProblem& p, const DeviceProps& device, const AttentionConfig& c) {
  if (device.arch < 80) return "the attention kernel needs sm_80 or newer (mma.sync on 16-bit inputs)";
  if (!attention_warps_fit(c.warps, p.m))
    return "warps must be 1, 2, 4 or 8 and at most the " + std::to_string(attention_strips(p.m)) +
           " query strips of 16 rows";
  if (c.problems < 1 || c.warps * c.problems > kAttentionMostBlockWarps)
    return "problems must be at least 1, and warps x problems at most " + std::to_string(kAttentionMostBlockWarps) +
           " (256 threads, each of which may take 255 registers)";
  if (c.stages != 1 && c.stages != 2) return "stages must be 1 or 2";
  const std::int64_t smem = attention_smem_bytes(p, c);
  if (smem > device.max_smem_per_block)
    return "needs " + std::to_string(smem) + " bytes of shared memory; the device allows " +
           std::to_string(device.max_smem_per_block);
  return {};
}

}  // namespace kjit
