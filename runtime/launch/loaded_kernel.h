// SPDX-License-Identifier: Apache-2.0
// A kernel loaded into one context, and what launching it takes.
#pragma once

#include <memory>

#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/handles.h"
#include "runtime/launch/launch_shape.h"
#include "runtime/launch/row_claims.h"

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

/// What the hot path needs for one problem class: the function and its launch shape.
struct Launchable {
  std::shared_ptr<const LoadedKernel> kernel;
  LaunchShape shape;
  /// Kernels whose blocks claim rows from a counter (the ring): their context's counters, one
  /// taken by each launch (null: fixed rows).
  std::shared_ptr<RowClaimCounters> row_claims;

  /// Launches `grid` blocks with one argument block (the kernel's whole parameter list), as a
  /// programmatic dependent of the kernel before it when `dependent`.
  void launch_blocks(void* argument_block, unsigned grid, CUstream stream, bool dependent) const;
};

/// Per-context resources an op family's launches may take (op_family.h, bind).
struct ContextResources {
  std::shared_ptr<RowClaimCounters> row_claims = std::make_shared<RowClaimCounters>();
};

}  // namespace kjit
