// SPDX-License-Identifier: Apache-2.0
// The fused softmax + top-K kernels on the host side: the kernel and the launch geometry of a
// config. The geometry is the kernels' own (kernel_sources/topk_shape.cuh).
#pragma once

#include <cstdint>

#include "kernel_sources/topk_shape.cuh"
#include "kjit/config.hpp"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/topk/topk_problem.h"

namespace kjit {

KernelSpec topk_kernel_spec(const TopkProblem& problem, const TopkConfig& config);

/// Block size, cluster and dynamic shared memory of a config (grid: see topk_grid).
LaunchShape topk_launch_shape(const TopkProblem& problem, const TopkConfig& config);

/// The most rows one launch takes: a cluster a row, within a grid of 2^31 - 1 blocks. The
/// resident kernel takes exactly one row a cluster; the host splits larger calls (topk_rows).
std::int64_t topk_rows_per_launch(const LaunchShape& shape) noexcept;

/// Blocks to launch for `rows` rows, at most topk_rows_per_launch: one cluster per row.
unsigned topk_grid(const LaunchShape& shape, std::int64_t rows) noexcept;

/// Keys the config's shared-memory buffer holds (the launch's dynamic shared memory, in keys).
int topk_buffer_keys(const TopkProblem& problem, const TopkConfig& config);

}  // namespace kjit
