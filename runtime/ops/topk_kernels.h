// SPDX-License-Identifier: Apache-2.0
// The fused softmax + top-K kernels on the host side: which configs can run a problem, which
// one the heuristics pick, and the kernel and launch geometry of a config.
#pragma once

#include <string>
#include <vector>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise_kernels.h"
#include "runtime/ops/topk/topk_problem.h"

namespace kjit {

/// The heuristic's pick for `problem` on `device`.
TopkConfig choose_topk_config(const TopkProblem& problem, const DeviceProps& device);

/// Fills the zero fields of a partial config.
TopkConfig complete_topk_config(const TopkProblem& problem, const DeviceProps& device,
                                TopkConfig partial);

/// Empty when `config` can run `problem` on `device`; otherwise why not.
std::string why_not_topk(const TopkProblem& problem, const DeviceProps& device,
                         const TopkConfig& config);

/// Every valid config of the space for `problem`, in a fixed order, the heuristic pick first.
std::vector<TopkConfig> topk_candidates(const TopkProblem& problem, const DeviceProps& device);

KernelSpec topk_kernel_spec(const TopkProblem& problem, const TopkConfig& config);

/// Block size, cluster and dynamic shared memory of a config (grid: see topk_grid).
LaunchShape topk_launch_shape(const TopkProblem& problem, const TopkConfig& config);

/// The most rows one launch takes: a cluster a row, within a grid of 2^31 - 1 blocks. The
/// resident kernel takes exactly one row a cluster; the host splits larger calls (topk_rows).
std::int64_t topk_rows_per_launch(const LaunchShape& shape) noexcept;

/// Blocks to launch for `rows` rows, at most topk_rows_per_launch: one cluster per row.
unsigned topk_grid(const LaunchShape& shape, std::int64_t rows) noexcept;

}  // namespace kjit
