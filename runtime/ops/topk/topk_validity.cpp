// SPDX-License-Identifier: Apache-2.0
// Which configs can run a top-K problem: what the kernels require of their template arguments
// (kernel_sources/topk_shape.cuh) and what the device holds.
#include <cstdint>
#include <string>

#include "runtime/ops/topk/topk_fit.h"
#include "runtime/ops/topk/topk_heuristics.h"

namespace kjit {
namespace {

using namespace topk;

std::string why_not_resident(const TopkProblem& problem, const TopkConfig& config) {
  const int pack = config.pack;
  if (config.unroll < 1 || config.unroll * pack > kTopkResidentMostValues)
    return "packs times pack must be in [1, " + std::to_string(kTopkResidentMostValues) + "]";
  if (config.threads * config.unroll * pack > kResidentValuesPerBlock)
    return "threads x packs x pack must be at most " + std::to_string(kResidentValuesPerBlock) +
           " (the register file)";
  const std::int64_t slice = resident_slice(problem, config.cluster, pack);
  if (std::int64_t{config.threads} * config.unroll * pack < slice)
    return "threads x packs x pack must hold the row's share of " + std::to_string(slice) + " columns";
  return {};
}

}  // namespace

std::string why_not_topk(const TopkProblem& problem, const DeviceProps& device, const TopkConfig& config) {
  if (config.algorithm != TopkAlgorithm::kStream && config.algorithm != TopkAlgorithm::kResident)
    return "algorithm must be stream or resident";
  const int pack = config.pack;
  if (pack < 1 || (pack & (pack - 1)) != 0 || pack * size_of(problem.in_dtype) > kMaxPackBytes)
    return "pack must be a power of two of at most 16 bytes";
  // The stream kernel reads rows off the alignment from their pack boundaries (shifted_stream).
  if (is_resident(config) && pack > problem.max_pack)
    return "the logits' alignment allows the resident kernel packs of at most " + std::to_string(problem.max_pack);
  if (!topk_threads_fit(config.threads))
    return "threads must be a multiple of 32 in [64, 1024]";
  if (config.cluster < 1 || config.cluster > kMaxClusterBlocks) return "cluster must be in [1, 16]";
  if (config.cluster > 1 && device.arch < 90) return "clusters need sm_90 or newer";
  if (is_resident(config)) {
    if (std::string why = why_not_resident(problem, config); !why.empty()) return why;
  } else if (config.unroll < 1 || config.unroll > 8) {
    return "unroll must be in [1, 8]";
  }
  const std::int64_t smem = buffer_bytes(problem, config);
  if (smem > device.max_smem_per_block)
    return "needs " + std::to_string(smem) + " bytes of shared memory; the device allows " +
           std::to_string(device.max_smem_per_block);
  return {};
}

}  // namespace kjit
