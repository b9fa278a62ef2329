// SPDX-License-Identifier: Apache-2.0
// The row-wise ops (softmax, log_softmax, reduce_scale) as an op family (runtime/ops/op_family.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/config.hpp"
#include "kjit/types.hpp"
#include "runtime/compiler/kernel_spec.h"
#include "runtime/driver/context.h"
#include "runtime/launch/loaded_kernel.h"
#include "runtime/ops/op_family.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit {

/// One row-wise call as the runtime received it.
struct RowwiseCall {
  RowOp op = RowOp::kSoftmax;
  RowwiseArgs args;
  float* scale_out = nullptr;  ///< reduce_scale's optional max|x| per row
};

class RowwiseScratch;

struct RowwiseFamily {
  using Call = RowwiseCall;
  using Problem = RowwiseProblem;
  using Key = RowwiseKey;
  using KeyHash = RowwiseKeyHash;
  using Config = KernelConfig;
  using Scratch = RowwiseScratch;
  static constexpr const char* kName = "rowwise";

  /// The op names this family serves.
  static std::vector<std::string> ops() { return {"softmax", "log_softmax", "reduce_scale"}; }
  /// The fields problem_from_json reads.
  static std::vector<std::string> fields() { return {"op", "dtype", "out_dtype", "rows", "cols"}; }

  static Problem validate(const Call& call);
  /// The problem of a contiguous, aligned call described as {"op", "dtype", "out_dtype" (default: dtype),
  /// "rows" (default 1), "cols"}, as describe() writes it; errors name the field.
  static Problem problem_from_json(const nlohmann::json& call);
  /// A config with only the algorithm set ("auto", "warp", ...): complete() fills the rest.
  static Config partial_config(const std::string& algorithm) {
    return KernelConfig{parse_algorithm(algorithm)};
  }
  static Key key_of(const Problem& problem) noexcept;
  /// The rows bucket's largest row count: every call of a class is served by one choice.
  static Problem planned(const Problem& problem) noexcept;
  static nlohmann::ordered_json key_fields(const Key& key);
  static nlohmann::ordered_json describe(const Problem& problem);
  static double moved_bytes(const Problem& problem) noexcept;
  /// Tuning runs on contiguous, aligned buffers: it speaks for the widest alignment class only.
  static bool tunes_alignment(const Problem& problem) noexcept;

  static Verdict can_implement(const Problem& problem, const DeviceProps& device,
                               const Config& config);
  static Config complete(const Problem& problem, const DeviceProps& device, Config partial);
  static Config pick(const Problem& problem, const DeviceProps& device);
  static std::vector<Config> candidates(const Problem& problem, const DeviceProps& device);
  /// One block a row, reading it twice: the simplest kernel that runs every problem.
  static Config reference(const Problem& problem);

  static KernelSpec kernel_spec(const Problem& problem, const Config& config);
  static LaunchShape launch_shape(const Problem& problem, const Config& config,
                                  const DeviceProps& device);
  static void bind(Launchable& launchable, const Config& config, const ContextResources& context);
  /// Launches over the call's rows; no allocation, no synchronization (but for the ring's
  /// row-claim counters, allocated once a context by its first ring launch).
  static void launch(const Launchable& launchable, const Call& call, CUstream stream);
};

}  // namespace kjit
