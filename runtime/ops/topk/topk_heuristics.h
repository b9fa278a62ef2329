// SPDX-License-Identifier: Apache-2.0
// Which fused softmax + top-K config runs a problem on a given device, and which configs can.
#pragma once

#include <string>
#include <vector>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/topk/topk_problem.h"

namespace kjit {

/// The heuristic's pick for `problem` on `device` (topk_pick.cpp).
TopkConfig choose_topk_config(const TopkProblem& problem, const DeviceProps& device);

/// Fills the zero fields of a partial config.
TopkConfig complete_topk_config(const TopkProblem& problem, const DeviceProps& device,
                                TopkConfig partial);

/// Empty when `config` can run `problem` on `device`; otherwise why not (topk_validity.cpp).
std::string why_not_topk(const TopkProblem& problem, const DeviceProps& device,
                         const TopkConfig& config);

/// Every valid config of the space for `problem`, in a fixed order, the heuristic pick first
/// (topk_candidates.cpp).
std::vector<TopkConfig> topk_candidates(const TopkProblem& problem, const DeviceProps& device);

}  // namespace kjit
