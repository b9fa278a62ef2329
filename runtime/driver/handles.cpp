// SPDX-License-Identifier: Apache-2.0
#include "runtime/driver/handles.h"

namespace kjit {

Module load_module(const void* image) {
  CUmodule module = nullptr;
  KJIT_CU(cuModuleLoadData, &module, image);
  return Module(module);
}

DeviceMemory allocate_device(std::size_t bytes) {
  CUdeviceptr pointer = 0;
  KJIT_CU(cuMemAlloc, &pointer, bytes);
  return DeviceMemory(pointer);
}

Stream create_stream() {
  CUstream stream = nullptr;
  KJIT_CU(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  return Stream(stream);
}

Event create_event() {
  CUevent event = nullptr;
  KJIT_CU(cuEventCreate, &event, CU_EVENT_DEFAULT);
  return Event(event);
}

}  // namespace kjit
