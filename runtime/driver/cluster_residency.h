// SPDX-License-Identifier: Apache-2.0
// How many thread-block clusters of a size a GPU runs at once, as the driver's occupancy API
// reports it: a cluster's blocks run within one GPC, so the answer depends on how the GPU's SMs
// fall into GPCs, which the driver does not report otherwise.
#pragma once

#include "runtime/driver/cuda_api.h"

namespace kjit {

/// Clusters of `blocks` blocks, one an SM, that `device` runs at once, asked of the occupancy API
/// for a probe kernel whose blocks each take an SM's shared memory (`max_smem_per_block`); once
/// per device and size. 0 when the device's context is not current or the driver cannot say.
int resident_clusters(CUdevice device, int blocks, int max_smem_per_block);

}  // namespace kjit
