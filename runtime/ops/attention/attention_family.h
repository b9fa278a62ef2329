// SPDX-License-Identifier: Apache-2.0
// Batched small-tile attention as an op family (runtime/ops/op_family.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/config.hpp"
#include "kjit/types.hpp"
#include "runtime/compiler/kernel_spec.h"
#include "runtime/driver/context.h"
#include "runtime/launch/loaded_kernel.h"
#include "runtime/ops/attention/attention_problem.h"
#include "runtime/ops/op_family.h"

namespace kjit {

class AttentionScratch;

struct AttentionFamily {
  using Call = AttentionArgs;
  using Problem = AttentionProblem;
  using Key = AttentionKey;
  using KeyHash = AttentionKeyHash;
  using Config = AttentionConfig;
  using Scratch = AttentionScratch;
  static constexpr const char* kName = "attention";

  static std::vector<std::string> ops() { return {"attention"}; }
  static std::vector<std::string> fields() {
    return {"op", "dtype", "batch", "heads", "m", "n", "d", "dv", "bias_dtype", "mask_dtype", "mask_windows",
            "causal"};
  }

  static Problem validate(const Call& call) { return validate_attention(call); }
  /// The problem of contiguous [batch, heads, tokens, dim] tensors described as {"op":
  /// "attention", "dtype" (default f16), "batch" (default 1), "heads" (default 1), "m", "n",
  /// "d", "dv" (default d), "bias_dtype" and "mask_dtype" ("none", the default, or a dtype),
  /// "mask_windows" (default 1), "causal" (default false)}, as describe() writes it.
  static Problem problem_from_json(const nlohmann::json& call);
  /// A config with nothing chosen: "auto" and "tile" (the one kernel) both mean that.
  static Config partial_config(const std::string& algorithm);
  static Key key_of(const Problem& problem) noexcept { return kjit::key_of(problem); }
  /// The bucket's largest problem count.
  static Problem planned(const Problem& problem) noexcept { return planned_attention(problem); }
  static nlohmann::ordered_json key_fields(const Key& key);
  static nlohmann::ordered_json describe(const Problem& problem);
  static double moved_bytes(const Problem& problem) noexcept;
  static bool tunes_alignment(const Problem&) noexcept { return true; }

  static Verdict can_implement(const Problem& problem, const DeviceProps& device, const Config& config);
  static Config complete(const Problem& problem, const DeviceProps& device, Config partial);
  static Config pick(const Problem& problem, const DeviceProps& device);
  static std::vector<Config> candidates(const Problem& problem, const DeviceProps& device);
  /// One warp a problem, one problem a block, one stage: the simplest way through every problem.
  static Config reference(const Problem& problem);

  static KernelSpec kernel_spec(const Problem& problem, const Config& config);
  static LaunchShape launch_shape(const Problem& problem, const Config& config, const DeviceProps& device);
  static void bind(Launchable&, const Config&, const ContextResources&) {}
  static void launch(const Launchable& launchable, const Call& call, CUstream stream);
};

}  // namespace kjit
