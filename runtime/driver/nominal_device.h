// SPDX-License-Identifier: Apache-2.0
// Device properties of a typical GPU of an arch, for planning kernels where no such GPU is
// present (`kjit precompile`, `kjit compile --arch`, the CPU tests), and the traits the driver
// does not report for a present one.
#pragma once

#include "runtime/driver/context.h"

namespace kjit {

/// Device properties of a typical GPU of arch `arch`: sm_90 and later an H100 SXM, sm_80 an
/// A100, sm_86 and sm_89 a large consumer GPU.
DeviceProps nominal_device(int arch);

/// SMs of one GPC on a GPU of arch `arch` (the driver does not report it).
int nominal_sms_per_gpc(int arch);

/// Clusters of 16 blocks, one an SM, that `sm_count` SMs in GPCs of `sms_per_gpc` hold at once:
/// one a GPC.
int clusters_of_16_at_once(int sm_count, int sms_per_gpc);

}  // namespace kjit
