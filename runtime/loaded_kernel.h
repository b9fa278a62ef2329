// SPDX-License-Identifier: Apache-2.0
// A kernel loaded into one context, and the launch of a row-wise kernel with it.
#pragma once

#include <memory>

#include "kernel_sources/row_params.cuh"
#include "kjit/config.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/handles.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/row_claims.h"

namespace kjit {

/// A cubin's module and function in one context, with the attributes its launches need set.
struct LoadedKernel {
  std::shared_ptr<const CompiledKernel> compiled;
  Module module;
  CUfunction function = nullptr;
  int max_active_clusters = 0;  ///< co-resident clusters of this kernel (cluster kernels only)
  /// What the kernel uses: ptxas's report, or the loaded function's attributes when NVRTC served
  /// the compile from the CUDA compute cache, which returns no report.
  ResourceUsage usage;
};

/// Loads `compiled` into the current context and prepares `shape` (opt-in shared memory,
/// non-portable cluster sizes).
std::shared_ptr<const LoadedKernel> load_kernel(std::shared_ptr<const CompiledKernel> compiled,
                                                const LaunchShape& shape);

/// Whether a launch of `grid` blocks over `rows` rows goes out as a programmatic dependent of the
/// kernel before it in the stream: where the shape allows it (LaunchShape::dependent_launch),
/// unless the grid is persistent and walks the rows in more than one round (where the shape says
/// otherwise: LaunchShape::dependent_past_one_round).
bool launches_as_dependent(const LaunchShape& shape, std::int64_t grid, std::int64_t rows) noexcept;

/// What the hot path needs for one problem class: the function, its config and launch shape.
struct Launchable {
  std::shared_ptr<const LoadedKernel> kernel;
  KernelConfig config;
  LaunchShape shape;
  /// The ring's: its context's counters, one taken by each launch (null: fixed rows).
  std::shared_ptr<RowClaimCounters> row_claims;

  /// Launches over params.rows rows on `stream`. No allocation, no synchronization (but for the
  /// ring's row-claim counters, allocated once a context by its first ring launch).
  void launch(const RowParams& params, CUstream stream) const;
  /// Launches `grid` blocks with one argument block (the kernel's whole parameter list), as a
  /// programmatic dependent of the kernel before it when `dependent`.
  void launch_blocks(void* argument_block, unsigned grid, CUstream stream, bool dependent) const;
};

}  // namespace kjit
