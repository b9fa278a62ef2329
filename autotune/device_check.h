// SPDX-License-Identifier: Apache-2.0
// The tuner's output check run on the GPU: a candidate's output is compared with the reference
// kernel's where both already are, and only the verdict (and, when wrong, the two values of the
// first bad element) comes back to the host.
#pragma once

#include <cstddef>
#include <string>

#include "kjit/types.hpp"
#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"
#include "runtime/launch/loaded_kernel.h"

namespace kjit {

class DeviceOutputCheck {
 public:
  /// Loads the comparison kernel for `out`, compiled once per process (in memory, not cached on
/// disk).
  DeviceOutputCheck(DType out, const DeviceProps& device);
  ~DeviceOutputCheck();

  /// Empty when got[0, elements) agrees with reference[0, elements) to the output type's
  /// rounding (see compare_outputs in output_check.h); else which element differs and how.
  std::string compare(CUdeviceptr got, CUdeviceptr reference, std::size_t elements,
                      CUstream stream) const;

 private:
  DType out_;
  Launchable kernel_;
  int grid_;
  DeviceMemory first_bad_;
};

}  // namespace kjit
