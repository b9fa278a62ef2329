// SPDX-License-Identifier: Apache-2.0
#include "runtime/driver/context.h"

#include <mutex>

#include "runtime/driver/cluster_residency.h"
#include "runtime/driver/nominal_device.h"

namespace kjit {

DeviceProps query_device(CUdevice device) {
  DeviceProps props;
  props.device = device;
  char name[256] = {};
  KJIT_CU(cuDeviceGetName, name, static_cast<int>(sizeof(name)), device);
  props.name = name;
  auto attribute = [device](CUdevice_attribute which) {
    int value = 0;
    KJIT_CU(cuDeviceGetAttribute, &value, which, device);
    return value;
  };
  props.arch = 10 * attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) +
               attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  props.sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  props.max_smem_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  props.max_smem_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
  props.reserved_smem_per_block = attribute(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
  props.max_threads_per_sm = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
  props.l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
  KJIT_CU(cuDeviceTotalMem, &props.total_memory, device);
  props.sms_per_gpc = nominal_sms_per_gpc(props.arch);
  // Where the device runs clusters, the occupancy API knows how its SMs fall into GPCs.
  const int measured = props.arch >= 90 ? resident_clusters(device, 16, props.max_smem_per_block) : 0;
  props.clusters_of_16_at_once =
      measured > 0 ? measured : clusters_of_16_at_once(props.sm_count, props.sms_per_gpc);
  int driver_version = 0;
  KJIT_CU(cuDriverGetVersion, &driver_version);
  props.dependent_launch = props.arch >= 90 && driver_version >= 12030;
  return props;
}

CUcontext current_or_primary_context() {
  CUcontext context = nullptr;
  KJIT_CU(cuCtxGetCurrent, &context);
  if (context != nullptr) return context;
  static std::once_flag retained;
  static CUcontext primary = nullptr;
  std::call_once(retained, [] {
    CUdevice device = 0;
    KJIT_CU(cuDeviceGet, &device, 0);
    KJIT_CU(cuDevicePrimaryCtxRetain, &primary, device);
  });
  KJIT_CU(cuCtxSetCurrent, primary);
  return primary;
}

std::string arch_name(int arch) { return "sm_" + std::to_string(arch); }

DeviceProps current_device_props() {
  current_or_primary_context();
  CUdevice device = 0;
  KJIT_CU(cuCtxGetDevice, &device);
  return query_device(device);
}

}  // namespace kjit
