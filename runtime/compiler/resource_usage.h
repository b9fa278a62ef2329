// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

namespace kjit {

/// What ptxas reported for one kernel.
struct ResourceUsage {
  int registers = 0;
  int spill_stores = 0;   ///< bytes
  int spill_loads = 0;    ///< bytes
  int stack_frame = 0;    ///< bytes
  int static_smem = 0;    ///< bytes
  bool found = false;     ///< false when the log holds no report for the kernel
};

/// Parses the `ptxas info` lines of an NVRTC log for the kernel with this lowered name.
ResourceUsage parse_resource_usage(const std::string& log, const std::string& lowered_name);

}  // namespace kjit
