// SPDX-License-Identifier: Apache-2.0
// Runs a call in the primary context of the array's device (the context PyTorch, CuPy and JAX
// use), and puts the thread's previous context back afterwards, as torch's device guard does.
#pragma once

#include <cuda.h>

namespace kjit::python {

class DeviceScope {
 public:
  /// Makes `device`'s primary context current unless it already is. Throws Error(kErrorNoDriver)
  /// without a driver, Error(kErrorInvalidArgument) for a device that does not exist.
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

}  // namespace kjit::python
