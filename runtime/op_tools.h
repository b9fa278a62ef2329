// SPDX-License-Identifier: Apache-2.0
// Every op family seen through one type-erased interface, for the tools that work from a call's
// description instead of tensors (the CLI's compile, precompile, tune and inspect). Calls are
// JSON objects such as {"op": "softmax", "dtype": "bf16", "rows": 64, "cols": 4096}, with each
// family's fields (op_family.h, problem_from_json).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjit/runtime.hpp"
#include "kjit/tuning.hpp"
#include "runtime/compiler/kernel_spec.h"
#include "runtime/driver/context.h"
#include "runtime/launch/launch_shape.h"

namespace kjit {

/// The kernel the heuristics (or a forced algorithm) pick for a call on a device.
struct PlannedKernel {
  nlohmann::ordered_json planned;  ///< the problem the class is planned for (rows bucketed, ...)
  std::string config;              ///< e.g. "warp pack=4 threads=128 group=32 cluster=1"
  std::string config_json;
  KernelSpec spec;
  LaunchShape shape;
};

/// How a tool tunes a call's class.
struct TuneRequest {
  bool reuse_record = false;  ///< candidates a stored record timed keep their times
  bool save = false;          ///< the winner becomes the class's record
  /// Every candidate timed in full: no one-sample probe drops the slow ones (TuneOptions::probe_cutoff),
  /// whose first sample, without warm-up, can be the slowest.
  bool time_all = false;
};

/// A tuning's outcome with the configs as text.
struct TuneSummary {
  struct Candidate {
    std::string config;
    std::string status;
    Timing timing;
    bool reused = false;
    bool winner = false;
    bool heuristic = false;
  };
  std::string description;
  std::string device;
  std::string log_json;  ///< TuneReport::to_json
  double seconds = 0.0;
  double moved_bytes = 0.0;
  TunePhases phases;
  std::vector<Candidate> candidates;  ///< in the fixed candidate order
  bool stored = false;                ///< the record went to disk (with `save`)
};

class OpTools {
 public:
  virtual ~OpTools() = default;
  /// The family's name (op_family.h, kName).
  virtual std::string name() const = 0;
  /// The op names the family serves.
  virtual std::vector<std::string> ops() const = 0;
  /// The call fields the family reads.
  virtual std::vector<std::string> fields() const = 0;
  /// Throws Error(kErrorInvalidArgument) naming the field when the call is not a valid one.
  virtual void check(const nlohmann::json& call) const = 0;
  /// The call's tuning class on `device` (one tuning serves every call of a class).
  virtual std::string class_key(const nlohmann::json& call, const DeviceProps& device) const = 0;
  /// `algorithm` "auto": the heuristics' pick; else that algorithm, completed for the call.
  /// Throws Error naming the field or the algorithm when the call or the choice is invalid.
  virtual PlannedKernel plan(const nlohmann::json& call, const DeviceProps& device,
                             const std::string& algorithm) const = 0;
  /// Compiles and loads on the current GPU the kernel the call's first call would use (tuning its
  /// class first with KJIT_TUNE=first-use), launching nothing; returns kernel_report_json.
  virtual nlohmann::ordered_json prepare(Runtime& runtime, const nlohmann::json& call) const = 0;
  /// Tunes the call's class on the current GPU as `request` says.
  virtual TuneSummary tune(Runtime& runtime, const nlohmann::json& call, const TuneRequest& request) const = 0;
};

/// A kernel report as JSON: kernel_key, kernel (the name expression), config (`config_json`
/// parsed), arch, registers, spill_bytes, static_smem, dynamic_smem, cubin_bytes, compile_ms.
nlohmann::ordered_json kernel_report_json(const KernelReportBase& report,
                                          const std::string& config_json);

/// Adds a family's tools to the registry (KJIT_REGISTER_OP_FAMILY in runtime/op_tools_for.h
/// does it when the library loads).
void register_op_tools(const OpTools& tools);
/// Every registered family's tools, ordered by family name.
std::vector<const OpTools*> all_op_tools();
/// The tools of the family serving `op`; throws Error(kErrorInvalidArgument) naming `op` and the
/// known ones.
const OpTools& op_tools(const std::string& op);
/// Every op name, comma-separated (for help texts and messages).
std::string known_ops();

}  // namespace kjit
