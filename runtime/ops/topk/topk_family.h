// SPDX-License-Identifier: Apache-2.0
// Fused softmax + top-K as an op family (runtime/ops/op_family.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/config.hpp"
#include "kjit/types.hpp"
#include "runtime/compiler/kernel_spec.h"
#include "runtime/driver/context.h"
#include "runtime/launch/loaded_kernel.h"
#include "runtime/ops/op_family.h"
#include "runtime/ops/topk/topk_problem.h"

namespace kjit {

class TopkScratch;

struct TopkFamily {
  using Call = TopkArgs;
  using Problem = TopkProblem;
  using Key = TopkDispatchKey;
  using KeyHash = TopkDispatchKeyHash;
  using Config = TopkConfig;
  using Scratch = TopkScratch;
  static constexpr const char* kName = "softmax_topk";

  static std::vector<std::string> ops() { return {"softmax_topk"}; }
  static std::vector<std::string> fields() { return {"op", "dtype", "index_dtype", "rows", "cols", "k"}; }

  static Problem validate(const Call& call) { return validate_topk(call); }
  /// The problem of a contiguous, aligned call described as {"op", "dtype", "index_dtype" (default
  /// i64), "rows" (default 1), "cols", "k"}, as describe() writes it; errors name the field.
  static Problem problem_from_json(const nlohmann::json& call);
  /// A config with only the algorithm set ("auto", "stream", "resident").
  static Config partial_config(const std::string& algorithm) {
    TopkConfig config;
    config.algorithm = parse_topk_algorithm(algorithm);
    return config;
  }
  static Key key_of(const Problem& problem) noexcept { return kjit::key_of(problem); }
  /// The K bucket's largest k (at most cols) and the rows bucket's largest row count.
  static Problem planned(const Problem& problem) noexcept { return planned_topk(problem); }
  static nlohmann::ordered_json key_fields(const Key& key);
  static nlohmann::ordered_json describe(const Problem& problem);
  static double moved_bytes(const Problem& problem) noexcept;
  static bool tunes_alignment(const Problem& problem) noexcept;

  static Verdict can_implement(const Problem& problem, const DeviceProps& device,
                               const Config& config);
  static Config complete(const Problem& problem, const DeviceProps& device, Config partial);
  static Config pick(const Problem& problem, const DeviceProps& device);
  static std::vector<Config> candidates(const Problem& problem, const DeviceProps& device);
  /// The stream kernel with one block a row: the simplest way through every problem.
  static Config reference(const Problem& problem);

  static KernelSpec kernel_spec(const Problem& problem, const Config& config);
  static LaunchShape launch_shape(const Problem& problem, const Config& config,
                                  const DeviceProps& device);
  static void bind(Launchable&, const Config&, const ContextResources&) {}
  /// Launches in pieces of at most topk_rows_per_launch rows (one cluster a row).
  static void launch(const Launchable& launchable, const Call& call, CUstream stream);
};

}  // namespace kjit
