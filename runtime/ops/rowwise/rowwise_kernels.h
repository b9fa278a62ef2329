// SPDX-License-Identifier: Apache-2.0
// From (problem, config) to the kernel to compile and the geometry to launch it with. The
// geometry is the kernels' own (kernel_sources/row_layout.cuh, ring_layout.cuh).
#pragma once

#include <cstdint>
#include <string>

#include "kernel_sources/flat_tile_layout.cuh"
#include "kernel_sources/ring_layout.cuh"
#include "kernel_sources/row_layout.cuh"
#include "kernel_sources/row_peel.cuh"
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
  return algorithm == Algorithm::kWarp || algorithm == Algorithm::kStream || algorithm == Algorithm::kFlatTile;
}

/// Whether an algorithm lays rows over their own vector grids when KernelConfig::peel is set.
inline bool takes_peel(Algorithm algorithm) noexcept {
  switch (algorithm) {
    case Algorithm::kWarp:
    case Algorithm::kBlockRegs:
    case Algorithm::kBlockSplit:
    case Algorithm::kBlockOnline:
    case Algorithm::kBlockSmem:
    case Algorithm::kCluster:
    case Algorithm::kClusterSmem:
    case Algorithm::kRing: return true;
    default: return false;
  }
}

/// Columns a thread's share is sized for (the kernels' kShareCols): a peeled row's span at its
/// worst shift, else the row.
inline std::int64_t share_cols(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  return config.peel ? peeled_cols(problem.cols, config.pack) : problem.cols;
}

/// Whether a ring config's consumers are two groups taking turns over the rows (group =
/// threads / 2): they store their outputs by bulk copies and launch as dependents in every round.
inline bool ring_two_groups(const KernelConfig& config) noexcept {
  return config.group > 0 && config.group < config.threads;
}

KernelSpec rowwise_kernel_spec(const RowwiseProblem& problem, const KernelConfig& config);
/// `sm_count` sizes the grid of persistent kernels, whose blocks or clusters stay resident and
/// loop over rows.
LaunchShape rowwise_launch_shape(const RowwiseProblem& problem, const KernelConfig& config,
                                 int sm_count);

/// How the ring kernel cuts a row for `config` (kernel_sources/ring_layout.cuh).
RingShape ring_shape(const RowwiseProblem& problem, const KernelConfig& config) noexcept;
/// Dynamic shared memory of the stream kernel: two stages of a tile of row slices.
std::int64_t stream_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept;
/// Rows of a flat_tile block's span (kernel_sources/flat_tile_layout.cuh).
int flat_tile_rows(const RowwiseProblem& problem, const KernelConfig& config) noexcept;
/// Static shared memory of a flat_tile block: its input and output span buffers.
std::int64_t flat_tile_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept;
/// Dynamic shared memory of block_smem and cluster_smem: a block's slice of the row.
std::int64_t smem_slice_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept;
/// Dynamic shared memory of block_split: every thread's staged packs.
std::int64_t split_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept;

/// Blocks to launch for `rows` rows: one per row (or per group of rows), capped at the grid
/// limit; for cluster and persistent kernels, the fewest resident groups (up to max_clusters)
/// that walk the rows in as few rounds as max_clusters would.
std::int64_t rowwise_grid(const LaunchShape& shape, std::int64_t rows) noexcept;

}  // namespace kjit
