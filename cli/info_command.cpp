// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <string>

#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "kjit/options.hpp"
#include "runtime/compiler/kernel_key.h"
#include "runtime/compiler/nvrtc.h"
#include "runtime/driver/context.h"

namespace kjit::cli {
namespace {

void print_gpus() {
  int count = 0;
  KJIT_CU(cuDeviceGetCount, &count);
  int driver = 0;
  KJIT_CU(cuDriverGetVersion, &driver);
  std::printf("driver:   CUDA %d.%d, %d GPU(s)\n", driver / 1000, driver % 1000 / 10, count);
  const bool dependent_launch = RuntimeOptions::from_environment().dependent_launch;
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    KJIT_CU(cuDeviceGet, &device, i);
    const DeviceProps p = query_device(device);
    std::printf("  gpu %d: %s, sm_%d, %d SMs, %.1f GiB, %d KB shared memory per block, %d MB L2, "
                "dependent launch %s\n",
                i, p.name.c_str(), p.arch, p.sm_count, p.total_memory / 1073741824.0,
                p.max_smem_per_block / 1024, p.l2_bytes >> 20,
                !p.dependent_launch ? "no (sm_90+ and a CUDA 12.3+ driver)"
                : dependent_launch  ? "on"
                                    : "off (KJIT_PDL=0)");
  }
}

void run_info() {
  std::printf("kjit:     %s\n", kjit_version());
  std::printf("toolkit:  CUDA %d.%d (headers)\n", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
  std::string archs;
  for (int arch : nvrtc_supported_archs()) archs += " sm_" + std::to_string(arch);
  std::printf("nvrtc:    %s, targets%s\n", nvrtc_version().c_str(), archs.c_str());
  if (!driver_available()) {
    try {
      cuda();
    } catch (const Error& e) {
      std::printf("driver:   none (%s)\n", e.what());
    }
    return;
  }
  print_gpus();
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* command = app.add_subcommand("info", "Toolkit, NVRTC and driver versions; each GPU");
  command->callback(run_info);
}

}  // namespace kjit::cli
