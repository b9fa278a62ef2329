// SPDX-License-Identifier: Apache-2.0
#include "runtime/compiler/kernel_compiler.h"

#include <algorithm>
#include <string>

#include "kjit/error.hpp"
#include "runtime/compiler/kernel_key.h"
#include "runtime/compiler/nvrtc.h"

namespace kjit {

namespace {

// The oldest target: the kernels use sm_80 instructions (bfloat16 conversions, L2 cache
// policies, packed 16-bit max), so an older one would fail deep in NVRTC's log instead.
constexpr int kMinArch = 80;

}  // namespace

std::vector<int> target_archs() {
  // NVRTC's list is fixed for the library's lifetime.
  static const std::vector<int> archs = [] {
    std::vector<int> supported;
    for (int arch : nvrtc_supported_archs())
      if (arch >= kMinArch) supported.push_back(arch);
    return supported;
  }();
  return archs;
}

void require_target_arch(int arch) {
  const std::vector<int> archs = target_archs();
  if (std::find(archs.begin(), archs.end(), arch) != archs.end()) return;
  std::string list;
  for (int supported : archs) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(supported);
  const std::string why = arch < kMinArch ? "kjit's kernels need sm_80 or newer"
                                          : "this NVRTC (" + nvrtc_version() + ") cannot target it";
  throw Error(Status::kErrorInvalidArgument,
              "arch sm_" + std::to_string(arch) + " is not supported: " + why + " (supported: " +
                  list + ")");
}

CompiledKernel compile_kernel(const KernelSpec& spec, int arch) {
  require_target_arch(arch);
  CompileRequest request;
  request.source = "#include \"" + spec.header + "\"\n";
  request.name_expressions = {spec.name_expression};
  request.arch = arch;
  CompileResult result = compile_with_nvrtc(request);

  CompiledKernel kernel;
  kernel.spec = spec;
  kernel.arch = arch;
  kernel.key_text = kernel_key_text(spec, arch);
  kernel.key_digest = kernel_key_digest(kernel.key_text);
  kernel.cubin = std::move(result.cubin);
  kernel.lowered_name = result.lowered_names.at(0);
  kernel.usage = parse_resource_usage(result.log, kernel.lowered_name);
  kernel.compile_ms = result.milliseconds;
  return kernel;
}

}  // namespace kjit
