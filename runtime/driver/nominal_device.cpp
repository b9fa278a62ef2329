// SPDX-License-Identifier: Apache-2.0
#include "runtime/driver/nominal_device.h"

#include <string>

namespace kjit {
namespace {

/// The properties that differ between the nominal GPUs.
struct NominalGpu {
  int sm_count;
  int max_smem_per_block;  ///< opt-in maximum, bytes
  int max_threads_per_sm;
  int l2_bytes;
};

constexpr NominalGpu kH100{132, 227 * 1024, 2048, 50 << 20};
constexpr NominalGpu kA100{108, 163 * 1024, 2048, 40 << 20};
constexpr NominalGpu kConsumer{108, 99 * 1024, 1536, 40 << 20};  // sm_86, sm_89
constexpr NominalGpu kOther{108, 99 * 1024, 2048, 40 << 20};

const NominalGpu& nominal_gpu(int arch) {
  if (arch >= 90) return kH100;
  if (arch == 80) return kA100;
  if (arch == 86 || arch == 89) return kConsumer;
  return kOther;
}

/// Shared memory the system takes from each block.
constexpr int kReservedSmemPerBlock = 1024;

}  // namespace

int nominal_sms_per_gpc(int arch) {
  if (arch >= 90) return 18;
  if (arch == 86 || arch == 89) return 12;
  return 16;
}

int clusters_of_16_at_once(int sm_count, int sms_per_gpc) {
  return sms_per_gpc > 0 ? sm_count / sms_per_gpc : 0;
}

DeviceProps nominal_device(int arch) {
  const NominalGpu& gpu = nominal_gpu(arch);
  DeviceProps props;
  props.arch = arch;
  props.name = "nominal sm_" + std::to_string(arch);
  props.sm_count = gpu.sm_count;
  props.max_smem_per_block = gpu.max_smem_per_block;
  props.reserved_smem_per_block = kReservedSmemPerBlock;
  props.max_smem_per_sm = props.max_smem_per_block + props.reserved_smem_per_block;
  props.max_threads_per_sm = gpu.max_threads_per_sm;
  props.l2_bytes = gpu.l2_bytes;
  props.sms_per_gpc = nominal_sms_per_gpc(arch);
  props.clusters_of_16_at_once = clusters_of_16_at_once(props.sm_count, props.sms_per_gpc);
  return props;
}

}  // namespace kjit
