// SPDX-License-Identifier: Apache-2.0
// The attention kernel on the host side: the kernel and the launch geometry of a config. The
// geometry is the kernel's own (kernel_sources/attention_shape.cuh).
#pragma once

#include <cstdint>

#include "kernel_sources/attention_params.cuh"
#include "kjit/config.hpp"
#include "runtime/compiler/kernel_spec.h"
#include "runtime/launch/launch_shape.h"
#include "runtime/ops/attention/attention_problem.h"

namespace kjit {

/// kjit::attention_tile<In, M, N, D, Dv, BiasKind, MaskKind, Causal, Warps, Problems, Stages>.
KernelSpec attention_kernel_spec(const AttentionProblem& problem, const AttentionConfig& config);

/// Block, shared memory and the persistent grid's bounds of a config.
LaunchShape attention_launch_shape(const AttentionProblem& problem, const AttentionConfig& config, int sm_count);

/// Blocks to launch for `problems` problems: as few resident blocks as take them in the same
/// number of rounds as every resident block would. With `period` > 1 (a kernel that holds its
/// addends: attention_holds_addends) the groups' step, blocks x problems a block, is a multiple
/// of it, so each group's problems share a bias head and a mask window; or every group takes at
/// most one problem.
std::int64_t attention_grid(const LaunchShape& shape, std::int64_t problems, std::int64_t period = 1) noexcept;

/// The period a launch of `args` keeps its groups' steps to: attention_addend_period where the
/// kernel of `shape` holds its addends, else 1.
std::int64_t attention_grid_period(const LaunchShape& shape, const AttentionArgs& args) noexcept;

/// The kernel's argument block of a valid call.
AttentionParams attention_params(const AttentionArgs& args) noexcept;

}  // namespace kjit
