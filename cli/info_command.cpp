// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/shapes.h"
#include "kjit/error.hpp"
#include "kjit/options.hpp"
#include "runtime/compiler/kernel_key.h"
#include "runtime/compiler/nvrtc.h"
#include "runtime/driver/context.h"

namespace kjit::cli {
namespace {

using nlohmann::ordered_json;

std::string dependent_launch_text(const DeviceProps& p, bool enabled) {
  if (!p.dependent_launch) return "no (sm_90+ and a CUDA 12.3+ driver)";
  return enabled ? "on" : "off (KJIT_PDL=0)";
}

/// The driver and each GPU; {"driver": null, "no_driver": why} where there is none.
ordered_json driver_fields() {
  if (!driver_available()) {
    try {
      cuda();
    } catch (const Error& e) {
      return {{"driver", nullptr}, {"no_driver", e.what()}, {"gpus", ordered_json::array()}};
    }
  }
  int count = 0, driver = 0;
  KJIT_CU(cuDeviceGetCount, &count);
  KJIT_CU(cuDriverGetVersion, &driver);
  const bool enabled = RuntimeOptions::from_environment().dependent_launch;
  ordered_json gpus = ordered_json::array();
  for (int i = 0; i < count; ++i) {
    CUdevice device = 0;
    KJIT_CU(cuDeviceGet, &device, i);
    const DeviceProps p = query_device(device);
    gpus.push_back({{"index", i}, {"name", p.name}, {"arch", "sm_" + std::to_string(p.arch)},
                    {"sms", p.sm_count}, {"memory_bytes", p.total_memory},
                    {"smem_per_block_bytes", p.max_smem_per_block}, {"l2_bytes", p.l2_bytes},
                    {"dependent_launch", dependent_launch_text(p, enabled)}});
  }
  return {{"driver", format("%d.%d", driver / 1000, driver % 1000 / 10)}, {"gpus", gpus}};
}

void print_text(const ordered_json& info) {
  std::printf("kjit:     %s\n", info["kjit"].get<std::string>().c_str());
  std::printf("toolkit:  CUDA %s (headers)\n", info["toolkit"].get<std::string>().c_str());
  std::string archs;
  for (const auto& arch : info["archs"]) archs += " " + arch.get<std::string>();
  std::printf("nvrtc:    %s, targets%s\n", info["nvrtc"].get<std::string>().c_str(), archs.c_str());
  if (info["driver"].is_null()) {
    std::printf("driver:   none (%s)\n", info["no_driver"].get<std::string>().c_str());
    return;
  }
  std::printf("driver:   CUDA %s, %zu GPU(s)\n", info["driver"].get<std::string>().c_str(),
              info["gpus"].size());
  for (const auto& g : info["gpus"])
    std::printf("  gpu %d: %s, %s, %d SMs, %.1f GiB, %d KB shared memory per block, %d MB L2, "
                "dependent launch %s\n",
                g["index"].get<int>(), g["name"].get<std::string>().c_str(),
                g["arch"].get<std::string>().c_str(), g["sms"].get<int>(),
                g["memory_bytes"].get<double>() / 1073741824.0,
                g["smem_per_block_bytes"].get<int>() / 1024, g["l2_bytes"].get<int>() >> 20,
                g["dependent_launch"].get<std::string>().c_str());
}

void run_info(bool json) {
  ordered_json info = {{"kjit", kjit_version()},
                       {"toolkit", format("%d.%d", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10)},
                       {"nvrtc", nvrtc_version()}};
  ordered_json archs = ordered_json::array();
  for (int arch : nvrtc_supported_archs()) archs.push_back("sm_" + std::to_string(arch));
  info["archs"] = archs;
  info.update(driver_fields());
  if (json) {
    std::printf("%s\n", info.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    print_text(info);
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  auto* command = app.add_subcommand("info", "Toolkit, NVRTC and driver versions; each GPU");
  command->add_flag("--json", *json, "print JSON");
  command->callback([json] { run_info(*json); });
}

}  // namespace kjit::cli
