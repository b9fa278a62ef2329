// SPDX-License-Identifier: Apache-2.0
// Which attention config runs a problem on a given device, and which configs can.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/attention/attention_problem.h"

namespace kjit {

/// Dynamic shared memory of a config's block: every problem group's stages of K and V.
std::int64_t attention_smem_bytes(const AttentionProblem& problem, const AttentionConfig& config) noexcept;

/// Empty when `config` can run `problem` on `device`; otherwise why not (attention_validity.cpp).
std::string why_not_attention(const AttentionProblem& problem, const DeviceProps& device,
                              const AttentionConfig& config);

/// The heuristic's pick (attention_pick.cpp).
AttentionConfig choose_attention_config(const AttentionProblem& problem, const DeviceProps& device);

/// Fills the zero fields of a partial config.
AttentionConfig complete_attention_config(const AttentionProblem& problem, const DeviceProps& device,
                                          AttentionConfig partial);

/// The valid configs the tuner times, the pick first, at most kMostAttentionCandidates
/// (attention_candidates.cpp).
std::vector<AttentionConfig> attention_candidates(const AttentionProblem& problem, const DeviceProps& device);
constexpr int kMostAttentionCandidates = 16;

}  // namespace kjit
