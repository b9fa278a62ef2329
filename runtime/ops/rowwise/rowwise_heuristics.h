// SPDX-License-Identifier: Apache-2.0
// Which algorithm and config run a row-wise problem on a given device, and which configs can.
#pragma once

#include <string>
#include <vector>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit {

/// The heuristic's pick for `problem` on `device` (rowwise_pick.cpp).
KernelConfig choose_rowwise_config(const RowwiseProblem& problem, const DeviceProps& device);

/// Fills the zero fields of a partial config (e.g. only the algorithm) with sensible values.
KernelConfig complete_rowwise_config(const RowwiseProblem& problem, const DeviceProps& device,
                                     KernelConfig partial);

/// Empty when `config` can run `problem` on `device`; otherwise why not (rowwise_validity.cpp).
std::string why_not_rowwise(const RowwiseProblem& problem, const DeviceProps& device,
                            const KernelConfig& config);

/// Every valid config of the configuration space for `problem` (the tuner's candidates), in a
/// fixed order; the heuristic pick is among them (rowwise_candidates.cpp).
std::vector<KernelConfig> rowwise_candidates(const RowwiseProblem& problem,
                                             const DeviceProps& device);

}  // namespace kjit
