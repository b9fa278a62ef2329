// SPDX-License-Identifier: Apache-2.0
// OpTools written once over the op-family interface (runtime/ops/op_family.h).
#pragma once

#include <limits>

#include "runtime/op_tools.h"
#include "runtime/ops/call_fields.h"
#include "runtime/runtime_access.h"

namespace kjit {

template <typename Family>
class OpToolsFor : public OpTools {
 public:
  std::string name() const override { return Family::kName; }
  std::vector<std::string> ops() const override { return Family::ops(); }
  std::vector<std::string> fields() const override { return Family::fields(); }

  void check(const nlohmann::json& call) const override { problem_of(call); }

  std::string class_key(const nlohmann::json& call, const DeviceProps& device) const override {
    const auto planned = Family::planned(problem_of(call));
    return TuneRecords::key_text<Family>(device, Family::key_of(planned));
  }

  PlannedKernel plan(const nlohmann::json& call, const DeviceProps& device,
                     const std::string& algorithm) const override {
    const auto planned = Family::planned(problem_of(call));
    typename Family::Config config = Family::pick(planned, device);
    if (algorithm != "auto") {
      config = Family::complete(planned, device, Family::partial_config(algorithm));
      if (const Verdict verdict = Family::can_implement(planned, device, config); !verdict)
        throw Error(Status::kErrorInvalidArgument, "algorithm " + algorithm + ": " + verdict.reason);
    }
    PlannedKernel plan;
    plan.planned = Family::describe(planned);
    plan.config = config.to_string();
    plan.config_json = config.to_json();
    plan.spec = Family::kernel_spec(planned, config);
    plan.shape = Family::launch_shape(planned, config, device);
    return plan;
  }

  nlohmann::ordered_json prepare(Runtime& runtime, const nlohmann::json& call) const override {
    const auto report =
        RuntimeAccess::dispatcher(runtime).prepare<Family>(problem_of(call));
    return kernel_report_json(report, report.config.to_json());
  }

  TuneSummary tune(Runtime& runtime, const nlohmann::json& call, const TuneRequest& request) const override {
    Dispatcher& dispatcher = RuntimeAccess::dispatcher(runtime);
    TuneOptions<typename Family::Config> options;
    options.reuse_record = request.reuse_record;
    if (request.time_all) options.probe_cutoff = std::numeric_limits<double>::infinity();
    const auto report = dispatcher.tune<Family>(problem_of(call), options, nullptr);
    TuneSummary summary;
    if (request.save) summary.stored = dispatcher.record<Family>(report);
    summary.description = report.description;
    summary.device = report.device;
    summary.log_json = report.to_json();
    summary.seconds = report.seconds;
    summary.moved_bytes = report.moved_bytes;
    summary.phases = report.phases;
    for (const auto& c : report.candidates)
      summary.candidates.push_back({c.config.to_string(), c.status, c.timing, c.reused,
                                    c.config == report.winner, c.config == report.heuristic});
    return summary;
  }

 private:
  static typename Family::Problem problem_of(const nlohmann::json& call) {
    require_known_fields(call, Family::fields());
    return Family::problem_from_json(call);
  }
};

/// Registers a family's tools when the library loads; one line in the family's entry-point file.
template <typename Family>
struct OpToolsRegistration {
  OpToolsRegistration() {
    static const OpToolsFor<Family> tools;
    register_op_tools(tools);
  }
};

}  // namespace kjit

#define KJIT_REGISTER_OP_FAMILY(Family) \
  static const ::kjit::OpToolsRegistration<Family> kjit_registered_##Family

