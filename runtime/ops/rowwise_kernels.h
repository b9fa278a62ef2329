// SPDX-License-Identifier: Apache-2.0
// From (problem, config) to the kernel to compile and the geometry to launch it with.
#pragma once

#include <cstdint>
#include <string>

#include "kjit/config.hpp"
#include "runtime/compiler/kernel_spec.h"
#include "runtime/launch/launch_shape.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit {

/// Whether an algorithm's grid is a choice (KernelConfig::cluster_grid): the cluster kernels
/// walk the rows whatever the grid; the others' grids are part of their design.
inline bool takes_cluster_grid(Algorithm algorithm) noexcept {
  return algorithm == Algorithm::kCluster || algorithm == Algorithm::kClusterSmem;
}

/// Whether an algorithm splits a row over KernelConfig::cluster blocks (all others take 1).
inline bool takes_cluster_size(Algorithm algorithm) noexcept {
  return takes_cluster_grid(algorithm) || algorithm == Algorithm::kStream ||
         algorithm == Algorithm::kBlockOnline || algorithm == Algorithm::kRing;
}

/// Whether a block takes several rows, one to each KernelConfig::group lanes (all others give
/// a row the whole block: group == threads).
inline bool takes_row_groups(Algorithm algorithm) noexcept {
  return algorithm == Algorithm::kWarp || algorithm == Algorithm::kStream;
}

KernelSpec rowwise_kernel_spec(const RowwiseProblem& problem, const KernelConfig& config);
/// `sm_count` sizes the grid of persistent kernels, whose blocks or clusters stay resident and
/// loop over rows.
LaunchShape rowwise_launch_shape(const RowwiseProblem& problem, const KernelConfig& config,
                                 int sm_count);

/// The ring kernel's geometry (row_ring.cuh): chunks of at most 32 KB in a ring of 192 KB (224
/// KB for 4-byte elements), and one producer warp beside the consumer threads.
constexpr std::int64_t kRingChunkBytes = 32 * 1024;
/// 16-bit log-softmax in two consumer groups stores by bulk copies from slices this large on.
constexpr std::int64_t kRingLogSoftmaxBulkSliceBytes = 28 * 1024;
constexpr int kRingProducerThreads = 32;

/// Whether a ring config's consumers are two groups taking turns over the rows (group =
/// threads / 2): they store their outputs by bulk copies and launch as dependents in every round.
inline bool ring_two_groups(const KernelConfig& config) noexcept {
  return config.group > 0 && config.group < config.threads;
}

/// How the ring kernel cuts a row: each block's slice, its chunks and their size, the values
/// each consumer thread holds, and the ring's shared memory.
struct RingShape {
  std::int64_t slice_cols = 0;
  std::int64_t chunks = 0;
  std::int64_t chunk_bytes = 0;
  std::int64_t values_per_thread = 0;
  std::int64_t ring_bytes = 0;
};
RingShape ring_shape(const RowwiseProblem& problem, const KernelConfig& config) noexcept;

/// Columns of the row slice one block of a shared-memory kernel holds.
std::int64_t smem_slice_cols(std::int64_t cols, int pack, int cluster) noexcept;

/// Columns of the row slice one block of the stream kernel holds (16-byte multiples).
std::int64_t stream_slice_cols(std::int64_t cols, DType in_dtype, int cluster) noexcept;
/// Dynamic shared memory of the stream kernel: two stages of a tile of row slices.
std::int64_t stream_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept;

/// Packs of a row of `cols` each thread of a block_split block takes (held and staged).
std::int64_t split_thread_packs(std::int64_t cols, int pack, int threads) noexcept;
/// Dynamic shared memory of block_split: every thread's staged packs.
std::int64_t split_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept;

/// Blocks to launch for `rows` rows: one per row (or per group of rows), capped at the grid
/// limit; for cluster and persistent kernels, the fewest resident groups (up to max_clusters)
/// that walk the rows in as few rounds as max_clusters would.
std::int64_t rowwise_grid(const LaunchShape& shape, std::int64_t rows) noexcept;

}  // namespace kjit
