// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/topk/topk_fit.h"

#include <algorithm>

namespace kjit::topk {
namespace {

// Static shared memory of the kernels besides the key buffer (their block state and the block
// reduction's scratch), rounded up.
constexpr int kStreamStaticSmemBytes = 6144;
constexpr int kResidentStaticSmemBytes = 18432;

}  // namespace

int widest_pack(const TopkProblem& problem) {
  return std::min(problem.max_pack, kMaxPackBytes / size_of(problem.in_dtype));
}

int stream_pack(const TopkProblem& problem) {
  return size_of(problem.in_dtype) == 2 ? kMaxPackBytes / size_of(problem.in_dtype) : widest_pack(problem);
}

int other_stream_pack(const TopkProblem& problem) {
  const int widest = kMaxPackBytes / size_of(problem.in_dtype), own = widest_pack(problem);
  if (own == widest) return 0;
  return stream_pack(problem) == own ? widest : own;
}

bool shifted_stream(const TopkProblem& problem, const TopkConfig& config) {
  return config.algorithm == TopkAlgorithm::kStream && config.pack > problem.max_pack;
}

std::int64_t slice_cols(const TopkProblem& problem, int cluster) {
  return (problem.cols + cluster - 1) / cluster;
}

std::int64_t resident_slice(const TopkProblem& problem, int cluster, int pack) {
  return pack_slice_cols(problem.cols, pack, cluster);
}

bool is_resident(const TopkConfig& config) { return config.algorithm == TopkAlgorithm::kResident; }

int resident_packs(const TopkProblem& problem, const TopkConfig& config) {
  const std::int64_t per_pass = std::int64_t{config.threads} * config.pack;
  return static_cast<int>((resident_slice(problem, config.cluster, config.pack) + per_pass - 1) / per_pass);
}

std::int64_t buffer_bytes(const TopkProblem& problem, const TopkConfig& config) {
  return std::int64_t{topk_buffer_keys(problem, config)} * kTopkKeyBytes +
         (is_resident(config) ? kResidentStaticSmemBytes : kStreamStaticSmemBytes);
}

int widest_resident_cluster(const DeviceProps& device) { return device.arch >= 90 ? kMaxClusterBlocks : 1; }

int resident_min_cluster(const TopkProblem& problem, const DeviceProps& device) {
  for (int cluster = 1; cluster <= widest_resident_cluster(device); cluster *= 2)
    if (slice_cols(problem, cluster) <= kResidentValuesPerBlock) return cluster;
  return 0;
}

int one_pack_cluster(const TopkProblem& problem) {
  const std::int64_t per_block = std::int64_t{kResidentMostThreads} * widest_pack(problem);
  return static_cast<int>((problem.cols + per_block - 1) / per_block);
}

}  // namespace kjit::topk
