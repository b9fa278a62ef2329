// SPDX-License-Identifier: Apache-2.0
#include "python/src/device_scope.h"

#include <array>
#include <atomic>
#include <mutex>
#include <string>

#include "kjit/error.hpp"
#include "runtime/driver/cuda_api.h"

namespace kjit::python {
namespace {

constexpr int kMaxDevices = 64;

/// Device `device`'s primary context, retained once per process (released by the driver at
/// exit, as the CUDA runtime does).
CUcontext primary_context(int device) {
  static std::array<std::atomic<CUcontext>, kMaxDevices> contexts{};
  static std::mutex mutex;
  if (device < 0 || device >= kMaxDevices)
    throw Error(Status::kErrorInvalidArgument, "device " + std::to_string(device) + " is out of range");
  if (CUcontext known = contexts[device].load(std::memory_order_acquire)) return known;
  std::lock_guard<std::mutex> guard(mutex);
  if (CUcontext known = contexts[device].load()) return known;
  int count = 0;
  KJIT_CU(cuDeviceGetCount, &count);
  if (device >= count)
    throw Error(Status::kErrorInvalidArgument, "device " + std::to_string(device) +
                                                   " does not exist (" + std::to_string(count) +
                                                   " CUDA devices)");
  CUdevice handle = 0;
  KJIT_CU(cuDeviceGet, &handle, device);
  CUcontext context = nullptr;
  KJIT_CU(cuDevicePrimaryCtxRetain, &context, handle);
  contexts[device].store(context, std::memory_order_release);
  return context;
}

}  // namespace

DeviceScope::DeviceScope(int device) {
  const CUcontext wanted = primary_context(device);
  KJIT_CU(cuCtxGetCurrent, &previous_);
  if (previous_ == wanted) return;
  KJIT_CU(cuCtxSetCurrent, wanted);
  switched_ = true;
}

DeviceScope::~DeviceScope() {
  if (switched_) cuda().cuCtxSetCurrent(previous_);
}

}  // namespace kjit::python
