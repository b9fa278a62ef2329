// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise/rowwise_kernels.h"

#include <algorithm>
#include <initializer_list>
#include <string>

#include "kjit/error.hpp"
#include "runtime/ops/kernel_type.h"

namespace kjit {
namespace {

std::string join_arguments(const RowwiseProblem& problem, bool peel, std::initializer_list<long long> ints) {
  std::string text = std::to_string(static_cast<int>(problem.op)) + ", kjit::Io<" +
                     kernel_type(problem.in_dtype) + ", " + kernel_type(problem.out_dtype) +
                     (peel ? ", true>" : ">");
  for (long long value : ints) text += ", " + std::to_string(value);
  return text;
}

}  // namespace

KernelSpec rowwise_kernel_spec(const RowwiseProblem& p, const KernelConfig& c) {
  // Each algorithm's kernel is named after it, in a header of its name; its template arguments
  // follow the config keys' order (pack, threads, group, cluster, staged), those it takes; a
  // peeled config's Io says so (kjit::Io<in, out, true>).
  const auto spec = [&](const std::string& name, std::initializer_list<long long> ints) {
    return KernelSpec{name + ".cuh", "kjit::" + name + "<" + join_arguments(p, c.peel, ints) + ">"};
  };
  switch (c.algorithm) {
    case Algorithm::kWarp: return spec("warp", {p.cols, c.pack, c.threads, c.group});
    case Algorithm::kBlockRegs: return spec("block_regs", {p.cols, c.pack, c.threads});
    case Algorithm::kBlockSmem: return spec("block_smem", {p.cols, c.pack, c.threads});
    case Algorithm::kBlockOnline: return spec("block_online", {p.cols, c.pack, c.threads, c.cluster});
    case Algorithm::kCluster: return spec("cluster", {p.cols, c.pack, c.threads, c.cluster});
    case Algorithm::kClusterSmem: return spec("cluster_smem", {p.cols, c.pack, c.threads, c.cluster});
    case Algorithm::kStream: return spec("stream", {p.cols, c.pack, c.threads, c.group, c.cluster});
    case Algorithm::kRing: return spec("ring", {p.cols, c.threads, c.group, c.cluster});
    case Algorithm::kBlockSplit: return spec("block_split", {p.cols, c.pack, c.threads, c.staged});
    case Algorithm::kFlatTile:
      return spec("flat_tile", {p.cols, c.threads, c.group, flat_tile_rows(p, c), p.dense ? 0 : 1});
    case Algorithm::kAuto: break;
  }
  throw Error(Status::kErrorInvalidConfig, "a kernel spec needs a concrete algorithm");
}

LaunchShape rowwise_launch_shape(const RowwiseProblem& problem, const KernelConfig& config,
                                 int sm_count) {
  LaunchShape shape;
  shape.block = config.algorithm == Algorithm::kRing ? config.threads + kRingProducerThreads : config.threads;
  shape.rows_per_block = takes_row_groups(config.algorithm) ? config.threads / config.group : 1;
  if (config.algorithm == Algorithm::kFlatTile) shape.rows_per_block = flat_tile_rows(problem, config);
  shape.cluster = takes_cluster_size(config.algorithm) ? config.cluster : 1;
  shape.persistent = config.algorithm == Algorithm::kStream || config.algorithm == Algorithm::kBlockOnline ||
                     config.algorithm == Algorithm::kRing ||
                     (takes_cluster_grid(config.algorithm) && config.cluster_grid == ClusterGrid::kResident);
  // About two resident blocks per SM: enough to overlap one block's barriers with another's
  // loads. Loading the kernel replaces this with the occupancy the driver reports.
  shape.max_clusters = std::max(1, 2 * sm_count / shape.cluster);
  if (config.algorithm == Algorithm::kBlockSmem || config.algorithm == Algorithm::kClusterSmem)
    shape.dynamic_smem = static_cast<int>(smem_slice_bytes(problem, config));
  if (config.algorithm == Algorithm::kStream)
    shape.dynamic_smem = static_cast<int>(stream_smem_bytes(problem, config));
  if (config.algorithm == Algorithm::kRing)
    shape.dynamic_smem = static_cast<int>(ring_shape(problem, config).ring_bytes);
  shape.dependent_past_one_round = config.algorithm == Algorithm::kRing && ring_two_groups(config);
  if (config.algorithm == Algorithm::kBlockSplit)
    shape.dynamic_smem = static_cast<int>(split_smem_bytes(problem, config));
  return shape;
}

RingShape ring_shape(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  return ring_shape(problem.cols, size_of(problem.in_dtype), static_cast<int>(problem.op),
                    std::max(config.cluster, 1), config.threads, config.group, config.peel);
}

std::int64_t stream_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  return stream_smem_bytes(problem.cols, size_of(problem.in_dtype), config.threads, config.group, config.cluster);
}

int flat_tile_rows(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  return flat_tile_rows(problem.cols, size_of(problem.in_dtype), config.threads, config.group, !problem.dense);
}

std::int64_t flat_tile_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  return flat_tile_smem_bytes(problem.cols, size_of(problem.in_dtype), size_of(problem.out_dtype),
                              flat_tile_rows(problem, config), !problem.dense);
}

std::int64_t smem_slice_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  const int blocks = std::max(config.cluster, 1);
  return smem_slice_cols(problem.cols, config.pack, blocks, config.peel) * size_of(problem.in_dtype);
}

std::int64_t split_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  return split_smem_bytes(size_of(problem.in_dtype), config.pack, config.threads, config.staged);
}

std::int64_t rowwise_grid(const LaunchShape& shape, std::int64_t rows) noexcept {
  constexpr std::int64_t kMaxGrid = 0x7fffffff;
  if (shape.persistent) {
    // As few resident groups as finish the tiles in the same number of rounds: 64 rows on 30
    // resident clusters take 3 rounds either way, and 22 clusters do it with fewer rows in
    // flight at once.
    const std::int64_t tiles = (rows + shape.rows_per_block - 1) / shape.rows_per_block;
    const std::int64_t resident = std::max(1, shape.max_clusters);
    const std::int64_t rounds = std::max<std::int64_t>(1, (tiles + resident - 1) / resident);
    return (tiles + rounds - 1) / rounds * shape.cluster;
  }
  const std::int64_t blocks = (rows + shape.rows_per_block - 1) / shape.rows_per_block * shape.cluster;
  return std::min(blocks, kMaxGrid);
}

}  // namespace kjit
