// SPDX-License-Identifier: Apache-2.0
// The kernel report as JSON, for the tools and the C API's kjit_explain.
#include "runtime/op_tools.h"

namespace kjit {

nlohmann::ordered_json kernel_report_json(const KernelReportBase& report,
                                          const std::string& config_json) {
  return {{"kernel_key", report.kernel_key},
          {"kernel", report.name_expression},
          {"config", nlohmann::ordered_json::parse(config_json)},
          {"arch", report.arch},
          {"registers", report.registers},
          {"spill_bytes", report.spill_bytes},
          {"static_smem", report.static_smem},
          {"dynamic_smem", report.dynamic_smem},
          {"cubin_bytes", report.cubin_bytes},
          {"compile_ms", report.compile_ms}};
}

}  // namespace kjit
