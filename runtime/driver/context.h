// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include "runtime/driver/cuda_api.h"

namespace kjit {

/// What the dispatcher needs to know about the device behind a context.
struct DeviceProps {
  CUdevice device = 0;
  std::string name;
  int arch = 0;                 ///< e.g. 90 for sm_90
  int sm_count = 0;
  int max_smem_per_block = 0;   ///< opt-in maximum, bytes
  int max_smem_per_sm = 0;      ///< bytes, the blocks' reserved shared memory included
  int reserved_smem_per_block = 0;  ///< bytes the system takes from each block's share
  int max_threads_per_sm = 0;
  int l2_bytes = 0;
  std::size_t total_memory = 0;
  /// SMs of one GPC, the unit a thread-block cluster runs within: a cluster of more blocks than
  /// half a GPC's SMs takes a GPC to itself (18 on the H100; nominal_sms_per_gpc).
  int sms_per_gpc = 0;
  /// Clusters of 16 blocks, one an SM, that run at once: one a GPC (7 on the H100). From the
  /// occupancy API where the device's context is current (resident_clusters), else counted
  /// from the SMs and sms_per_gpc.
  int clusters_of_16_at_once = 0;
  /// Programmatic dependent launch works here, in streams and in graphs captured from them:
  /// sm_90 or later, and a driver of CUDA 12.3 or later (the first to capture it).
  bool dependent_launch = false;
};

/// Reads the properties of `device`.
DeviceProps query_device(CUdevice device);

/// The calling thread's current context; when there is none, device 0's primary context is
/// retained (once per process, released at exit by the driver) and made current, as the CUDA
/// runtime does, so kjit and CUDA-runtime applications (PyTorch) share one context.
CUcontext current_or_primary_context();

/// The properties of the device behind current_or_primary_context().
DeviceProps current_device_props();

/// "sm_90" for arch 90.
std::string arch_name(int arch);

}  // namespace kjit
