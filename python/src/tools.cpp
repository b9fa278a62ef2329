// SPDX-License-Identifier: Apache-2.0
// The tools that work from a call's description, no arrays and, given an arch, no GPU: explain
// (what the heuristics pick), compile (and its resource report), precompile (a spec into a cache
// folder), info (versions, devices). Results travel as JSON text; kjit/_tools.py parses them.
#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nlohmann/json.hpp>

#include "cli/shapes.h"
#include "cli/spec_file.h"
#include "kjit/error.hpp"
#include "kjit/kjit.h"
#include "python/src/call_json.h"
#include "python/src/errors.h"
#include "python/src/log_forwarding.h"
#include "python/src/precompile.h"
#include "python/src/tools.h"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/compiler/nvrtc.h"
#include "runtime/driver/cuda_api.h"
#include "runtime/op_tools.h"

namespace nb = nanobind;
using nlohmann::ordered_json;

namespace kjit::python {
namespace {

/// "sm_90" -> 90, checked against this NVRTC's targets; "" -> 0 (this GPU).
int arch_of(const std::string& text, const char* argument) {
  if (text.empty()) return 0;
  const int arch = cli::parse_arch(text, argument);
  for (int supported : nvrtc_supported_archs())
    if (supported == arch) return arch;
  reject(argument, text + " is not a target of this NVRTC (" + nvrtc_version() + ")");
}

DeviceProps device_for(const std::string& arch, const char* argument) {
  const int target = arch_of(arch, argument);
  bool on_gpu = false;
  try {
    return cli::target_device(target, &on_gpu);
  } catch (const Error& e) {
    if (e.status() != Status::kErrorInvalidArgument) throw;
    reject(argument, "no GPU here; name a target such as 'sm_90'");
  }
}

ordered_json plan_json(const PlannedKernel& plan, const DeviceProps& device) {
  return {{"planned", plan.planned},
          {"config", ordered_json::parse(plan.config_json)},
          {"config_text", plan.config},
          {"kernel", plan.spec.name_expression},
          {"source", plan.spec.header},
          {"arch", "sm_" + std::to_string(device.arch)},
          {"device", device.name},
          {"block", plan.shape.block},
          {"cluster", plan.shape.cluster},
          {"dynamic_smem", plan.shape.dynamic_smem},
          {"persistent", plan.shape.persistent}};
}

std::string explain(const std::string& call_text, const std::string& arch,
                    const std::string& algorithm) {
  LogFlush flush;
  const ordered_json call = parse_call(call_text);
  const DeviceProps device = device_for(arch, "arch");
  return plan_json(op_tools(call["op"].get<std::string>()).plan(call, device, algorithm), device)
      .dump();
}

std::string compile(const std::string& call_text, const std::string& arch,
                    const std::string& algorithm) {
  LogFlush flush;
  const ordered_json call = parse_call(call_text);
  const DeviceProps device = device_for(arch, "arch");
  const PlannedKernel plan = op_tools(call["op"].get<std::string>()).plan(call, device, algorithm);
  nb::gil_scoped_release unlocked;
  const CompiledKernel kernel = compile_kernel(plan.spec, device.arch);
  ordered_json out = plan_json(plan, device);
  out["kernel_key"] = kernel.key_digest;
  out["registers"] = kernel.usage.registers;
  out["static_smem"] = kernel.usage.static_smem;
  out["spill_bytes"] = kernel.usage.spill_stores + kernel.usage.spill_loads;
  out["cubin_bytes"] = kernel.cubin.size();
  out["compile_ms"] = kernel.compile_ms;
  return out.dump();
}

std::string precompile_spec(const std::string& spec_text, const std::vector<std::string>& archs,
                            const std::string& cache_dir, unsigned jobs) {
  LogFlush flush;
  const std::vector<cli::SpecCall> calls = cli::parse_spec(spec_text, "spec");
  std::vector<int> targets;
  for (const std::string& arch : archs) targets.push_back(arch_of(arch, "archs"));
  if (targets.empty()) targets.push_back(device_for("", "archs").arch);
  EnvSettings settings = RuntimeOptions::from_environment();
  if (!cache_dir.empty()) settings.cache_dir = cache_dir;
  if (settings.cache_dir.empty())
    reject("cache_dir", "no cache folder (KJIT_CACHE_DIR, XDG_CACHE_HOME and HOME are unset)");
  settings.disk_cache = true;
  settings.jit = true;  // filling the cache is the point, whatever KJIT_JIT says
  settings.cache_bundle.clear();
  const unsigned threads = jobs > 0 ? jobs : std::max(1u, std::thread::hardware_concurrency());
  nb::gil_scoped_release unlocked;
  return precompile(calls, targets, settings, threads).dump();
}

std::string info() {
  LogFlush flush;
  ordered_json out = {{"version", ::kjit_version()}, {"nvrtc", nvrtc_version()}};
  ordered_json archs = ordered_json::array();
  for (int arch : nvrtc_supported_archs()) archs.push_back("sm_" + std::to_string(arch));
  out["archs"] = archs;
  ordered_json gpus = ordered_json::array();
  out["driver"] = nullptr;
  try {
    int driver = 0, count = 0;
    KJIT_CU(cuDriverGetVersion, &driver);
    KJIT_CU(cuDeviceGetCount, &count);
    out["driver"] = std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
    for (int i = 0; i < count; ++i) {
      CUdevice device = 0;
      KJIT_CU(cuDeviceGet, &device, i);
      const DeviceProps p = query_device(device);
      gpus.push_back({{"index", i}, {"name", p.name}, {"arch", "sm_" + std::to_string(p.arch)},
                      {"sms", p.sm_count}, {"memory_bytes", p.total_memory}});
    }
  } catch (const Error& e) {
    if (e.status() != Status::kErrorNoDriver) throw;
    out["no_driver"] = e.what();
  }
  out["gpus"] = gpus;
  return out.dump();
}

}  // namespace

void bind_tools(nb::module_& m) {
  m.def("_explain", &explain, nb::arg("call"), nb::arg("arch"), nb::arg("algorithm"));
  m.def("_compile", &compile, nb::arg("call"), nb::arg("arch"), nb::arg("algorithm"));
  m.def("_precompile", &precompile_spec, nb::arg("spec"), nb::arg("archs"), nb::arg("cache_dir"),
        nb::arg("jobs"));
  m.def("_info", &info);
  m.def("version", [] { return std::string(::kjit_version()); },
        "The loaded library's version (kjit_version()).");
}

}  // namespace kjit::python
